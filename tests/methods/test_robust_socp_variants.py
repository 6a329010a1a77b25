"""robust_socp variants: MM-MC (4) with a full covariance matrix per point (both solver paths),
and ν by the paper's bisection (section 2.1.1) as a selectable method."""

import numpy as np
import pytest

from safeclf.errors import DataError
from safeclf.methods.robust_socp import RobustSOCPClassifier, Uncertainty
from safeclf.methods.robust_socp.clarabel_path import solve_clarabel
from safeclf.methods.robust_socp.cvxpy_model import solve_cvxpy
from safeclf.methods.robust_socp.formulations import (
    covariance_root,
    kappa_chebyshev,
    problem_data,
)
from safeclf.methods.robust_socp.nu import nu, nu_bisection


def correlated_problem(m=60, n=3, seed=0, rho=0.8):
    """Points with exact means (the MM-MC information), per-entry supports and variances, and
    a covariance matrix per point with correlation ``rho`` between features 0 and 1."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    mu = y[:, None] * 1.0 + rng.normal(size=(m, n))
    s = rng.uniform(0.3, 0.9, (m, n))
    var = (s / 2) ** 2
    unc = Uncertainty.from_moments(mu - s, mu + s, mu, mu**2 + var)
    sd = np.sqrt(unc.variance())
    corr = np.eye(n)
    corr[0, 1] = corr[1, 0] = rho
    cov = sd[:, :, None] * corr[None] * sd[:, None, :]
    return unc, mu, y, cov


def test_covariance_root_squares_back_and_is_symmetric():
    _, _, _, cov = correlated_problem()
    R = covariance_root(cov, cov.shape[:2])
    assert np.allclose(R @ R, cov, atol=1e-12)
    assert np.allclose(R, np.swapaxes(R, 1, 2))


@pytest.mark.parametrize("solve", [solve_cvxpy, solve_clarabel])
def test_full_covariance_equals_the_diagonal_formulation_on_a_diagonal_covariance(solve):
    unc, X, y, _ = correlated_problem()
    diag = problem_data("MM-MC", unc, X, y, 0.1)
    full = problem_data("MM-MC", unc, X, y, 0.1, covariance=np.stack(
        [np.diag(v) for v in unc.variance()]))
    assert full.D.shape == (60, 3, 3) and diag.D.shape == (60, 3)
    assert np.allclose(np.diagonal(full.D, axis1=1, axis2=2), diag.D)
    a, b = solve(diag, 2.0), solve(full, 2.0)
    assert abs(a.objective - b.objective) <= 1e-6 * abs(a.objective)
    assert np.allclose(a.w, b.w, atol=1e-4) and abs(a.b - b.b) <= 1e-4


def test_full_covariance_differs_on_a_correlated_covariance_and_both_paths_agree():
    unc, X, y, cov = correlated_problem()
    diag = solve_clarabel(problem_data("MM-MC", unc, X, y, 0.1), 2.0)
    data = problem_data("MM-MC", unc, X, y, 0.1, covariance=cov)
    a, b = solve_cvxpy(data, 2.0), solve_clarabel(data, 2.0)
    assert abs(a.objective - b.objective) <= 1e-6 * abs(a.objective)
    assert np.allclose(a.w, b.w, atol=1e-4)
    # correlation 0.8 changes every point's cone: a different optimum (far beyond 1e-6)
    assert abs(a.objective - diag.objective) > 1e-3 * abs(diag.objective)
    assert np.linalg.norm(a.w - diag.w) > 1e-2
    # eq. (4) with the full Σᵢ holds at every point: y(wᵀµ − b) ≥ 1 − ξ + κ_c √(wᵀΣw)
    lhs = y * (X @ b.w - b.b)
    rhs = 1 - b.xi + kappa_chebyshev(0.1) * np.sqrt(np.einsum("i,mij,j->m", b.w, cov, b.w))
    assert np.all(lhs >= rhs - 1e-6)


def test_full_covariance_through_the_working_set_rounds(monkeypatch):
    import safeclf.methods.robust_socp.clarabel_path as fast

    monkeypatch.setattr(fast, "FIRST", 15)
    unc, X, y, cov = correlated_problem(m=120, seed=2, rho=-0.6)
    data = problem_data("MM-MC", unc, X, y, 0.1, covariance=cov)
    got, ref = fast.solve_clarabel(data, 1.0), solve_cvxpy(data, 1.0)
    assert abs(got.objective - ref.objective) <= 1e-6 * ref.objective
    assert np.allclose(got.w, ref.w, atol=1e-4)


def test_estimator_takes_a_covariance_for_mm_mc_only():
    unc, X, y, cov = correlated_problem()
    est = RobustSOCPClassifier("MM-MC", epsilon=0.1, n_monte_carlo=0)
    w_diag = est.fit(X, y, uncertainty=unc).coef_.copy()
    w_full = est.fit(X, y, uncertainty=unc, covariance=cov).coef_
    assert np.linalg.norm(w_full - w_diag) > 1e-2
    shared = est.fit(X, y, uncertainty=unc, covariance=np.eye(3) * 0.04).coef_
    assert shared.shape == (3,)
    with pytest.raises(DataError, match="covariance is used by MM-MC only"):
        RobustSOCPClassifier("MM-SBMV").fit(X, y, uncertainty=unc, covariance=cov)
    bad = cov.copy()
    bad[4] = -np.eye(3)
    with pytest.raises(DataError, match="covariance of point 4 is not positive semi-definite"):
        est.fit(X, y, uncertainty=unc, covariance=bad)
    with pytest.raises(DataError, match=r"covariance must have shape \(3, 3\) or \(60, 3, 3\)"):
        est.fit(X, y, uncertainty=unc, covariance=np.eye(2))


# -- ν by the paper's bisection (section 2.1.1) ------------------------------------------------
def _triples(n, seed):
    rng = np.random.default_rng(seed)
    sg = rng.uniform(0.02, 1.0, n)
    m = np.sort(rng.uniform(-1, 1, (n, 2)), axis=1) * sg[:, None]
    edges = np.array([[-0.3, 0.3, 0.3], [0.54, 0.68, 0.735], [0.0, 0.0, 1.0], [-1.0, 1.0, 1.0],
                      [0.5, 0.5, 0.5], [0.2, 0.2, 0.9], [-0.9, -0.9, 0.95], [0.0, 0.0, 0.0]])
    return np.vstack([np.column_stack([m, sg]), edges]).T


def test_bisection_agrees_with_the_sup_computation():
    lo, hi, sg = _triples(60, seed=7)
    tol = 1e-7
    a, b = nu(lo, hi, sg), nu_bisection(lo, hi, sg, tol=tol)
    # the bisection stops with k_u − k_l ≤ tol and returns k_u ≥ ν; the sup computation is
    # within 1e-13 of the definition; the golden-section searches bracket to ~4e-9
    assert np.all(b - a <= tol + 1e-12)
    assert np.all(b - a >= -1e-8)
    # the Claim's bracket: √(σ̂² − µ̂²_min) ≤ ν ≤ 1
    mu_min = np.minimum(np.abs(lo), np.abs(hi))
    assert np.all(b >= np.sqrt(np.maximum(sg**2 - mu_min**2, 0)) - 1e-12) and np.all(b <= 1)


def test_bisection_tolerance_is_honoured():
    lo, hi, sg = _triples(10, seed=3)
    coarse = nu_bisection(lo, hi, sg, tol=1e-3)
    exact = nu(lo, hi, sg)
    assert np.all(coarse >= exact - 1e-8) and np.all(coarse - exact <= 1e-3 + 1e-12)
    assert np.any(coarse - exact > 1e-6)  # the coarse stop is visible


def test_estimator_nu_method_bisection_reaches_the_same_model():
    rng = np.random.default_rng(4)
    m, n = 40, 2
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    mu = y[:, None] * 1.5 + rng.normal(size=(m, n))
    s = np.full((m, n), 0.6)
    lo, hi = mu - 0.1, mu + 0.05
    unc = Uncertainty.from_bounds(mu - s, mu + s, lo, hi, np.maximum(lo**2, hi**2) + 0.05)
    common = dict(formulation="MM-SBMV", epsilon=0.1, n_monte_carlo=0)
    a = RobustSOCPClassifier(**common).fit(mu, y, uncertainty=unc)
    b = RobustSOCPClassifier(nu_method="bisection", **common).fit(mu, y, uncertainty=unc)
    assert np.allclose(a.coef_, b.coef_, atol=1e-5) and abs(a.intercept_ - b.intercept_) < 1e-5
    with pytest.raises(ValueError, match="nu_method"):
        RobustSOCPClassifier(nu_method="grid", **common).fit(mu, y, uncertainty=unc)


@pytest.mark.parametrize("a,shape", [(2.0, (40, 30, 5)), (0.5, (1000, 7)), (0.3, (50,))])
def test_truncated_normal_draws_are_plain_rejections_of_one_stream(a, shape):
    """The Monte-Carlo checks' truncated normal: every draw within ±a, and the same numbers
    as the textbook rejection loop on the same stream (redraw every rejected entry, in order,
    until none is left), which the faster loop only re-examines more selectively."""
    from safeclf.data.uncertainty import truncated_normal

    def textbook(rng):
        z = rng.standard_normal(shape)
        bad = np.abs(z) > a
        while bad.any():
            z[bad] = rng.standard_normal(int(bad.sum()))
            bad = np.abs(z) > a
        return z

    z = truncated_normal(a, shape, np.random.default_rng(7))
    assert z.shape == shape and np.all(np.abs(z) <= a)
    assert np.array_equal(z, textbook(np.random.default_rng(7)))
    # a tight bound rejects most first draws: the law is not the plain normal's
    assert abs(float(np.std(z)) - 1.0) > 0.1

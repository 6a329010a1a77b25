"""robust_socp: uncertainty model, formulations (both solver paths), test-time evaluation,
Monte-Carlo check, estimator contract, loaders."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.data.task import Task
from safeclf.datasets.uncertain import load_breast_cancer_intervals, load_uncertain_synthetic
from safeclf.errors import DataError
from safeclf.methods.robust_socp import FORMULATIONS, RobustSOCPClassifier, Uncertainty, plugin
from safeclf.methods.robust_socp.clarabel_path import conic_problem, solve_clarabel
from safeclf.methods.robust_socp.cvxpy_model import solve_cvxpy
from safeclf.methods.robust_socp.evaluation import (
    SEARCH_MEANS,
    SEARCH_SHAPES,
    SEARCH_VARIANCES,
    radii,
    searched_law,
    support_function,
)
from safeclf.methods.robust_socp.formulations import problem_data


def small_problem(m=40, n=3, seed=0, mixed=False):
    """Mean bounds, second-moment bounds, and a few exact (zero-width) entries; ``mixed``
    draws each entry's spread so that the support box cuts some ellipsoids and not others."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    mu = y[:, None] * 1.2 + rng.normal(size=(m, n))
    s = rng.uniform(0.2, 0.8, (m, n))
    s[rng.random((m, n)) < 0.1] = 0.0
    lo, hi = mu - 0.2 * s, mu + 0.1 * s
    spread = rng.uniform(0.02, 0.6, (m, n)) if mixed else np.sqrt(1 / 3)
    unc = Uncertainty.from_bounds(mu - s, mu + s, lo, hi,
                                  np.maximum(lo**2, hi**2) + (spread * s) ** 2)
    X = mu + rng.uniform(-1, 1, (m, n)) * s
    return unc, X, y


# -- uncertainty model ------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    (dict(lower=lambda a: a.__setitem__((2, 1), 9.0)), "point 2, feature 1 has lower > upper"),
    (dict(mean_lo=lambda a: a.__setitem__((3, 0), -9.0)), "point 3, feature 0 has mean_lo outside"),
    (dict(second_moment=lambda a: a.__setitem__((1, 2), 0.0)),
     "point 1, feature 2 has a second_moment below the squared mean"),
])
def test_inconsistent_information_names_point_and_feature(change, message):
    unc, _, _ = small_problem()
    rows = {k: v.copy() for k, v in unc.to_rows().items()}
    rows["mean_lo"] = np.maximum(rows["mean_lo"], 0.5)  # nonzero means for the moment check
    rows["mean_hi"] = np.maximum(rows["mean_hi"], rows["mean_lo"])
    rows["lower"] = np.minimum(rows["lower"], rows["mean_lo"])
    rows["upper"] = np.maximum(rows["upper"], rows["mean_hi"])
    for key, edit in change.items():
        edit(rows[key])
    with pytest.raises(DataError) as err:
        Uncertainty.from_rows(rows)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_normalisation_of_the_classic_cases():
    l, u = np.array([[0.0, -2.0]]), np.array([[2.0, 2.0]])
    mean = (l + u) / 2
    uniform = Uncertainty.from_moments(l, u, mean, mean**2 + ((u - l) / 2) ** 2 / 3).normalised()
    assert np.allclose(uniform.mu_lo, 0) and np.allclose(uniform.sigma, 1 / np.sqrt(3))
    box = Uncertainty.from_intervals(l, u).normalised()
    assert np.allclose(box.sigma, 1) and np.allclose(box.mu_lo, -1) and np.allclose(box.mu_hi, 1)
    exact = Uncertainty.exact(np.array([[3.0, -1.0]])).normalised()
    assert np.all(exact.s == 0) and np.all(exact.sigma == 0)
    # mean bounds: σ̂² is the worst case over the interval (c = 1, s = 1, E X² ≤ 1.5)
    b = Uncertainty.from_bounds([[0.0]], [[2.0]], [[0.8]], [[1.2]], [[1.5]]).normalised()
    assert np.isclose(b.sigma[0, 0] ** 2, 1.5 - 2 * 0.8 + 1)


def test_replicates_give_consistent_bounds_around_the_sample_mean():
    rng = np.random.default_rng(1)
    R = rng.uniform(-1, 3, (30, 8, 2))
    unc = Uncertainty.from_replicates(R)
    mean = R.mean(axis=1)
    assert np.all(unc.mean_lo <= mean) and np.all(mean <= unc.mean_hi)
    assert np.all(unc.second_moment >= unc.mean_hi**2 - 1e-12)
    unc.normalised()  # consistent: no error


# -- formulations: the readable model and the fast path agree -------------------------------
@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_cvxpy_and_clarabel_reach_the_same_optimum(name, mixed):
    unc, X, y = small_problem(mixed=mixed)
    data = problem_data(name, unc, X, y, 0.1)
    if mixed and data.lower is not None:  # the fast path drops slabs that cut nothing
        bind = (data.mean_hi + data.D > data.upper) | (data.mean_lo - data.D < data.lower)
        assert 0 < bind.mean() < 1
    a, b = solve_cvxpy(data, 2.0), solve_clarabel(data, 2.0)
    assert abs(a.objective - b.objective) <= 1e-6 * abs(a.objective)
    assert np.allclose(a.w, b.w, atol=1e-4)


@pytest.mark.parametrize("name", ["MM-SBMV", "MM-SBMV-I", "SVM"])
def test_fast_path_has_no_dense_column(name):
    """Every point's rows use w and b; the fast path gives groups of points their own copies,
    so no column of A holds more than a few groups' worth of entries (a dense column makes
    Clarabel's ordering of the KKT system slow), and the optimum is unchanged."""
    m, n = 900, 4
    unc, X, y = small_problem(m=m, n=n, seed=5)
    data = problem_data(name, unc, X, y, 0.1)
    P, q, A, b, cones = conic_problem(data, 1.0)
    per_column = np.diff(A.tocsc().indptr)
    assert per_column.max() <= 6 * np.sqrt(m)  # (the head rows alone put m = 900 in b's)
    a = solve_cvxpy(data, 1.0)
    assert abs(a.objective - solve_clarabel(data, 1.0).objective) <= 1e-6 * a.objective


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_working_set_rounds_reach_the_full_optimum(name, monkeypatch):
    """Constraint generation over points (a small first working set forces several rounds)
    ends at the optimum of the problem with every point, as the cvxpy model solves it."""
    import safeclf.methods.robust_socp.clarabel_path as fast

    monkeypatch.setattr(fast, "FIRST", 12)
    sizes = []
    solve = fast._solve
    monkeypatch.setattr(fast, "_solve", lambda d, C, s=None: sizes.append(d.shape[0]) or solve(d, C, s))
    unc, X, y = small_problem(m=150, n=3, seed=6, mixed=True)
    data = problem_data(name, unc, X, y, 0.1)
    got, ref = fast.solve_clarabel(data, 1.0), solve_cvxpy(data, 1.0)
    assert len(sizes) >= 2 and max(sizes) < 150
    assert abs(got.objective - ref.objective) <= 1e-6 * ref.objective
    assert np.allclose(got.w, ref.w, atol=1e-4) and got.xi.shape == (150,)


def test_feasible_sets_order_the_optima():
    unc, X, y = small_problem(seed=3)
    obj = {f: solve_clarabel(problem_data(f, unc, X, y, 0.05), 1.0).objective for f in FORMULATIONS}
    tol = 1e-7
    for plain in ("MM-SBMV", "MM-SMV", "MM-SBM", "MM-SM"):
        assert obj[plain + "-I"] <= obj[plain] * (1 + tol)  # Lemma 3's set is smaller
    assert obj["MM-SBMV"] <= obj["MM-SBM"] * (1 + tol)  # second-moment information helps
    assert obj["MM-SMV"] <= obj["MM-SM"] * (1 + tol)
    assert obj["MM-M"] < obj["MM-SMV"]  # any uncertainty costs something here
    assert obj["MM-SBMV-I"] <= obj["MM-S"] * (1 + tol)  # the box is the largest set


def test_exact_points_make_every_formulation_the_svm():
    _, X, y = small_problem(seed=4)
    objs = [RobustSOCPClassifier(formulation=f, n_monte_carlo=0).fit(X, y).objective_
            for f in FORMULATIONS]
    assert np.ptp(objs) <= 1e-6 * objs[0]


# -- test-time sets and error measures ---------------------------------------------------------
def test_intersection_support_function_matches_a_conic_solve():
    import cvxpy as cp

    unc, _, _ = small_problem(m=8, seed=5)
    d = np.random.default_rng(0).normal(size=unc.shape)
    got = support_function(unc, d, 0.05, "intersection")
    rho = radii(unc, 0.05)
    for i in range(unc.shape[0]):
        x, mu = cp.Variable(unc.shape[1]), cp.Variable(unc.shape[1])
        keep = rho[i] > 0
        cons = [x >= unc.lower[i], x <= unc.upper[i], mu >= unc.mean_lo[i], mu <= unc.mean_hi[i],
                x[~keep] == mu[~keep],
                cp.norm(cp.multiply(1 / rho[i][keep], x[keep] - mu[keep])) <= 1]
        prob = cp.Problem(cp.Maximize(d[i] @ x), cons)
        prob.solve(solver=cp.CLARABEL)
        assert abs(prob.value - got[i]) < 1e-6 * (1 + abs(got[i]))
    # Lemma 3's set lies in both Lemma 2's set and the box
    assert np.all(got <= support_function(unc, d, 0.05, "ellipsoids") + 1e-9)
    assert np.all(got <= support_function(unc, d, 0.05, "box") + 1e-9)


def test_error_measures_are_ordered():
    d = load_uncertain_synthetic(n_samples=200, separation=3.0, random_state=2)
    task = Task("u", d.all.take(np.arange(100)), d.all.take(np.arange(100, 200)))
    est = RobustSOCPClassifier("MM-SMV", epsilon=0.1, n_monte_carlo=0).fit(
        task.train.X, task.train.y, uncertainty=task.train.rows["uncertainty"])
    m = plugin.report(est, task).metrics
    # the mean lies in its set: misclassified means are robust errors; straddling sets too
    assert m["test_nominal_error"] <= m["test_robust_error"]
    assert m["test_undecided_rate"] <= m["test_robust_error"]
    assert 0 <= m["test_realised_error"] <= 1
    assert np.isclose(m["margin"], 2 / np.linalg.norm(est.coef_))


def test_monte_carlo_check_holds_for_bernstein_and_catches_the_svm():
    d = load_uncertain_synthetic(n_samples=120, separation=6.0, centre_spread=0.5,
                                 half_width=(0.1, 0.5), random_state=3)
    unc = d.rows["uncertainty"]
    eps, n = 0.05, 2000
    se = np.sqrt(eps * (1 - eps) / n)
    for f in ("MM-SBMV", "MM-SMV-I"):
        est = RobustSOCPClassifier(f, epsilon=eps, C=10.0, n_monte_carlo=n, random_state=0)
        viol = est.fit(d.X, d.y, uncertainty=unc).chance_check(d.X, d.y, unc)
        assert max(viol.values()) <= eps + 3 * se, (f, viol)
    svm = RobustSOCPClassifier("SVM", C=10.0, n_monte_carlo=n, random_state=0)
    viol = svm.fit(d.X, d.y, uncertainty=unc).chance_check(d.X, d.y, unc)
    assert max(viol.values()) > 0.3  # the nominal SVM's constraints fail often


def issue_11_example():
    """One uncertain point (support [−1, 1], E X ∈ [−0.3, 0.3], E X² ≤ 0.09, y = +1) and an
    exact point at −5 (y = −1): normalised, the uncertain entry is ν(−0.3, 0.3, 0.3)."""
    X = np.array([[0.0], [-5.0]])
    y = np.array([1, 0])
    unc = Uncertainty.from_bounds([[-1.0], [-5.0]], [[1.0], [-5.0]], [[-0.3], [-5.0]],
                                  [[0.3], [-5.0]], [[0.09], [25.0]])
    return X, y, unc


def violation_under(atoms, masses, est):
    """The exact probability that the uncertain point (y = +1) breaks (5) under a discrete law."""
    w, b = float(est.coef_[0]), float(-est.intercept_)
    broken = np.array([w * x - b < 1.0 - est.slack_[0] - 1e-6 for x in atoms])
    return float(np.dot(masses, broken))


# the law of the issue: atoms −1 and 0.09, mean ≈ 0 and E X² = 0.09 (inside the information)
TWO_POINT = ((-1.0, 0.09), (0.09 / 1.09, 1.0 / 1.09))


@pytest.mark.parametrize("formulation", ["MM-SBMV", "MM-SBMV-I"])
def test_issue_example_holds_with_the_valid_nu(formulation):
    X, y, unc = issue_11_example()
    eps, n = 0.05, 4000
    est = RobustSOCPClassifier(formulation, epsilon=eps, C=1e4, n_monte_carlo=n,
                               random_state=0).fit(X, y, uncertainty=unc)
    assert violation_under(*TWO_POINT, est) <= eps
    viol = est.chance_check(X, y, unc)
    assert viol["searched"] <= eps + 3 * np.sqrt(eps * (1 - eps) / n), viol


@pytest.mark.parametrize("formulation", ["MM-SBMV", "MM-SBMV-I"])
def test_bad_law_search_catches_the_old_nu(formulation, monkeypatch):
    # the old ν returned 0.0 at (−0.3, 0.3, 0.3), the only uncertain entry here (the exact
    # point has s = 0): a ν of zero reproduces the old model, w = 0.4255, b = −1.1277
    import safeclf.methods.robust_socp.formulations as formulations

    monkeypatch.setattr(formulations, "nu", lambda lo, hi, s: np.zeros(np.shape(lo)))
    X, y, unc = issue_11_example()
    eps, n = 0.05, 4000
    est = RobustSOCPClassifier(formulation, epsilon=eps, C=1e4, n_monte_carlo=n,
                               random_state=0).fit(X, y, uncertainty=unc)
    assert np.isclose(est.coef_[0], 0.4255, atol=1e-3)
    assert np.isclose(-est.intercept_, -1.1277, atol=1e-3)
    assert np.isclose(violation_under(*TWO_POINT, est), 0.0826, atol=1e-4)  # > ε
    viol = est.chance_check(X, y, unc)
    se = np.sqrt(eps * (1 - eps) / n)
    # the laws with the mean at the adverse bound see nothing; the search finds a law
    # inside the information (here a two-point law with mean 0) that breaks (5) far beyond ε
    assert max(viol[k] for k in ("uniform", "two_point", "truncnorm")) <= eps
    assert viol["searched"] > eps + 3 * se, viol


def test_searched_laws_match_the_information():
    X, y, unc = issue_11_example()
    adverse = np.array([[-1.0], [1.0]])
    for shape in SEARCH_SHAPES:
        for mf in SEARCH_MEANS:
            for vf in SEARCH_VARIANCES:
                atoms, P = searched_law(unc, adverse, mf, vf, shape)
                mean = (P * atoms).sum(axis=0)
                second = (P * atoms**2).sum(axis=0)
                assert np.allclose(P.sum(axis=0), 1.0) and np.all(P >= 0)
                assert np.all(atoms >= unc.lower - 1e-12) and np.all(atoms <= unc.upper + 1e-12)
                assert np.all(mean >= unc.mean_lo - 1e-9) and np.all(mean <= unc.mean_hi + 1e-9)
                assert np.all(second <= unc.second_moment + 1e-9), (shape, mf, vf)
                # the variance asked for is reached: vf of the largest at that mean
                m = mean[0, 0]
                assert np.isclose(second[0, 0] - m * m, vf * (0.09 - m * m), atol=1e-9)
    # the issue's law is on the grid: two_point_end, mean fraction 0.5 (mean 0), full variance
    atoms, P = searched_law(unc, adverse, 0.5, 1.0, "two_point_end")
    got = sorted(zip(atoms[:2, 0, 0], P[:2, 0, 0]))
    assert np.allclose(got, [(-1.0, 0.09 / 1.09), (0.09, 1 / 1.09)])


# -- estimator contract --------------------------------------------------------------------
@parametrize_with_checks([RobustSOCPClassifier(n_monte_carlo=0)])
def test_sklearn_estimator_checks(estimator, check):
    # without `uncertainty`, X is exact (zero-width supports): the soft-margin SVM. The one
    # check scikit-learn itself skips is check_array_api_input (needs SCIPY_ARRAY_API=1; this
    # estimator is NumPy-only).
    check(estimator)


def test_labels_any_two_values_and_plugin_wiring():
    unc, X, y = small_problem(seed=6)
    labels = np.where(y > 0, "malignant", "benign")
    est = plugin.build({"formulation": "MM-SBMV-I"}, random_state=0)
    est.fit(X, labels, uncertainty=unc.to_rows())
    assert set(est.predict(X)) <= {"benign", "malignant"}
    assert est.classes_[1] == "malignant"
    assert plugin.needs == ("uncertainty",)
    with pytest.raises(Exception, match="formulation"):
        plugin.check_params({"formulation": "MM-XYZ"}, "methods[0].params")


def test_rescaled_x_is_rejected_with_a_hint():
    unc, X, y = small_problem(seed=7)
    with pytest.raises(DataError, match="preprocess: none"):
        RobustSOCPClassifier().fit(X * 10, y, uncertainty=unc.to_rows())


# -- loaders -------------------------------------------------------------------------------
@pytest.mark.parametrize("information", ["exact", "bounds", "intervals", "replicates"])
@pytest.mark.parametrize("noise", ["uniform", "truncnorm", "beta"])
def test_synthetic_loader_is_consistent(noise, information):
    d = load_uncertain_synthetic(n_samples=60, noise=noise, information=information,
                                 n_realisations=5)
    unc = Uncertainty.from_rows(d.rows["uncertainty"], d.X.shape[1])
    assert np.all(d.X >= unc.lower - 1e-12) and np.all(d.X <= unc.upper + 1e-12)
    assert d.rows["realisations"].shape == (60, 5, 2)
    if information != "replicates":  # the true law lives in the box
        R = d.rows["realisations"]
        assert np.all(R >= unc.lower[:, None] - 1e-12) and np.all(R <= unc.upper[:, None] + 1e-12)


def test_synthetic_exact_moments_match_the_draws():
    d = load_uncertain_synthetic(n_samples=4, noise="beta", n_realisations=40000)
    unc = d.rows["uncertainty"]
    R = d.rows["realisations"]
    assert np.allclose(R.mean(axis=1), unc["mean_lo"], atol=0.02)
    assert np.allclose((R**2).mean(axis=1), unc["second_moment"], rtol=0.02, atol=0.02)


@pytest.mark.parametrize("support", ["worst", "se"])
def test_breast_cancer_intervals(support):
    """Checked against the source columns (mean 0-9, se 10-19, worst 20-29), not against the
    loader's own clipping: X is the reported mean, the worst support reaches the reported
    worst value and reflects it about the mean, the se support is mean ± 3 se inside it."""
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer().data
    mean, se, worst = raw[:, :10], raw[:, 10:20], raw[:, 20:30]
    d = load_breast_cancer_intervals(support=support, scale=False)
    unc = Uncertainty.from_rows(d.rows["uncertainty"], 10)
    assert d.X.shape == (569, 10) and d.y.sum() == 212
    assert np.array_equal(d.X, mean)
    wide_hi, wide_lo = np.maximum(worst, mean), np.maximum(0.0, 2 * mean - np.maximum(worst, mean))
    if support == "worst":
        assert np.allclose(unc.upper, wide_hi) and np.allclose(unc.lower, wide_lo)
    else:
        assert np.allclose(unc.upper, np.minimum(wide_hi, mean + 3 * se))
        assert np.allclose(unc.lower, np.maximum(wide_lo, mean - 3 * se))
        assert np.mean(unc.upper < wide_hi) > 0.5  # the se band is the tighter one

"""The coarse start of Algorithm 1 (RampClassifier ``start``)."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.methods.ramp import RampClassifier
from safeclf.methods.ramp import estimator as ramp_estimator


def _biased(n, seed=0):
    """Two groups whose positive rates differ (the privileged group "P" a third of the rows),
    features that reveal the group in part: the unconstrained ratio is well below 0.8."""
    rng = np.random.default_rng(seed)
    priv = rng.random(n) < 1 / 3
    X = np.c_[rng.normal(size=(n, 4)), priv + 0.5 * rng.normal(size=n)]
    score = X[:, :4] @ np.array([1.0, -0.5, 0.5, 0.25]) + 2.0 * priv
    y = (score + rng.normal(size=n) > 1.0).astype(int)
    return X, y, np.where(priv, "P", "U")


def _fit(X, y, g, **kw):
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.8,
                                       "privileged": "P"}], lam="1/n", random_state=0, **kw)
    return est.fit(X, y, groups=g)


def _ratio(est, X, g):
    p = est.predict(X) == 1
    return p[g == "U"].mean() / p[g == "P"].mean()


def test_coarse_start_meets_the_constraint_at_a_comparable_objective():
    X, y, g = _biased(4000)
    zero = _fit(X, y, g, start="zero")
    coarse = _fit(X, y, g, start="coarse")
    assert zero.coarse_rows_ == [] and coarse.coarse_rows_ == [4000 // ramp_estimator.COARSE_FACTOR]
    unconstrained = RampClassifier(lam="1/n", random_state=0).fit(X, y)
    assert _ratio(unconstrained, X, g) < 0.7  # the constraint binds
    for est in (zero, coarse):
        row = est.constraint_values_[0]
        assert row["train_randomized"] >= 0.8 - 0.02
        assert est.multipliers_[0] > 0
    assert coarse.objective_value_ <= zero.objective_value_ + 0.01


def test_auto_start_is_coarse_from_the_row_threshold_on(monkeypatch):
    X, y, g = _biased(2400, seed=1)
    monkeypatch.setattr(ramp_estimator, "COARSE_ROWS", 2000)
    monkeypatch.setattr(ramp_estimator, "COARSE_FLOOR", 500)
    monkeypatch.setattr(ramp_estimator, "COARSE_FACTOR", 4)
    est = _fit(X, y, g)  # 2,400 ≥ 2,000: a quarter (600 ≥ 500: itself coarse, 150 rows zero)
    assert est.coarse_rows_ == [600, 150]
    est = _fit(X[:1800], y[:1800], g[:1800])
    assert est.coarse_rows_ == []


def test_the_coarse_fit_is_a_loose_start_and_hands_on_its_multiplier_slope(monkeypatch):
    """Each coarse level is fitted to COARSE_LOOSENESS times the fit's own tolerances (the fit
    on all rows settles the answer), and the fit on all rows starts its multiplier search
    with the coarse fit's slope estimate dg/dv."""
    from safeclf.methods.ramp import mm

    X, y, g = _biased(4000)
    seen = []
    real_solve = mm.solve

    def solve(prob, **kw):
        out = real_solve(prob, **kw)
        seen.append((prob.X.shape[0], kw["mm_tol"], kw["cp_tol"], kw.get("slope0"), out.slope))
        return out

    monkeypatch.setattr(mm, "solve", solve)
    est = _fit(X, y, g, start="coarse", mm_tol=2e-3, tol=3e-4)
    (n_c, mm_c, cp_c, slope0_c, slope_c), (n_f, mm_f, cp_f, slope0_f, _) = seen
    loose = ramp_estimator.COARSE_LOOSENESS
    assert (n_c, n_f) == (4000 // ramp_estimator.COARSE_FACTOR, 4000)
    assert np.isclose(mm_c, 2e-3 * loose) and np.isclose(cp_c, 3e-4 * loose)
    assert (mm_f, cp_f) == (2e-3, 3e-4)
    assert slope0_c is None and slope_c is not None and slope_c < 0
    assert slope0_f == slope_c
    assert est.constraint_values_[0]["train_randomized"] >= 0.8 - 0.02


def test_nested_coarse_levels_share_one_loosening(monkeypatch):
    """Every coarse level is fitted to the same loosened tolerances: a coarse fit's own coarse
    start does not loosen them again (compounded, the smallest level ended after one step and
    a million-row fit took 161 s instead of 58)."""
    from safeclf.methods.ramp import mm

    monkeypatch.setattr(ramp_estimator, "COARSE_FACTOR", 4)
    monkeypatch.setattr(ramp_estimator, "COARSE_FLOOR", 200)
    X, y, g = _biased(4000, seed=3)
    seen = []
    real_solve = mm.solve

    def solve(prob, **kw):
        seen.append((prob.X.shape[0], kw["mm_tol"], kw["cp_tol"]))
        return real_solve(prob, **kw)

    monkeypatch.setattr(mm, "solve", solve)
    est = _fit(X, y, g, start="coarse", mm_tol=2e-3, tol=3e-4)
    assert est.coarse_rows_ == [1000, 250, 62]
    loose = ramp_estimator.COARSE_LOOSENESS
    assert [n for n, _, _ in seen] == [62, 250, 1000, 4000]  # the smallest level first
    for _, mm_tol, cp_tol in seen[:-1]:
        assert np.isclose(mm_tol, 2e-3 * loose) and np.isclose(cp_tol, 3e-4 * loose)
    assert seen[-1][1:] == (2e-3, 3e-4)


def test_a_coarse_fit_that_fails_falls_back_to_the_zero_start(monkeypatch):
    X, y, g = _biased(800, seed=2)
    unprivileged = np.flatnonzero(g == "U")
    # a sample without the privileged group: the coarse fit's ratio is undefined and raises
    monkeypatch.setattr(ramp_estimator, "coarse_rows", lambda y, groups, k, seed:
                        unprivileged[:k])
    est = _fit(X, y, g, start="coarse")
    assert est.coarse_rows_ == []
    assert est.constraint_values_[0]["train_randomized"] >= 0.8 - 0.02


def test_a_step_no_iterate_improves_is_solved_again_more_exactly():
    """Majorization steps whose cutting-plane iterates all raise the exact-penalty merit are
    re-solved ten times as exactly instead of ending the descent: some are rescued, the merits
    never rise, and the randomised training ratio ends on κ."""
    X, y, g = _biased(4000)
    est = _fit(X, y, g, max_mm_iter=30, mm_tol=1e-5)
    rescued = [h for h in est.history_ if h["retried"] and h["accepted"]]
    assert rescued
    merits = [h["merit"] for h in est.history_ if h["accepted"]]
    assert all(b <= a + 1e-12 for a, b in zip(merits, merits[1:], strict=False))
    assert abs(est.constraint_values_[0]["train_randomized"] - 0.8) <= 0.002


def test_warm_start_follows_a_kappa_path_from_the_previous_solution():
    """warm_start: the next κ starts from the fitted w, b and multiplier, so it takes fewer
    majorization steps and cutting-plane points than the same fit started at zero, keeps its
    promise (predict's training ratio ≥ κ) at a comparable objective; without warm_start, or
    on other features, a refit is the cold fit."""
    X, y, g = _biased(4000, seed=3)

    def ramp(kappa, **kw):
        return RampClassifier(constraints=[{"rate": "fairness_ratio", "privileged": "P"}],
                              kappa=kappa, lam="1/n", start="zero", random_state=0, **kw)

    path = ramp(0.8, warm_start=True).fit(X, y, groups=g)
    assert path.coarse_rows_ == []
    previous = (path.coef_.copy(), path.multipliers_.copy())
    cold = ramp(0.9).fit(X, y, groups=g)
    path.set_params(kappa=0.9).fit(X, y, groups=g)
    assert not np.allclose(path.coef_, previous[0]) and path.multipliers_[0] > previous[1][0]
    for est in (path, cold):
        assert _ratio(est, X, g) >= 0.9 and est.solver_status_ == "optimal"
    # measured: 6 against 14 steps, 26 against 55 points, objective 0.2571 against 0.2575
    assert path.n_mm_iter_ < cold.n_mm_iter_
    assert sum(path.n_cp_iter_) < sum(cold.n_cp_iter_)
    assert path.objective_value_ <= cold.objective_value_ + 0.005
    again = path.set_params(warm_start=False).fit(X, y, groups=g)
    np.testing.assert_array_equal(again.coef_, cold.coef_)
    narrow = path.set_params(warm_start=True).fit(X[:, :3], y, groups=g)  # other features
    fresh = ramp(0.9).fit(X[:, :3], y, groups=g)
    np.testing.assert_array_equal(narrow.coef_, fresh.coef_)


def test_a_warm_fit_that_would_start_coarse_starts_from_the_point_of_lower_merit(monkeypatch):
    """With ``warm_start`` where the coarse start applies, the fit starts from the fitted point
    or the coarse fit's, whichever has the lower exact-penalty merit on all rows: after a large
    step of κ the fitted point lies outside the new constraint (the coarse point is taken);
    refitting the same problem, the fitted point is its own solution (it is kept, and the fit
    ends within two majorization steps)."""
    X, y, g = _biased(4000, seed=5)
    full = []  # (problem, start) of each fit on all 4,000 rows (not the coarse level's)
    real = ramp_estimator.mm.solve

    def solve(prob, **kw):
        if prob.X.shape[0] == X.shape[0]:
            full.append((prob, kw.get("w0"), kw.get("b0")))
        return real(prob, **kw)

    monkeypatch.setattr(ramp_estimator.mm, "solve", solve)
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "privileged": "P"}], kappa=0.5,
                         lam="1/n", start="coarse", random_state=0, warm_start=True)
    est.fit(X, y, groups=g)
    fitted = est.coef_.copy(), est.ramp_intercept_
    est.set_params(kappa=0.9).fit(X, y, groups=g)
    prob, w0, b0 = full[-1]
    v_max = est.max_multiplier
    assert est.coarse_rows_ == [4000 // ramp_estimator.COARSE_FACTOR]  # the coarse point ...
    assert prob.penalised(w0, b0, v_max) < prob.penalised(*fitted, v_max)  # ... of lower merit
    assert _ratio(est, X, g) >= 0.9 and est.solver_status_ == "optimal"
    fitted = est.coef_.copy(), est.ramp_intercept_
    est.fit(X, y, groups=g)  # the same problem again
    prob, w0, b0 = full[-1]
    assert est.coarse_rows_ == [] and est.n_mm_iter_ <= 2  # the fitted point, kept
    np.testing.assert_array_equal(w0, fitted[0])
    assert b0 == fitted[1]


@pytest.mark.parametrize("seed", range(6))
def test_the_coarse_sample_is_stratified_by_label_and_group(seed):
    """For any labels and groups (a rare cell, a label × group cell that is empty, a missing
    group), ``coarse_rows`` draws exactly k distinct rows, sorted, each label × group cell
    within one row of its share k·n_cell/n; the same seed draws the same rows, another seed
    others."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    y = rng.random(n) < rng.uniform(0.05, 0.6)
    groups = rng.choice(np.array(["a", "b", "c", None], dtype=object), size=n,
                        p=[0.6, 0.3, 0.08, 0.02])
    groups[(groups == "c") & y] = "a"  # no positive in group c
    for k in (1, n // 8, n // 2, n - 1):
        for g in (groups, None):
            idx = ramp_estimator.coarse_rows(y, g, k, seed)
            assert idx.size == k and np.all(np.diff(idx) > 0) and 0 <= idx[0] and idx[-1] < n
            cells = [y] if g is None else [y, np.array([str(v) for v in g])]
            keys = np.array(["|".join(map(str, t)) for t in zip(*cells)])
            for cell in np.unique(keys):
                size = int((keys == cell).sum())
                assert abs(int((keys[idx] == cell).sum()) - k * size / n) < 1
            assert np.array_equal(idx, ramp_estimator.coarse_rows(y, g, k, seed))
    half = n // 2
    assert not np.array_equal(ramp_estimator.coarse_rows(y, groups, half, seed),
                              ramp_estimator.coarse_rows(y, groups, half, seed + 100))

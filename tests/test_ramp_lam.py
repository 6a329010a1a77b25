"""λ from the data (``lam: auto``) and the group-thresholds baseline it is compared with."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from safeclf.errors import DataError
from safeclf.methods.ramp import RampClassifier
from safeclf.methods.ramp.estimator import LAM_AUTO_ROWS
from safeclf.methods.ramp.group_thresholds import GroupThresholds, best_counts


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    group = np.where(rng.random(n) < 0.5, "B", "A")
    y = (rng.random(n) < np.where(group == "B", 0.6, 0.3)).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[1.2 * (2 * y - 1), np.zeros((n, 2))]
    X = np.c_[X, (group == "B").astype(float)]  # the group is a feature (one-hot column)
    return X, y, group


def test_auto_lam_follows_the_one_standard_error_rule():
    X, y, _ = _data()
    grid = [1e-3, 1e-2, 1e3]
    est = RampClassifier(lam="auto", lam_grid=grid, cv=2, random_state=0).fit(X, y)
    table = est.lam_cv_
    assert [r["lam"] for r in table] == grid
    assert sum(r["chosen"] for r in table) == 1
    chosen = next(r for r in table if r["chosen"])
    assert est.lam_ == chosen["lam"]
    eligible = [r for r in table if r["eligible"]]
    best = min(eligible, key=lambda r: r["objective"])
    # the largest eligible λ within one standard error of the best mean objective
    within = [r for r in eligible if r["objective"] <= best["objective"] + best["objective_se"]]
    assert chosen["lam"] == max(r["lam"] for r in within)
    # the refit on all rows uses the chosen λ: its regulariser matches λ_ = 1000's scale
    assert np.linalg.norm(est.coef_) < 1e-2


def test_auto_lam_is_the_default_on_small_data_only_and_threads_change_nothing():
    X, y, g = _data()
    assert X.shape[0] < LAM_AUTO_ROWS
    kw = dict(constraints=[{"rate": "fairness_ratio", "kappa": 0.8, "privileged": "B"}],
              lam_grid=[1e-3, 3e-2], cv=2, random_state=1)
    one = RampClassifier(**kw).fit(X, y, groups=g)
    two = RampClassifier(n_jobs=2, **kw).fit(X, y, groups=g)
    assert one.lam_cv_ is not None and one.lam_ in kw["lam_grid"]
    assert one.lam_cv_ == two.lam_cv_
    np.testing.assert_allclose(one.coef_, two.coef_)
    fixed = RampClassifier(lam="1/n").fit(X, y)
    assert fixed.lam_cv_ is None and fixed.lam_ == pytest.approx(1 / X.shape[0])


def test_lam_grid_is_validated():
    X, y, _ = _data(n=60)
    with pytest.raises(ValueError, match="lam_grid must be a non-empty list of numbers > 0"):
        RampClassifier(lam="auto", lam_grid=[0.1, -1]).fit(X, y)


def test_best_counts_is_the_brute_force_optimum():
    rng = np.random.default_rng(3)
    for trial in range(20):
        n = 14
        groups = rng.choice(["M", "F", "X"], size=n)
        groups[:3] = ["M", "F", "X"]
        positive = rng.random(n) < 0.5
        scores = rng.normal(size=n)
        kappa = rng.uniform(0.3, 1.0)
        counts, err = best_counts(scores, positive, groups, "M", kappa)
        names = sorted(set(groups))
        sizes = {g: int((groups == g).sum()) for g in names}
        best = np.inf
        for ks in itertools.product(*[range(sizes[g] + 1) for g in names]):
            k = dict(zip(names, ks))
            if any(k[g] / sizes[g] < kappa * k["M"] / sizes["M"] - 1e-12 for g in names):
                continue
            e = 0
            for g in names:
                order = np.argsort(-scores[groups == g], kind="stable")
                pred = np.zeros(sizes[g], bool)
                pred[order[:k[g]]] = True
                e += int((pred != positive[groups == g]).sum())
            best = min(best, e)
        assert err == best, trial
        assert all(counts[g] / sizes[g] >= kappa * counts["M"] / sizes["M"] - 1e-12 for g in names)


def test_group_thresholds_meet_the_ratio_and_read_the_group_from_its_column():
    X, y, g = _data(n=400)
    est = GroupThresholds(kappa=0.9, privileged="B").fit(X, y, groups=g)
    assert est.group_column_ == 3 and est.privileged_ == "B"
    pred = est.predict(X)
    assert pred[g == "A"].mean() >= 0.9 * pred[g == "B"].mean() - 1e-12
    plain = (est.model_.decision_function(X) > 0)
    assert plain[g == "A"].mean() < 0.9 * plain[g == "B"].mean()  # the constraint binds
    with pytest.raises(DataError, match="no feature column determines the group"):
        GroupThresholds().fit(X[:, :3], y, groups=g)

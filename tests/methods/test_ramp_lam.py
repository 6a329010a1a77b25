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


def test_fold_fits_that_stop_early_are_counted_and_warned_about_once():
    """With max_mm_iter = 1 every constrained fold fit stops at the limit: the table counts
    them per λ, and the fit warns once for the chosen λ (plus the refit's own warning), not
    once per fold fit; with room to settle nothing is counted."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, g = _data()
    kw = dict(constraints=[{"rate": "fairness_ratio", "kappa": 0.9, "privileged": "B"}],
              lam="auto", lam_grid=[1e-3, 3e-2], cv=2, cv_repeats=2, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = RampClassifier(max_mm_iter=1, **kw).fit(X, y, groups=g)
    folds = 2 * 2
    assert [r["unsettled"] for r in est.lam_cv_] == [folds, folds]
    said = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(said) == 2, said
    assert sum(f"{folds} of {folds} cross-validation fits" in m for m in said) == 1
    calm = RampClassifier(max_mm_iter=100, **kw).fit(X, y, groups=g)
    assert [r["unsettled"] for r in calm.lam_cv_] == [0, 0]


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


# -- the selection rule on tables made by hand (safeclf.methods.ramp.lam_cv) ---------------------
def test_repeated_fold_se_uses_the_per_repeat_means():
    from safeclf.methods.ramp.lam_cv import repeated_fold_se

    # one λ, 3 repeats of 2 folds: repeat means 0.2, 0.3, 0.4
    values = np.array([[[0.1, 0.3], [0.2, 0.4], [0.6, 0.2]]])
    se = repeated_fold_se(values)
    assert se[0] == pytest.approx(np.std([0.2, 0.3, 0.4], ddof=1) / np.sqrt(3))
    # not the error of 6 independent values (the repeats reuse the rows)
    assert se[0] != pytest.approx(values.std(ddof=1) / np.sqrt(6))
    # the same fold values in other pairings: other repeat means, another error
    other = np.array([[[0.1, 0.2], [0.3, 0.3], [0.4, 0.5]]])
    assert repeated_fold_se(other)[0] == pytest.approx(
        np.std([0.15, 0.3, 0.45], ddof=1) / np.sqrt(3))
    # one repeat: the usual k-fold error
    single = np.array([[[0.1, 0.3, 0.2]]])
    assert repeated_fold_se(single)[0] == pytest.approx(np.std([0.1, 0.3, 0.2], ddof=1) / np.sqrt(3))


def _table(objective_means, jitter=0.01, repeats=3, folds=2):
    """(L, R, k) objective values whose per-repeat means spread by ±jitter around each mean."""
    spread = np.array([-jitter, 0.0, jitter])[:repeats]
    return np.array(objective_means, float)[:, None, None] + spread[None, :, None] + np.zeros(
        (1, 1, folds))


def test_a_constant_fit_is_not_chosen_while_another_lam_is_eligible():
    from safeclf.methods.ramp.lam_cv import select

    obj = _table([0.20, 0.19, 0.195])          # the largest λ is within one error of the best
    viol = np.zeros_like(obj)
    constant = np.zeros(obj.shape, bool)
    assert select(obj, viol, constant, 5e-3).chosen == 2
    constant[2] = True                          # ... but its fits predict one class
    sel = select(obj, viol, constant, 5e-3)
    assert sel.chosen == 1 and list(sel.constant) == [False, False, True]
    assert not sel.eligible[2]
    constant[2, :2] = False                     # constant on 2 of 6 folds only: a real fit
    assert select(obj, viol, constant, 5e-3).chosen == 2
    # when every non-constant λ violates its constraint on the validation folds, the constant
    # fit is the eligible one and is chosen
    constant[2] = True
    viol[:2] = 0.1
    assert select(obj, viol, constant, 5e-3).chosen == 2


def test_signed_violations_around_the_bound_keep_a_lam_eligible():
    from safeclf.methods.ramp.lam_cv import select

    obj = _table([0.18, 0.24])
    constant = np.zeros(obj.shape, bool)
    # λ 0's constraint binds: on validation folds it lands ±0.03 around the bound; λ 1 is
    # slack. Their signed mean is 0: eligible (clipped at 0, the mean would be 0.015, more
    # than tol + its error, and λ 1 would win at a higher objective)
    viol = np.empty(obj.shape)
    viol[0] = np.array([[0.03, -0.03], [-0.03, 0.03], [0.03, -0.03]])
    viol[1] = -0.05
    sel = select(obj, viol, constant, 5e-3)
    assert sel.eligible.all() and sel.chosen == 0
    clipped = select(obj, np.maximum(viol, 0.0), constant, 5e-3)
    assert not clipped.eligible[0] and clipped.chosen == 1
    # a violation well beyond its sampling error excludes the λ
    viol[0] += 0.05
    assert select(obj, viol, constant, 5e-3).chosen == 1


def test_validation_scores_are_signed_and_flag_a_constant_prediction():
    X, y, g = _data(n=300)
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.3, "privileged": "B"}],
                         lam=1e-2, random_state=0).fit(X, y, groups=g)
    objective, worst, constant = est._validation_scores(X, y, {"groups": g})
    assert worst < 0 and not constant            # κ = 0.3 holds with room: a negative margin
    assert objective == pytest.approx(np.mean(est.predict(X) != y))
    est.coef_ = np.zeros_like(est.coef_)
    est.intercept_ = -1.0
    objective, worst, constant = est._validation_scores(X, y, {"groups": g})
    assert constant and worst == pytest.approx(0.0) and objective == pytest.approx(y.mean())


def test_auto_lam_repeats_the_folds():
    X, y, _ = _data()
    grid = [1e-3, 1e-1]
    one = RampClassifier(lam="auto", lam_grid=grid, cv=2, cv_repeats=1, random_state=0).fit(X, y)
    four = RampClassifier(lam="auto", lam_grid=grid, cv=2, cv_repeats=4, random_state=0).fit(X, y)
    assert [r["lam"] for r in four.lam_cv_] == grid
    # other partitions: the repeated mean is not the single partition's
    assert [r["objective"] for r in one.lam_cv_] != [r["objective"] for r in four.lam_cv_]

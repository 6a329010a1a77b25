"""scikit-learn estimator checks for the ramp package's estimators, the Zafar QP's two paths,
and the Adult churn loader."""

from __future__ import annotations

import numpy as np
import pytest
from group_data import two_groups
from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.methods.ramp import RampClassifier
from safeclf.methods.ramp.thresholded import ThresholdedSVM
from safeclf.methods.ramp.zafar import ZafarSVM, group_mean_difference


# All checks run; the two sklearn skips are its array-API checks (SCIPY_ARRAY_API unset).
# FairlearnEG is not checked: it cannot fit without `groups` (fairlearn's own contract).
@parametrize_with_checks([RampClassifier(max_mm_iter=3, lam="1/n"), ZafarSVM(),
                          ThresholdedSVM(recall_min=0.9)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _groups_data(n=300, seed=0):
    return two_groups(n, seed, rates=(0.5, 0.2), label_shift=1.5, group_shift=1.0)


def test_zafar_clarabel_fast_path_matches_the_cvxpy_model():
    X, y, g = _groups_data()
    a = ZafarSVM(c=0.05, privileged="M", solver="clarabel").fit(X, y, groups=g)
    b = ZafarSVM(c=0.05, privileged="M", solver="cvxpy").fit(X, y, groups=g)
    assert abs(a.objective_ - b.objective_) <= 1e-6 * max(1.0, abs(b.objective_))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-4)


def test_zafar_constraint_binds_and_lowers_the_fairness_ratio():
    X, y, g = _groups_data()
    free = ZafarSVM().fit(X, y)
    xbar = group_mean_difference(X, g, "M")
    assert xbar @ free.coef_ > 0.2  # unconstrained: men favoured
    tight = ZafarSVM(c=0.05, privileged="M").fit(X, y, groups=g)
    assert abs(tight.covariance_) <= 0.05 + 1e-6

    def ratio(m):
        p = m.predict(X) == 1
        return p[g == "M"].mean() / p[g == "F"].mean()

    assert ratio(tight) < ratio(free)


def test_adult_churn_roles_and_baseline():
    pytest.importorskip("pandas")
    from safeclf.datasets.churn import load_adult_churn

    ds = load_adult_churn(n_d1=600, n_d2=400, n_d3=500, n_deploy=500)
    role, split, base = ds.rows["role"], ds.rows["split"], ds.rows["baseline"]
    assert [int((role == r).sum()) for r in ("d1", "d2", "d3")] == [600, 400, 500]
    assert set(np.unique(split)) == {"train", "test"}
    assert set(np.unique(base)) <= {0, 1}
    # D1 is actively sampled near the deployed model's boundary: it disagrees with the labels
    # more often than the i.i.d. D2 does
    err = {r: np.mean(base[role == r] != ds.y[role == r]) for r in ("d1", "d2")}
    assert err["d1"] > err["d2"]


def test_thresholded_svm_reaches_the_recall_target():
    rng = np.random.default_rng(4)
    n = 400
    y = (rng.random(n) < 0.3).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[1.0 * y, np.zeros((n, 2))]
    role = rng.choice(["d1", "d2"], size=n)
    free = ThresholdedSVM(recall_min=None).fit(X, y)
    on = (role == "d2") & (y == 1)
    before = np.mean(free.predict(X[on]) == 1)
    target = min(0.95, before + 0.2)
    est = ThresholdedSVM(recall_subset={"role": "d2"}, recall_min=target).fit(X, y, role=role)
    after = np.mean(est.predict(X[on]) == 1)
    assert before < target <= after < target + 1.5 / on.sum()  # the recall is the target
    assert np.allclose(est.coef_, free.coef_)  # only the bias moves


def test_plot_kinds_draw_from_a_metrics_table():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from safeclf.methods.ramp.plots import PLOTS

    rows = []
    for k in (0.5, 0.8):
        rows.append({"method": "ramp", "status": "ok", "params": f'{{"kappa": {k}}}',
                     "param.kappa": k, "param.target": k / 10,
                     "test_error": 0.15, "test_fairness_ratio": k,
                     "test_randomized_error": 0.16, "test_randomized_fairness_ratio": k,
                     "train_fairness_ratio": k, "train_randomized_fairness_ratio": k,
                     "constraint_fairness_ratio_target": k,
                     "constraint_churn_target": k / 10, "test_constraint_churn": k / 12,
                     "train_constraint_churn_randomized": k / 10,
                     "test_monitor_error_d12": 0.2})
    rows.append({"method": "zafar", "status": "ok", "params": '{"c": 0.1}', "param.c": 0.1,
                 "test_error": 0.152,
                 "test_fairness_ratio": 0.53, "test_constraint_churn": 0.09,
                 "test_monitor_error_d12": 0.21})
    table = pd.DataFrame(rows)
    for kind, fn in PLOTS.items():
        fig = plt.figure()
        fn(table, {}, fig)
        assert fig.axes and any(ax.lines for ax in fig.axes), kind
        plt.close(fig)

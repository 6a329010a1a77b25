"""The proset report's comparison classifiers (E8 KNN, E9 XGBoost): each selection rule read
back from its own search table, the per-k CV shortcut against scikit-learn's own KNN, and the
report's depth convention."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

from safeclf.methods.proset.peers import ReportKNN, ReportXGBoost

HAS_XGB = importlib.util.find_spec("xgboost") is not None


def blobs(n=240, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(n, 2)) + 1.2 * np.c_[np.cos(y), np.sin(y)]
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_knn_takes_the_largest_k_within_the_threshold(seed):
    X, y = blobs(seed=seed)
    m = ReportKNN(k_max=40, random_state=seed).fit(X, y)
    rows = m.search_
    mean = np.array([r["cv_log_loss"] for r in rows])
    best = int(np.argmin(mean))
    threshold = mean[best] + rows[best]["cv_sd"]
    assert m.cv_threshold_ == pytest.approx(threshold)
    under = [r["k"] for r in rows if r["cv_log_loss"] <= threshold]
    assert m.k_ == max(under) and m.k_optimal_ == rows[best]["k"]
    ref = KNeighborsClassifier(m.k_).fit(X, y)
    assert np.array_equal(m.predict_proba(X), ref.predict_proba(X))


def test_knn_cv_scores_are_scikit_learns_per_k():
    """The one-query shortcut (the first k of k_max sorted neighbours) gives, for every k, the
    log-loss scikit-learn's own k-neighbour classifier gets on the same fold."""
    X, y = blobs(seed=3)
    m = ReportKNN(k_max=25, cv=5, random_state=7).fit(X, y)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=7).split(X, y))
    for k in (1, 4, 13, 25):
        per_fold = [log_loss(y[te], KNeighborsClassifier(k).fit(X[tr], y[tr]).predict_proba(X[te]),
                             labels=[0, 1, 2]) for tr, te in folds]
        assert m.search_[k - 1]["cv_log_loss"] == pytest.approx(np.mean(per_fold), rel=1e-12)
        assert m.search_[k - 1]["cv_sd"] == pytest.approx(np.std(per_fold), rel=1e-9)


def test_knn_predicts_its_own_labels():
    X, y = blobs(seed=4)
    labels = np.array(["a", "b", "c"])[y]
    m = ReportKNN(k_max=20, random_state=0).fit(X, labels)
    assert set(m.predict(X)) <= set(labels)
    assert np.allclose(m.predict_proba(X).sum(axis=1), 1)


def test_xgboost_rule_and_depth_convention():
    X, y = blobs(n=300, seed=5, classes=2)
    est = ReportXGBoost(n_trials=6, max_depth=3, n_trees=80, cv=3, random_state=0, n_jobs=1)
    if not HAS_XGB:
        with pytest.raises(ImportError, match=r"bench extra") as err:
            est.fit(X, y)
        assert "\n" not in str(err.value)
        return
    est.fit(X, y)
    s1 = est.search_["stage1"]
    mean = np.array([r["cv_log_loss"] for r in s1])
    best = int(np.argmin(mean))
    under = [r for r in s1 if r["cv_log_loss"] <= mean[best] + s1[best]["cv_sd"]]
    chosen = next(r for r in s1 if r["chosen"])
    key = lambda r: (r["report_depth"], r["colsample_bylevel"], r["subsample"])  # noqa: E731
    assert key(chosen) == min(map(key, under))
    # the report's depth d is XGBoost's max_depth d + 1 (depth 0: one split, 2 leaves)
    assert all(r["max_depth"] == r["report_depth"] + 1 for r in s1)
    assert all(r["colsample_bylevel"] == 1.0 for r in s1)  # two features: no feature sampling
    trees = est.model_.trees_to_dataframe()
    leaves = trees[trees.Feature == "Leaf"].groupby("Tree").size()
    assert leaves.max() <= 2 ** est.params_["max_depth"]
    s2 = est.search_["stage2"]
    assert 1 <= s2["chosen_trees"] <= s2["optimal_trees"] <= 80
    assert est.params_["n_estimators"] == s2["chosen_trees"]
    assert set(est.predict(X)) <= {0, 1}


def test_xgboost_missing_names_the_extra(monkeypatch):
    """Without xgboost (a default install), fitting says which extra to install, in one line."""
    import sys

    monkeypatch.setitem(sys.modules, "xgboost", None)  # import xgboost now raises ImportError
    X, y = blobs(n=60, seed=6, classes=2)
    with pytest.raises(ImportError, match=r"xgboost.*bench extra") as err:
        ReportXGBoost(n_trials=2, n_trees=5).fit(X, y)
    assert "\n" not in str(err.value)


def test_a_spec_with_report_xgboost_is_refused_without_xgboost(tmp_path, monkeypatch):
    """validate refuses the method before anything runs, in one line naming the extra."""
    import importlib.util

    from safeclf.errors import SpecError
    from safeclf.spec.check import load_spec

    spec = tmp_path / "peers.yaml"
    spec.write_text("name: p\nseeds: 1\ndatasets: [{dataset: iris}]\n"
                    "methods: [{method: report_xgboost}, {method: report_knn}]\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "xgboost" else real(name, *a))
    with pytest.raises(SpecError, match=r"methods\[0\].*report_xgboost.*xgboost package.*"
                                        r"bench extra") as err:
        load_spec(spec)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("seed", [0, 5])
def test_knn_selects_what_the_authors_reference_procedure_selects(seed):
    """The author's ``fit_knn_classifier`` (proset 0.6.1 benchmarks/reference.py) is a
    scikit-learn grid search on log-loss with shuffled stratified folds, whose threshold is the
    best mean plus its ``std_test_score``, keeping the largest k under it: done here with
    scikit-learn, ours picks the same k from the same folds."""
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV

    X, y = blobs(n=200, seed=seed)
    grid = np.arange(1, 31)
    search = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": grid}, refit=False,
                          scoring=make_scorer(log_loss, response_method="predict_proba",
                                              greater_is_better=False),
                          cv=StratifiedKFold(5, shuffle=True,
                                             random_state=np.random.RandomState(12345)))
    search.fit(X, y)
    mean, std = -search.cv_results_["mean_test_score"], search.cv_results_["std_test_score"]
    best = int(np.argmin(mean))
    threshold = mean[best] + std[best]
    theirs = int(grid[np.flatnonzero(mean <= threshold)[-1]])
    ours = ReportKNN(k_max=30, random_state=12345).fit(X, y)
    assert ours.k_ == theirs and ours.k_optimal_ == int(grid[best])
    assert ours.cv_threshold_ == pytest.approx(threshold, rel=1e-9)


def test_a_saved_peer_holds_plain_data_and_predicts_the_same():
    """The state written to a model file has no library object (the KNN tree, the XGBoost
    booster): only arrays and, for XGBoost, the model as JSON text; reloaded, both predict
    exactly as before."""
    import pickle

    X, y = blobs(n=150, seed=8, classes=3)
    models = [ReportKNN(k_max=15, random_state=0).fit(X, y)]
    if HAS_XGB:
        models.append(ReportXGBoost(n_trials=2, n_trees=20, cv=3, random_state=0).fit(X, y))
    for m in models:
        before = m.predict_proba(X)
        state = m.__getstate__()
        assert "model_" not in state
        assert all(isinstance(v, (np.ndarray, str, int, float, dict, list, type(None)))
                   for k, v in state.items() if k.endswith("_")), type(m).__name__
        again = pickle.loads(pickle.dumps(m))
        assert "model_" not in again.__dict__
        assert np.array_equal(again.predict_proba(X), before)

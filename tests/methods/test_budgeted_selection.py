"""budgeted_selection: Algorithm 1, the coarse grid (Definition 1, eq. (12)), the baselines, cost
accounting, spec validation and the nested synthetic loader."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from safeclf.datasets.nested import load_nested
from safeclf.errors import SpecError
from safeclf.methods.selection import BudgetedSelection, plugin
from safeclf.methods.selection.penalty import coarse_grid, grid_size_bound, optimistic_criterion
from safeclf.methods.selection.plots import budget_share
from safeclf.plugins import registry
from safeclf.plugins.contract import MethodPlugin

LOGREG = {"method": "logreg", "params": {"C": 1.0, "max_iter": 300}, "incremental": "refit"}


def prefix_classes(ds, **extra):
    return [{**LOGREG, "features": d, **extra} for d in ds]


@pytest.fixture(scope="module")
def nested():
    ds = load_nested(n_samples=12000, decay=1.0, noise=1.5, random_state=3)
    n = 8000
    return ds.X[:n], ds.y[:n], ds.X[n:], ds.y[n:], ds


class _Task:
    def __init__(self, X, y):
        self.test = type("P", (), {"X": X, "y": y})()


# -- scikit-learn contract ------------------------------------------------------------------------
@parametrize_with_checks([
    BudgetedSelection(classes=[{**LOGREG, "complexity": 1},
                               {**LOGREG, "params": {"C": 0.1}, "complexity": 2, "name": "b"}],
                      budget=4, quantum=5, random_state=0),
    BudgetedSelection(classes=[{**LOGREG, "complexity": 1},
                               {**LOGREG, "params": {"C": 0.1}, "complexity": 2, "name": "b"}],
                      procedure="coarse_grid", budget=4, quantum=5, random_state=0),
    BudgetedSelection(classes=[{"method": "sgd", "params": {"loss": "log_loss"},
                                "complexity": c, "name": f"sgd{c}"} for c in (1, 2)],
                      budget=6, quantum=5, random_state=0),
])
def test_sklearn_contract(estimator, check):
    # Every check runs; scikit-learn itself skips check_array_api_input unless SCIPY_ARRAY_API
    # is set (the only skip, not ours to lift).
    check(estimator)


# -- spec validation: one-line SpecErrors naming the place ---------------------------------------
@pytest.mark.parametrize("params, needle", [
    ({"classes": []}, "classes is empty"),
    ({"classes": prefix_classes([1, 2, 3]), "budget": 2}, "budget T=2 is smaller than the number "
     "of classes K=3"),
    ({"classes": [{"method": "lgreg", "features": 2}]}, "unknown method 'lgreg' (did you mean "
     "'logreg'?)"),
    ({"classes": [{"method": "logreg", "features": 2}]}, "cannot train incrementally"),
    ({"classes": [{"method": "logreg", "incremental": "partial_fit", "features": 2}]},
     "has no partial_fit"),
    ({"classes": [{"method": "logreg", "incremental": "refit"}]}, "complexity is required"),
    ({"classes": [{"method": "logreg", "incremental": "refit", "features": 0}]},
     "features must be ≥ 1"),
    ({"classes": [{**LOGREG, "features": 2, "colour": 1}]}, "colour is not a known field"),
    ({"classes": [{**LOGREG, "features": 2, "params": {"Cc": 1}}]},
     "Cc is not a parameter of method 'logreg'"),
    ({"classes": prefix_classes([2]), "procedure": "bandits"}, "procedure must be"),
    ({"classes": prefix_classes([2]), "cost": "given"}, "cost is required when cost is 'given'"),
])
def test_bad_specs_are_one_line_spec_errors(params, needle):
    with pytest.raises(SpecError) as err:
        plugin.check_params(params, "methods[0].params")
    msg = str(err.value)
    assert needle in msg
    assert msg.startswith("methods[0].params")
    assert "\n" not in msg


def test_non_incremental_class_is_fine_when_fitted_once():
    plugin.check_params({"classes": [{"method": "logreg", "features": 2}],
                         "procedure": "coarse_grid"}, "m")


def test_features_list_expands_to_one_class_per_prefix(nested):
    X, y, Xt, yt, _ = nested
    est = BudgetedSelection(classes=[{**LOGREG, "features": [1, 3, 5]}], procedure="uniform",
                            budget=3, quantum=20, random_state=0).fit(X, y)
    assert [m.features for m in est.model_classes_] == [1, 3, 5]
    assert [m.complexity for m in est.model_classes_] == [1.0, 3.0, 5.0]
    # n_i ∝ 1 / cost_i with cost ∝ complexity (Example 1)
    assert est.per_quantum_.tolist() == [100, 33, 20]


# -- coarse grid (Definition 1) ---------------------------------------------------------------
def _covers(S, g, lam):
    return all(any(j >= i and g[i] <= g[j] <= (1 + lam) * g[i] for j in S) for i in range(len(g)))


@pytest.mark.parametrize("seed", range(12))
def test_coarse_grid_is_a_smallest_cover(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 9))
    g = np.cumsum(rng.uniform(0.01, 1.0, K))  # non-decreasing penalties, assumption (10)
    lam = float(rng.uniform(0.1, 2.0))
    S = coarse_grid(lambda i, s: g[i], K, lam)
    assert _covers(S, g, lam)
    smallest = next(r for r in range(1, K + 1)
                    if any(_covers(c, g, lam) for c in itertools.combinations(range(K), r)))
    assert len(S) == smallest
    assert len(S) <= grid_size_bound(g[0], g[-1], lam)


def test_coarse_grid_grows_like_log_k():
    # Example 1: γ_i(T n_i) ∝ d_i = i; with λ = 1 each grid point covers a factor of 2
    sizes = [len(coarse_grid(lambda i, s: (i + 1) / np.sqrt(s), K, 1.0)) for K in (4, 16, 64, 256)]
    assert sizes == [2, 4, 6, 8]  # ⌈log2 K⌉


def test_coarse_grid_rejects_decreasing_penalties(nested):
    X, y, *_ = nested
    classes = [{**LOGREG, "features": 4, "complexity": 4}, {**LOGREG, "features": 8,
                                                            "complexity": 2, "name": "x"}]
    with pytest.raises(SpecError, match=r"classes\[1\].*do not decrease"):
        BudgetedSelection(classes=classes, procedure="coarse_grid", budget=4, cost="given",
                          random_state=0).set_params(
            classes=[{**c, "cost": 1.0} for c in classes]).fit(X, y)


# -- Algorithm 1 -------------------------------------------------------------------------------
def test_bandit_path_follows_criterion_6(nested):
    X, y, Xt, yt, _ = nested
    est = BudgetedSelection(classes=prefix_classes([1, 4, 12, 24]), budget=30, quantum=40,
                            random_state=1).fit(X, y)
    K, T = 4, 30
    path, crit = est.path_, est.selection_.extra["criterion"]
    assert len(path) == T and list(path[:K]) == list(range(K))  # one quantum each first
    assert len(crit) == T - K
    for t, row in enumerate(crit):
        assert path[K + t] == int(np.argmin(row))
    counts = np.bincount(path, minlength=K)
    assert counts.tolist() == est.allocation_.tolist()
    assert est.chosen_ == int(np.argmax(counts))
    # refitting on everything seen is charged as such: sum over rounds of n_seen / n_i
    seen = np.zeros(K)
    expected = 0.0
    for j in path:
        seen[j] += 1
        expected += seen[j]
    assert est.compute_spent_ == pytest.approx(expected)
    assert est.compute_spent_ > T


def test_optimistic_criterion_formula():
    # R̂ − γ_i(n) − κ₂ sqrt(log K / n) + γ_i(T n_i) with γ = c sqrt(d / n)
    v = optimistic_criterion(0.2, d=4, n=100, n_total=1000, K=8, c=0.5, alpha=0.5, kappa2=1.0)
    assert v == pytest.approx(0.2 - 0.5 * 0.2 - np.sqrt(np.log(8) / 100) + 0.5 * np.sqrt(0.004))


def test_bandit_with_partial_fit_spends_exactly_the_budget(nested, monkeypatch):
    X, y, *_ = nested
    sgd = MethodPlugin("sgd", SGDClassifier)
    real = registry.get_method
    monkeypatch.setattr(registry, "get_method",
                        lambda name, where="method": sgd if name == "sgd" else real(name, where))
    classes = [{"method": "sgd", "params": {"loss": "log_loss"}, "features": d} for d in (2, 12)]
    est = BudgetedSelection(classes=classes, budget=20, quantum=50, random_state=0).fit(X, y)
    assert [m.incremental for m in est.model_classes_] == ["partial_fit", "partial_fit"]
    assert est.compute_spent_ == pytest.approx(20.0)
    assert est.allocation_.sum() == 20


def test_suboptimal_share_falls_with_the_budget(nested):
    X, y, Xt, yt, _ = nested
    shares = []
    for T in (12, 60):
        est = BudgetedSelection(classes=prefix_classes([2, 6, 10, 12]), budget=T, quantum=60,
                                random_state=0).fit(X, y, X_hindsight=Xt, y_hindsight=yt)
        rep = plugin.report(est, _Task(Xt, yt))
        assert rep.metrics["oracle_class"] == 4  # d = 12 carries all the signal
        shares.append(rep.metrics["suboptimal_share"])
    assert shares[1] < shares[0]


# -- baselines ---------------------------------------------------------------------------------
def test_oracle_uniform_coarse_grid_and_halving_report(nested):
    X, y, Xt, yt, _ = nested
    common = dict(classes=prefix_classes([1, 2, 4, 8, 12, 16, 32]), budget=40, quantum=30,
                  random_state=0)
    reports = {}
    for proc in ("oracle", "coarse_grid", "uniform", "halving"):
        est = BudgetedSelection(procedure=proc, **common).fit(X, y, X_hindsight=Xt,
                                                               y_hindsight=yt)
        reports[proc] = (est, plugin.report(est, _Task(Xt, yt)))
    o_est, o = reports["oracle"]
    assert o.metrics["excess_risk"] == 0.0 and o.metrics["picked_oracle"] == 1.0
    assert o.metrics["oracle_class"] == 5  # d = 12
    cg_est, cg = reports["coarse_grid"]
    assert cg.details["S"] == [i + 1 for i in cg_est.grid_]
    assert cg.metrics["coarse_grid_size"] < 7
    # the budget is split evenly over S (and over all K for uniform)
    q = cg_est.allocation_
    assert np.allclose(q[q > 0], 40 / len(cg_est.grid_)) and (q > 0).sum() == len(cg_est.grid_)
    assert np.allclose(reports["uniform"][0].allocation_, 40 / 7)
    # one fit of T·n_i/s samples per class (fewer when the training stream runs out)
    for proc in ("coarse_grid", "uniform"):
        est = reports[proc][0]
        s = (est.allocation_ > 0).sum()
        nq = est.per_quantum_[est.allocation_ > 0]
        expected = np.sum(np.minimum(np.round(40 * nq / s), len(y)) / nq)
        assert est.compute_spent_ == pytest.approx(expected)
        assert expected < 40  # the d = 1 class exhausts the 8000 training rows
    h_est, h = reports["halving"]
    assert h.metrics["compute_spent"] <= 40
    json_ok = __import__("json").dumps(h.details) and __import__("json").dumps(cg.details)
    assert json_ok


def test_oracle_needs_hindsight_data(nested):
    X, y, *_ = nested
    with pytest.raises(ValueError, match="needs X_hindsight"):
        BudgetedSelection(classes=prefix_classes([1, 2]), procedure="oracle", budget=2).fit(X, y)


def test_plugin_passes_test_part_as_hindsight(nested):
    X, y, Xt, yt, _ = nested
    from safeclf.data.task import Part, Task

    task = Task("nested", Part(X, y), Part(Xt, yt))
    est = plugin.build({"classes": prefix_classes([2, 12]), "procedure": "uniform",
                        "budget": 4, "quantum": 50}, random_state=0)
    plugin.fit(est, task)
    rep = plugin.report(est, task)
    assert {"excess_risk", "picked_oracle", "suboptimal_share", "coarse_grid_size",
            "chosen_test_risk", "oracle_test_risk"} <= set(rep.metrics)
    assert rep.metrics["chosen_test_risk"] == pytest.approx(np.mean(est.predict(Xt) != yt))


def test_budget_share_plot_draws_the_allocation():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    details = {"a": {"procedure": "bandit", "path": [1, 2, 2, 2], "class_names": ["x", "y"],
                     "oracle_class": 2},
               "b": {"procedure": "coarse_grid", "path": [], "class_names": ["x", "y"]}}
    table = pd.DataFrame({"job": ["a", "b"], "method": ["bandit", "cg"], "dataset": ["d", "d"]})
    fig = plt.figure()
    budget_share(table, details, fig, method="bandit")
    ax = fig.axes[0]
    assert "T = 4" in ax.get_title() and "F_2" in ax.get_title()
    plt.close(fig)


# -- the nested loader ---------------------------------------------------------------------------
def test_nested_prefix_risks_match_the_true_rule():
    ds = load_nested(n_samples=60000, n_features=20, n_signal=6, decay=0.8, noise=0.7,
                     random_state=1)
    w = np.asarray(ds.info["weights"])
    for k in (1, 3, 6, 20):
        pred = (ds.X[:, :k] @ w[:k] > 0).astype(int)
        err = np.mean(pred != ds.y)
        assert abs(err - ds.info["prefix_risk"][k - 1]) < 4 * np.sqrt(0.25 / 60000)
    r = np.asarray(ds.info["prefix_risk"])
    assert np.all(np.diff(r[:6]) < 0) and np.allclose(r[6:], r[5])


def test_measured_cost_gives_the_costliest_class_one_quantum_of_samples(nested):
    X, y, *_ = nested
    est = BudgetedSelection(classes=prefix_classes([1, 12]), procedure="uniform", cost="measured",
                            cost_probe=500, budget=2, quantum=40, random_state=0).fit(X, y)
    assert est.per_quantum_.min() == 40
    assert est.per_quantum_[np.argmax(est.costs_)] == 40
    assert np.allclose(est.per_quantum_ * est.costs_, 40 * est.costs_.max(), rtol=0.05)

"""Every scoring method of ``safeclf methods`` certified post hoc (``certify: {how:
threshold}``, safeclf/guarantees/certify/posthoc.py) for a rate, a per-group rate and a fairness
ratio over three
groups: the certified rule keeps the joint promise on a 100,000-row sample of the population in
all but a share δ of training draws (within binomial noise), through the plugins as the runner
fits them; and the runner's route end to end (saved model, predict, no solution)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest
from scipy.stats import binom

from safeclf._utils.blas import one_blas_thread
from safeclf.data.task import Part, Task
from safeclf.data.uncertainty import Uncertainty
from safeclf.guarantees.certify import certified_fit
from safeclf.guarantees.promises import rate_value
from safeclf.plugins import registry

GROUPS = np.array(["a", "b", "c"])
DELTA = 0.1

#: The promises, binding on this population: the error-optimal rule has FPR ≈ 0.05 overall
#: and in group b, and groups b and c get far fewer positives than a.
PROMISES = {
    "rate": [{"rate": "fpr", "max": 0.03}],
    "group_rate": [{"rate": "fpr", "max": 0.03, "subset": {"groups": ["b"]}}],
    "ratio": [{"rate": "fairness_ratio", "min": 0.8, "privileged": "a", "subset": {"groups": g}}
              for g in (["a", "b"], ["a", "c"])],
}
#: Rate, per-group rate and the two group ratios at once, compatible with each other (a ratio
#: of 0.8 raises the positives, and so the FPR, of groups b and c).
ALL = [{"rate": "fpr", "max": 0.5}, {"rate": "recall", "min": 0.4, "subset": {"groups": ["c"]}},
       *PROMISES["ratio"]]

#: Parameters that keep each method small and quick (every scoring method of the registry).
PARAMS = {
    "logreg": {}, "sgd": {"loss": "log_loss"}, "svm": {}, "group_thresholds": {"kappa": 0.8},
    "zafar": {}, "ramp": {"max_mm_iter": 5}, "mcsvm": {"n_tau": 3}, "robust_socp": {},
    "thresholded_svm": {}, "proset": {"n_candidates": 100},
    "budgeted_selection": {"classes": [{"method": "sgd", "params": {"loss": "log_loss"},
                                        "features": [2, 4, 6]}],
                           "budget": 8, "quantum": 200},
    "report_knn": {"k_max": 15, "cv": 3},
}
#: Registered methods left out, each with its reason.
SKIPPED = {"fairlearn_eg": "needs fairlearn, an optional extra (bench) that CI does not install"}
if importlib.util.find_spec("xgboost") is not None:
    PARAMS["report_xgboost"] = {"n_trials": 2, "n_trees": 20, "cv": 3}
else:
    SKIPPED["report_xgboost"] = "needs xgboost, an optional extra (bench) that CI does not install"
FAST = ("logreg", "sgd", "svm", "group_thresholds", "zafar")


def draw(n, rng):
    """Three groups of unequal size and base rate; the features include the group one-hot (so a
    threshold per group can be applied from X alone)."""
    g = GROUPS[rng.choice(3, n, p=[0.6, 0.3, 0.1])]
    x = rng.normal(size=(n, 3)) + (g == "a")[:, None] * 0.8
    y = (x[:, 0] + x[:, 1] + rng.normal(size=n) > 0.8).astype(int)
    return np.c_[x, (g == "a"), (g == "b"), (g == "c")].astype(float), y, g


def _part(X, y, g):
    return Part(X, y, {"groups": g, "baseline": (X[:, 0] > 0.5).astype(int),
                       "uncertainty": Uncertainty.from_intervals(X - 0.05, X + 0.05).to_rows()})


def _task(n, seed) -> Task:
    rng = np.random.default_rng(seed)
    return Task("population", _part(*draw(n, rng)), _part(*draw(50, rng)),
                _part(*draw(n // 3, rng)), {"privileged_group": "a"}, seed)


@pytest.fixture(scope="module")
def population():
    X, y, g = draw(100_000, np.random.default_rng(12345))
    return X, y == 1, {"groups": g}


def _fit(method, items, seed, n=1500):
    plugin = registry.get_method(method)
    with one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return certified_fit(plugin, PARAMS[method], _task(n, seed),
                             {"delta": DELTA, "fraction": 0.4, "how": "threshold"}, items, seed)


def _kept(outcome, population) -> bool:
    """Whether every promise of the certified rule holds on the population sample."""
    X, y_pos, rows = population
    pred = outcome.estimator.predict(X) == outcome.estimator.classes_[-1]
    for p in outcome.promises:
        value = rate_value(p.quantity, y_pos, pred, rows)
        if not (value <= p.bound if p.sense == "<=" else value >= p.bound):
            return False
    return True


def test_every_scoring_method_is_covered():
    scoring = {m for m in registry.method_names()
               if hasattr(registry.get_method(m).estimator, "decision_function")
               or hasattr(registry.get_method(m).estimator, "predict_proba")}
    assert scoring == set(PARAMS) | set(SKIPPED)


@pytest.mark.parametrize("kind", list(PROMISES))
def test_fast_methods_keep_the_promise_in_all_but_delta_of_draws(kind, population):
    """Many draws, the fast methods in turn: failures beyond the 99.9 % binomial quantile at δ
    would be a defect; most draws certify a rule, and not by predicting nothing. A draw whose
    certified rules are all degenerate on the training rows (safeclf.guarantees.trivial) ends in no
    solution by design: it counts as certified, and no returned rule is degenerate on the
    population (group_rate, seeds 1000-1029: 19 returned, 3 refused as degenerate)."""
    from safeclf.guarantees import trivial

    trials, failures, solved, values = (20 if kind == "ratio" else 30), 0, 0, []
    refused = 0
    X, y_pos, rows = population
    for seed in range(trials):
        out = _fit(FAST[seed % len(FAST)], PROMISES[kind], 1000 + seed)
        if not out.passed:
            refused += bool(out.record.get("degenerate_only"))
            continue
        solved += 1
        failures += not _kept(out, population)
        pred = out.estimator.predict(X) == out.estimator.classes_[-1]
        values.append(np.mean(pred))
        assert not trivial.degenerate(y_pos, y_pos, pred).degenerate
    assert solved + refused >= 0.7 * trials
    assert failures <= binom.ppf(0.999, trials, DELTA)
    assert np.median(values) > 0.05  # certified rules predict positives (not "nothing")


@pytest.mark.parametrize("method", sorted(PARAMS))
def test_each_method_certifies_the_joint_promise(method, population):
    """One or two draws per method (the slow ones once): a rule is certified for the rate, the
    per-group rate and both group ratios jointly, it keeps them all on the population, and
    the certificate records the predicted pass probability."""
    seeds = (0, 1) if method in FAST else (0,)
    for seed in seeds:
        out = _fit(method, ALL, seed, n=2000)
        assert out.passed, out.record.get("reason")
        assert _kept(out, population)
        assert 0 <= out.record["pass_probability"] <= 1
        assert {p.kind for p in out.promises} == {"high_confidence"}


# -- the runner's route ------------------------------------------------------------------------
def _csv(tmp_path, n=900, seed=3):
    X, y, g = draw(n, np.random.default_rng(seed))
    path = tmp_path / "three_groups.csv"
    lines = ["x1,x2,x3,grp,y"] + [f"{a:.6f},{b:.6f},{c:.6f},{gr},{t}"
                                   for (a, b, c), gr, t in zip(X[:, :3], g, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _spec(tmp_path, method_lines: str, seeds=1) -> str:
    data = _csv(tmp_path)
    return f"""
name: certified
seeds: {seeds}
save_models: true
datasets:
  - dataset: csv
    params: {{path: {data}, target: y, group: grp, privileged: a, group_as_feature: true}}
    preprocess: standardize
methods:
{method_lines}
metrics: [error, fairness_ratio]
"""


def test_a_certified_run_keeps_a_model_that_predicts_with_the_certified_rule(tmp_path, cli):
    import json

    import pandas as pd

    from safeclf.store import models

    spec = tmp_path / "s.yaml"
    spec.write_text(_spec(tmp_path, """  - method: logreg
    promises:
      - {rate: fairness_ratio, min: 0.8, subset: {groups: [a, b]}}
      - {rate: fairness_ratio, min: 0.8, subset: {groups: [a, c]}}
    certify: {delta: 0.1, fraction: 0.4}"""))
    out = tmp_path / "runs"
    assert cli("run", spec, "--out", out, "-j", "1").exit_code == 0
    run = next(out.iterdir())
    table = pd.read_csv(run / "metrics.csv", dtype={"job": str})  # "7898385156e17" is an id
    assert (table.status == "ok").all() and (table.no_solution == 0).all()
    assert table.certify_pass_probability.between(0, 1).all()
    promises = pd.read_csv(run / "promises.csv")
    assert set(promises.kind) == {"high_confidence"}
    job = table.job[0]
    meta = json.loads((run / "models" / f"{job}.json").read_text())
    assert meta["estimator"] == "safeclf.guarantees.certify.threshold.CertifiedClassifier"
    assert meta["certificate"]["how"] == "threshold" and "per_group" in meta["certificate"]["rule"]
    predicted = tmp_path / "pred.csv"
    assert cli("predict", run, "--job", job, "--data", _csv(tmp_path), "--out",
               predicted).exit_code == 0
    pipeline = models.load(run / "models" / f"{job}.skops")
    rows = pd.read_csv(tmp_path / "three_groups.csv")
    X = np.c_[rows[["x1", "x2", "x3"]].to_numpy(), pd.get_dummies(rows.grp).to_numpy(float)]
    cc = pipeline[-1]
    Xs = pipeline[0].transform(X)
    g = cc.group_encoding_.groups_of(Xs)
    assert np.array_equal(g, rows.grp.to_numpy())  # the group is read back from X alone
    expected = cc.estimator_.decision_function(Xs) > cc.rule_.thresholds({"groups": g})
    assert np.array_equal(pd.read_csv(predicted).prediction.to_numpy() == 1, expected)


def test_no_solution_gives_no_model_and_its_reason_in_the_tables(tmp_path, cli):
    import json

    import pandas as pd

    spec = tmp_path / "s.yaml"
    spec.write_text(_spec(tmp_path, """  - method: logreg
    promises: [{rate: fpr, max: 0.001}, {rate: recall, min: 0.999}]
    certify: {delta: 0.05}"""))
    out = tmp_path / "runs"
    res = cli("run", spec, "--out", out, "-j", "1")
    assert res.exit_code == 0
    console = " ".join(res.output.split())
    assert "returned no model" in console and "not certified at δ = 0.05" in console
    assert "n_needed" in console
    run = next(out.iterdir())
    table = pd.read_csv(run / "metrics.csv")
    assert (table.status == "no_solution").all() and (table.no_solution == 1).all()
    # the reason names the promise that failed, its certified limit against its bound, and
    # what would change the outcome; nothing claims that a promise holds
    assert table.error[0].startswith("no model: the safest rule of the path")
    assert "not certified at δ = 0.05" in table.error[0] and "next: " in table.error[0]
    assert "certified upper limit" in table.error[0] or "certified lower limit" in table.error[0]
    promises = pd.read_csv(run / "promises.csv")
    assert set(promises.verdict) == {"no solution"}
    assert promises.note.str.contains("not certified at δ = 0.05").all()
    assert not promises.note.str.contains("hold jointly").any()
    assert promises.statement.str.contains("not certified, no model returned").all()
    page = (run / "report.html").read_text()
    assert "<h3>No solution</h3>" in page and "not certified at δ = 0.05" in page
    assert "n_needed" in page and "next: " in page
    assert not (run / "models").exists() or not list((run / "models").glob("*.skops"))
    result = json.loads(next((run / "results").glob("*.json")).read_text())
    assert "pass_probability" in result["certification"]


def test_declared_promises_without_certify_are_checked_as_declared(tmp_path, cli):
    import pandas as pd

    spec = tmp_path / "s.yaml"
    spec.write_text(_spec(tmp_path, """  - method: svm
    promises: [{rate: fairness_ratio, min: 0.8}]"""))
    out = tmp_path / "runs"
    assert cli("run", spec, "--out", out, "-j", "1").exit_code == 0
    promises = pd.read_csv(next(out.iterdir()) / "promises.csv")
    # three groups: one promise per group against the privileged one (safeclf.guarantees.groups)
    assert list(promises.promise) == ["declared_fairness_ratio_b", "declared_fairness_ratio_c"]
    assert list(promises.kind) == ["declared", "declared"]
    assert set(promises.verdict) <= {"holds", "violated", "inconclusive"}


def test_a_method_that_cannot_score_is_refused():
    from sklearn.base import BaseEstimator, ClassifierMixin

    from safeclf.errors import SpecError
    from safeclf.plugins.contract import MethodPlugin
    from safeclf.spec.check import _check_certify
    from safeclf.spec.schema import MethodEntry

    class Labels(ClassifierMixin, BaseEstimator):  # predict only
        def fit(self, X, y):
            return self

    entry = MethodEntry(method="labels", promises=[{"rate": "fpr", "max": 0.1}],
                        certify={"delta": 0.05})
    with pytest.raises(SpecError, match=r"methods\[0\]\.certify: method 'labels' gives no "
                                        r"score \(decision_function or predict_proba\)"):
        _check_certify(entry, MethodPlugin("labels", Labels), "methods[0]")

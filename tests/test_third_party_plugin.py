"""A third-party plugin, installed on the fly as a distribution with an ``entry_points.txt``
on ``sys.path``, found by the real registry and run end to end: its needs stop a bad spec
before running, its parameters are checked at the spec's place, the metric names it declares
check expectations and plots before running, its metrics, promises and plot reach the run
folder, and its distribution is named in the manifest."""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest

PACKAGE = '''
import numpy as np
from numbers import Real

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import Interval

from safeclf.data.task import Dataset
from safeclf.plugins.contract import DatasetPlugin, MethodPlugin, Report
from safeclf.guarantees.promises import Promise, Quantity


class GroupAwareLogReg(ClassifierMixin, BaseEstimator):
    """Logistic regression; with ``balance_groups`` each group gets equal total weight."""

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")],
                              "balance_groups": ["boolean"], "weights": [dict, None]}

    def __init__(self, C=1.0, balance_groups=False, weights=None):
        self.C = C
        self.balance_groups = balance_groups
        self.weights = weights

    def _validate_params(self):
        super()._validate_params()
        for key, value in (self.weights or {}).items():
            if not value > 0:
                raise ValueError(f"weights.{key} must be > 0, got {value!r}")

    def fit(self, X, y, groups=None):
        self._validate_params()
        w = np.ones(len(y))
        if self.balance_groups:
            g = np.asarray(groups)
            for label in np.unique(g):
                w[g == label] = len(g) / (np.sum(g == label) * np.unique(g).size)
        self.model_ = LogisticRegression(C=self.C).fit(X, y, sample_weight=w)
        self.classes_ = self.model_.classes_
        self.n_iter_ = self.model_.n_iter_
        self.solver_status_ = "optimal"
        return self

    def predict(self, X):
        return self.model_.predict(X)


class ToyPlugin(MethodPlugin):
    def needs_for(self, params):
        return ("groups",) if params.get("balance_groups") else ()

    def metric_names(self, params):
        return ("fit_seconds",) if params.get("C") == 123.0 else ("coef_norm",)

    def report(self, estimator, task):
        name = "fit_seconds" if estimator.C == 123.0 else "coef_norm"
        return Report({name: float(np.linalg.norm(estimator.model_.coef_))},
                      {"intercept": float(estimator.model_.intercept_[0])})


    def promises(self, estimator, task):
        """Error at most 0.4 on new data (a toy claim, checked on the test split); with
        ``balance_groups``, a training-only ratio s_p(b)/s_p(a) >= 0.5."""
        out = [Promise("error", "P(error) <= 0.4", Quantity("rate", "error"), "<=", 0.4,
                       "expectation", "toyplug")]
        if estimator.balance_groups:
            out.append(Promise("ratio", "s_p(b)/s_p(a) >= 0.5 (training)",
                               Quantity("ratio", privileged="a"), ">=", 0.5, "training",
                               "toyplug"))
        return out


def coef_plot(table, details, fig, **options):
    ax = fig.add_subplot(1, 1, 1)
    SEEN.append((sorted(table["status"].unique()), sorted(table["method"].unique()),
                 sorted(details), options))
    ax.plot(table["coef_norm"], "o")


SEEN = []

method = ToyPlugin(name="toy_logreg", estimator=GroupAwareLogReg, summary="toy",
                   plots={"coef_norm": coef_plot})


def load_toy(n: int = 120, with_groups: bool = True):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    rows = {"groups": np.where(X[:, 1] > 0, "a", "b")} if with_groups else {}
    return Dataset("toy_groups", X, y, rows=rows)


dataset = DatasetPlugin("toy_groups", load_toy, "toy", provides=("groups",))
'''


@pytest.fixture
def toy_plugin(tmp_path, monkeypatch):
    from safeclf.plugins import registry

    root = tmp_path / "site"
    (root / "toyplug").mkdir(parents=True)
    (root / "toyplug" / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    info = root / "toyplug-0.3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug\nVersion: 0.3.1\n"
                                   "Requires-Dist: scikit-learn\n")
    (info / "entry_points.txt").write_text(
        "[safeclf.methods]\ntoy_logreg = toyplug:method\n\n"
        "[safeclf.datasets]\ntoy_groups = toyplug:dataset\n")
    monkeypatch.syspath_prepend(str(root))
    registry.clear_cache()
    yield root
    registry.clear_cache()


def _spec(write_spec, methods: str, dataset="{dataset: toy_groups}", plots="[]"):
    return write_spec(f"""
        name: toy
        seeds: 1
        datasets: [{dataset}]
        methods: {methods}
        plots: {plots}
        """)


def test_registry_finds_it(toy_plugin):
    from safeclf.plugins import registry

    assert "toy_logreg" in registry.method_names()
    assert registry.get_method("toy_logreg").name == "toy_logreg"
    assert registry.distributions(["toy_logreg", "svm"], ["toy_groups"]) == {
        "toyplug": "0.3.1", "safeclf": __import__("safeclf").__version__}


def test_its_needs_stop_a_bad_spec_before_running(toy_plugin, cli, write_spec, tmp_path):
    spec = _spec(write_spec, "[{method: toy_logreg, params: {balance_groups: true}}]",
                 "{dataset: toy_groups, params: {with_groups: false}}")
    for args in (("run", spec, "--dry-run"), ("validate", spec)):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert result.output.strip() == (
            "error: methods[0] (toy_logreg) on datasets[0] (toy_groups) needs 'groups', which "
            "the dataset does not provide (it provides nothing beyond X and y)")
    ok = _spec(write_spec, "[{method: toy_logreg, params: {balance_groups: false}}]",
               "{dataset: toy_groups, params: {with_groups: false}}")
    assert cli("validate", ok).exit_code == 0


@pytest.mark.parametrize("params, message", [
    ("{C: -1}", "error: methods[0].params.C must be a float in the range (0.0, inf), got -1"),
    ("{weights: {a: 0}}", "error: methods[0].params.weights.a must be > 0, got 0"),
    ("{CC: 1}", "error: methods[0].params.CC is not a parameter of method 'toy_logreg' "
                "(did you mean 'C'?)"),
])
def test_its_parameters_are_checked_at_the_spec_place(toy_plugin, cli, write_spec, params,
                                                       message):
    result = cli("validate", _spec(write_spec, f"[{{method: toy_logreg, params: {params}}}]"))
    assert result.exit_code == 2 and result.output.strip() == message


def test_its_metrics_plot_and_distribution_reach_the_run(toy_plugin, cli, write_spec, tmp_path):
    import toyplug

    spec = _spec(write_spec, "[{method: toy_logreg, params: {balance_groups: {grid: [false, true]}}},"
                             " {method: toy_logreg, name: reserved, params: {C: 123.0}}]",
                 plots="[{kind: coef_norm, methods: [toy_logreg], extra: 1}]")
    result = cli("run", spec, "--out", tmp_path / "runs", "--jobs", "1")
    assert result.exit_code == 1, result.output  # the job reporting 'fit_seconds' fails
    run = next((tmp_path / "runs").iterdir())
    table = pd.read_parquet(run / "metrics.parquet")
    mine = table[table.method == "toy_logreg"]
    assert (mine.status == "ok").all() and (mine.coef_norm > 0).all()
    assert set(mine.solver_status) == {"optimal"} and (mine.n_iter >= 1).all()
    bad = table[table.method == "reserved"].iloc[0]
    assert bad.status == "failed" and "reports a metric named 'fit_seconds'" in bad.error
    records = [json.loads(p.read_text()) for p in (run / "results").glob("*.json")]
    assert all("intercept" in r["details"] for r in records if r["status"] == "ok")
    # the plugin's plot got the successful rows its filter selects, and its own options
    statuses, methods, details, options = toyplug.SEEN[-1]
    assert statuses == ["ok"] and methods == ["toy_logreg"] and options == {"extra": 1}
    assert len(details) == 3
    assert (run / "plots" / "coef_norm_0.png").is_file()
    # its promises: one row per ok job and promise, each checked on the test split
    promises = pd.read_csv(run / "promises.csv")
    promises = promises[promises.method == "toy_logreg"]
    assert sorted(promises.promise) == ["error", "error", "ratio"]
    err = promises[promises.promise == "error"]
    assert (err.kind == "expectation").all() and (err.bound == 0.4).all()
    assert (err.lower <= err.estimate).all() and (err.estimate <= err.upper).all()
    assert (err.n == 36).all()  # the test split of 120 rows (split test 0.3)
    assert (err.verdict == "holds").all()  # about 10% errors: the whole interval below 0.4
    ratio = promises[promises.promise == "ratio"].iloc[0]
    assert ratio.kind == "training" and ratio.sense == ">=" and ratio.verdict in (
        "holds", "violated", "inconclusive")
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["plugins"]["toyplug"] == "0.3.1"
    assert "scikit-learn" in manifest["packages"]


@pytest.mark.parametrize("where, spec_part, message", [
    ("expect", "expect: [{metric: coef_nrm, method: toy_logreg, '<=': 1, source: project}]",
     "error: expect[0].metric: no method selected reports 'coef_nrm' (did you mean "
     "'coef_norm'?)"),
    ("plot", "plots: [{kind: line, x: param.C, y: coef_nrm}]",
     "error: plots[0].y: no method reports 'coef_nrm' (did you mean 'coef_norm'?)"),
])
def test_its_declared_metric_names_check_expectations_and_plots(toy_plugin, cli, write_spec,
                                                                 where, spec_part, message):
    """The plugin declares the metric names its report gives: a misspelt one in an
    expectation or a plot stops validate and run --dry-run with one line, exit 2."""
    bad = write_spec(f"name: toy\nseeds: 1\ndatasets: [{{dataset: toy_groups}}]\n"
                     f"methods: [{{method: toy_logreg}}]\n{spec_part}\n")
    for args in (("validate", bad), ("run", bad, "--dry-run")):
        result = cli(*args)
        assert result.exit_code == 2 and result.output.strip() == message, result.output
    good = write_spec(f"name: toy\nseeds: 1\ndatasets: [{{dataset: toy_groups}}]\n"
                      f"methods: [{{method: toy_logreg}}]\n"
                      f"{spec_part.replace('coef_nrm', 'coef_norm')}\n", "good.yaml")
    assert cli("validate", good).exit_code == 0


def test_a_name_given_twice_is_an_error(toy_plugin, write_spec, cli):
    info = toy_plugin / "toyplug_fork-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyplug-fork\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[safeclf.methods]\ntoy_logreg = toyplug:dataset\n")
    from safeclf.plugins import registry

    registry.clear_cache()
    result = cli("validate", _spec(write_spec, "[{method: toy_logreg}]"))
    assert result.exit_code == 2
    assert "method 'toy_logreg' is given by more than one installed distribution" in result.output
    assert "toyplug 0.3.1" in result.output and "toyplug-fork 1.0" in result.output

"""Promises as data, checked on held-out data: intervals (with a coverage simulation for the
ratio), verdicts, every method family's declared promises on small data, and certified
training's pass / no-solution outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.data.task import Part, Task
from safeclf.guarantees import promises as P
from safeclf.guarantees.bounds import BOUNDS


# -- intervals and verdicts ------------------------------------------------------------------
def test_clopper_pearson_is_exact_at_the_edges_and_covers():
    assert P.clopper_pearson(0, 20)[0] == 0.0 and P.clopper_pearson(20, 20)[1] == 1.0
    lo, hi = P.clopper_pearson(5, 50, 0.95)
    assert lo < 0.1 < hi
    # the one-sided upper bound at δ is the (1 − δ) quantile: (1 − p)^n = δ for k = 0
    assert BOUNDS["clopper_pearson"].upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    rng = np.random.default_rng(0)
    p, n = 0.07, 80
    ks = rng.binomial(n, p, 4000)
    cover = np.mean([lo <= p <= hi for lo, hi in (P.clopper_pearson(k, n) for k in ks)])
    assert cover >= 0.95  # exact: never below the nominal level


@pytest.mark.parametrize("p1,p2,n1,n2", [(0.16, 0.2, 400, 800), (0.08, 0.3, 150, 300),
                                         (0.5, 0.5, 60, 60)])
def test_katz_ratio_interval_coverage_by_simulation(p1, p2, n1, n2):
    """The Katz log interval's coverage of p1/p2 at 95% is within 0.93-0.975 over 3000
    draws (binomial noise of a coverage estimate: ±0.008) in the regimes the runs meet."""
    rng = np.random.default_rng(1)
    k1, k2 = rng.binomial(n1, p1, 3000), rng.binomial(n2, p2, 3000)
    hit = [lo <= p1 / p2 <= hi for lo, hi in
           ((P.katz_ratio(a, n1, b, n2, 0.95)[1:]) for a, b in zip(k1, k2))]
    assert 0.93 <= np.mean(hit) <= 0.975


def test_verdicts_are_direction_aware():
    assert P.verdict("<=", 0.1, 0.02, 0.08) == "holds"
    assert P.verdict("<=", 0.1, 0.12, 0.2) == "violated"
    assert P.verdict("<=", 0.1, 0.05, 0.15) == "inconclusive"
    assert P.verdict(">=", 0.8, 0.85, 0.95) == "holds"
    assert P.verdict(">=", 0.8, 0.5, 0.7) == "violated"
    assert P.verdict(">=", 0.8, 0.75, 0.9) == "inconclusive"


def test_rate_and_ratio_evidence():
    y = np.array([1, 1, 0, 0, 0, 0, 1, 0], bool)
    pred = np.array([1, 0, 1, 0, 0, 1, 1, 0], bool)
    g = np.array(["M", "M", "M", "M", "F", "F", "F", "F"])
    joint = P.rate_evidence(P.Quantity("rate", label="negative", joint=True), y, pred, {})
    fpr = P.rate_evidence(P.Quantity("rate", label="negative"), y, pred, {})
    assert (joint.k, joint.n) == (2, 8) and (fpr.k, fpr.n) == (2, 5)
    ratio = P.rate_evidence(P.Quantity("ratio", privileged="M"), y, pred, {"groups": g})
    assert (ratio.k, ratio.n, ratio.k2, ratio.n2) == (2, 4, 2, 4)
    eo = P.rate_evidence(P.Quantity("ratio", label="positive", privileged="M"), y, pred,
                         {"groups": g})
    assert (eo.k, eo.n, eo.k2, eo.n2) == (1, 1, 1, 2)


class _Fixed:
    """A 'model' whose predictions are given."""

    classes_ = np.array([0, 1])

    def __init__(self, pred):
        self.pred = pred

    def predict(self, X):
        return self.pred[: len(X)]


def _task(y, groups=None):
    rows = {} if groups is None else {"groups": groups}
    part = Part(np.zeros((len(y), 1)), np.asarray(y), rows)
    return Task("toy", part, part)


@pytest.mark.parametrize("k,verdict", [(10, "holds"), (100, "inconclusive"), (200, "violated")])
def test_each_verdict_from_a_rate_promise(k, verdict):
    n = 1000
    y = np.zeros(n, int)
    pred = np.zeros(n, int)
    pred[:k] = 1  # k false positives among n negatives
    promise = P.Promise("fpr", "FPR ≤ 0.1", P.Quantity("rate", label="negative"), "<=", 0.1,
                        "high_confidence", "test", delta=0.05)
    from safeclf.plugins.contract import MethodPlugin

    rec = P.check(MethodPlugin("fixed", _Fixed), [promise], _Fixed(pred), _task(y), 0.95)[0]
    assert rec["verdict"] == verdict and rec["n"] == n
    assert rec["estimate"] == pytest.approx(k / n)
    assert rec["beyond"] == (k / n > 0.1)
    assert rec["lower"] <= k / n <= rec["upper"]


# -- each family -----------------------------------------------------------------------------
def _two_gaussians(n, seed, shift=1.5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    X = rng.normal(size=(n, 2)) + shift * (2 * y - 1)[:, None]
    return X, y


def test_mcsvm_promises_per_calibration_method():
    from safeclf.methods.mcsvm import plugin
    from safeclf.methods.mcsvm.estimator import MultiCostSVM

    X, y = _two_gaussians(900, 0, 1.0)
    tr, cal, te = slice(0, 300), slice(300, 600), slice(600, 900)
    task = Task("g", Part(X[tr], y[tr]), Part(X[te], y[te]), Part(X[cal], y[cal]))
    kinds = {}
    for method in ("probabilistic_scaling", "conformal", "quantile", "bias_adjustment", "none"):
        est = MultiCostSVM(n_tau=3, calibration=method, epsilon=0.1, delta=0.1)
        est.fit(X[tr], y[tr], X_cal=X[cal], y_cal=y[cal])
        (p,) = plugin.promises(est, task)
        kinds[method] = (p.name, p.kind)
        rec = P.check(plugin, [p], est, task, 0.95)[0]
        if p.kind != "none":
            assert rec["verdict"] in ("holds", "inconclusive") and rec["n"] > 0
        else:
            assert rec["verdict"] == "no promise"
    assert kinds["probabilistic_scaling"] == ("joint_fp_rate", "high_confidence")
    assert kinds["conformal"] == ("fpr", "expectation")
    assert kinds["quantile"][1] == kinds["bias_adjustment"][1] == kinds["none"][1] == "none"
    # calibrated on the training data (no calibration set): no promise
    with pytest.warns(UserWarning):
        est = MultiCostSVM(n_tau=3, epsilon=0.1, delta=0.1).fit(X[tr], y[tr])
    assert plugin.promises(est, task)[0].kind == "none"


def test_ramp_promise_per_constraint_checked_on_test():
    from safeclf.methods.ramp import RampClassifier, plugin

    rng = np.random.default_rng(3)
    n = 1500
    g = np.where(rng.random(n) < 0.5, "M", "F")
    y = (rng.random(n) < np.where(g == "M", 0.5, 0.25)).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[1.2 * (2 * y - 1), 0.8 * (g == "M"), np.zeros(n)]
    rows = {"groups": g}
    task = Task("toy", Part(X[:1000], y[:1000], {"groups": g[:1000]}),
                Part(X[1000:], y[1000:], {"groups": g[1000:]}), info={"privileged_group": "M"})
    # λ fixed (as the next test fixes it): what is checked here is the promises the
    # constraints make, which do not depend on how λ was chosen (test_ramp_lam.py checks the
    # cross-validated choice, 75 fits here)
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.8},
                                      {"rate": "fpr", "max": 0.3}], lam="1/n")
    est = plugin.fit(est, task) or est
    ps = plugin.promises(est, task)
    assert [p.name for p in ps] == ["constraint_fairness_ratio", "constraint_fpr"]
    assert [(p.sense, p.bound, p.kind) for p in ps] == [(">=", 0.8, "training"),
                                                        ("<=", 0.3, "training")]
    assert ps[0].quantity.privileged == "M"
    recs = P.check(plugin, ps, est, task, 0.95)
    pred = est.predict(X[1000:]) == 1
    gt = g[1000:]
    ratio = pred[gt == "F"].mean() / pred[gt == "M"].mean()
    assert recs[0]["estimate"] == pytest.approx(ratio)
    assert recs[0]["lower"] < ratio < recs[0]["upper"]
    assert recs[1]["n"] == int((y[1000:] == 0).sum())
    del rows


def test_a_ramp_training_promise_gets_each_verdict_from_the_data_it_meets():
    """One fitted model, one training-only promise (ratio ≥ 0.5, about inactive: the model's own
    ratio is about 0.58): held on a large test part like the training data, inconclusive on a
    small one, violated on one where the protected group's features shift away from the
    positives (a covariate shift the training data never showed)."""
    from safeclf.methods.ramp import RampClassifier, plugin

    def part(n, seed, shift_f=0.0):
        rng = np.random.default_rng(seed)
        g = np.where(rng.random(n) < 0.5, "M", "F")
        y = (rng.random(n) < np.where(g == "M", 0.5, 0.25)).astype(int)
        X = rng.normal(size=(n, 3)) + np.c_[1.2 * (2 * y - 1) - shift_f * (g == "F"),
                                             0.8 * (g == "M"), np.zeros(n)]
        return Part(X, y, {"groups": g})

    train = part(1000, 0)
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.5}], lam="1/n")
    verdicts = {}
    for name, test in (("same", part(20000, 1)), ("small", part(30, 2)),
                       ("shifted", part(20000, 3, shift_f=2.5))):
        task = Task("toy", train, test, info={"privileged_group": "M"})
        if name == "same":
            est = plugin.fit(est, task) or est
        (p,) = plugin.promises(est, task)
        rec = P.check(plugin, [p], est, task, 0.95)[0]
        pred = est.predict(test.X) == 1
        g = np.asarray(test.rows["groups"])
        assert rec["estimate"] == pytest.approx(pred[g == "F"].mean() / pred[g == "M"].mean())
        assert rec["lower"] <= rec["estimate"] <= rec["upper"]
        verdicts[name] = rec["verdict"]
    assert verdicts == {"same": "holds", "small": "inconclusive", "shifted": "violated"}


def test_robust_socp_chance_constraint_holds_with_a_valid_bound():
    from safeclf.datasets.uncertain import load_uncertain_synthetic
    from safeclf.execution.job import split_task
    from safeclf.methods.robust_socp import plugin
    from safeclf.methods.robust_socp.estimator import RobustSOCPClassifier

    ds = load_uncertain_synthetic(n_samples=300, separation=3.0, random_state=1)
    task = split_task(ds, {"dataset": "u", "split": {"test": 0.5}}, 0, None)
    est = RobustSOCPClassifier(formulation="MM-SBMV", epsilon=0.1, C=10, n_monte_carlo=0)
    est = plugin.fit(est, task) or est
    (p,) = plugin.promises(est, task)
    assert (p.name, p.kind, p.bound) == ("chance_constraint", "worst_case", 0.1)
    rec = P.check(plugin, [p], est, task, 0.95)[0]
    # 150 test points × 20 realisations of the true law: the Bernstein bound is conservative,
    # so violations are far rarer than ε
    assert rec["n"] == 150 * 20 and rec["verdict"] == "holds" and rec["upper"] < 0.1
    # without realisations: the adverse two-point law
    R = np.asarray(task.test.rows.pop("realisations"), float)
    rec = P.check(plugin, [p], est, task, 0.95)[0]
    assert rec["n"] == 150 * 20 and rec["estimate"] <= 0.1 and "two-point" in rec["note"]
    # every realisation moved 3 units across the boundary, far outside each point's support:
    # a law the promise never covered, and the check says so
    y_pm = np.where(task.test.y == est.classes_[1], 1.0, -1.0)
    step = 3.0 * est.coef_ / np.linalg.norm(est.coef_)
    task.test.rows["realisations"] = R - y_pm[:, None, None] * step[None, None, :]
    rec = P.check(plugin, [p], est, task, 0.95)[0]
    assert rec["verdict"] == "violated" and rec["lower"] > 0.1 and rec["n"] == 150 * 20
    svm = RobustSOCPClassifier(formulation="SVM").fit(task.train.X, task.train.y)
    assert plugin.promises(svm, task)[0].kind == "none"


def test_selection_and_baselines_promise_nothing_and_say_why():
    from safeclf.plugins import registry

    for name in ("svm", "logreg", "proset", "budgeted_selection", "zafar"):
        plugin = registry.get_method(name)
        est = plugin.build({} if name != "budgeted_selection" else {
            "classes": [{"method": "logreg"}]})
        ps = plugin.promises(est, None)
        assert len(ps) == 1 and ps[0].kind == "none" and ps[0].statement.startswith(name)


# -- certified training ----------------------------------------------------------------------
def test_a_certified_job_with_missing_rows_fails_with_one_line():
    from safeclf.execution.job import run_job

    payload = {
        "job": {"id": "j", "dataset": "adultish", "method": "ramp", "plugin": "ramp",
                "params": {"constraints": [{"rate": "fairness_ratio", "kappa": 0.95}]},
                "seed": 0, "fold": None},
        "dataset": {"dataset": "breast_cancer", "split": {"test": 0.9}},
        "method": {"method": "ramp", "certify": {"delta": 0.05, "fraction": 0.3}},
        "metrics": ["error"], "confidence": 0.95}
    # breast_cancer has no groups: a user error (failed, naming the rows), not a no-solution
    r = run_job(payload)
    assert r.failed and "needs 'groups'" in r.error


def test_a_certified_job_without_solution_is_recorded_and_counted(tmp_path):
    """End to end through the runner: no_solution jobs are not failures, carry
    ``no_solution = 1`` and promise columns with beyond = 0, and appear in promises.csv."""
    import pandas as pd

    from safeclf.execution.options import Options
    from safeclf.execution.runner import run

    spec = tmp_path / "s.yaml"
    spec.write_text("""
name: cert
seeds: 2
datasets:
  - {dataset: adult, split: {predefined: true, train_rows: 80}, preprocess: minmax}
methods:
  - method: ramp
    params: {constraints: [{rate: fairness_ratio, kappa: 0.8}]}
    certify: {delta: 0.05, fraction: 0.3}
metrics: [error, fairness_ratio]
expect:
  - {metric: no_solution, method: ramp, agg: mean, "<=": 1.0, source: invariant}
""")
    out = run(spec, Options(out=tmp_path / "runs", jobs=1, check=True))
    assert out.exit_code == 0 and out.failed == 0
    statuses = {r.status.value for r in out.results}
    assert statuses <= {"ok", "no_solution"} and "no_solution" in statuses
    frame = pd.read_csv(out.run_dir / "promises.csv")
    assert set(frame["verdict"]) <= {"holds", "inconclusive", "violated", "no solution"}
    table = pd.read_csv(out.run_dir / "metrics.csv")
    ns = table[table.status == "no_solution"]
    assert (ns["no_solution"] == 1).all()
    assert (ns["promise_constraint_fairness_ratio_beyond"] == 0).all()


def test_bar_plot_draws_the_promised_bound_and_the_promise_plot_draws_intervals():
    import pandas as pd

    from safeclf.report import verdicts as promise_report
    from safeclf.report.plots import builtin as plots
    from safeclf.spec.schema import PlotEntry

    frame = pd.DataFrame({"dataset": ["d", "d"], "method": ["scaling", "scaling"],
                          "params": ["{}", "{}"], "status": ["ok", "ok"],
                          "test_joint_fp_rate": [0.03, 0.04]})
    fig = plots.bar(frame, PlotEntry(kind="bar", metric="test_joint_fp_rate", bound=0.05),
                    plots._figure(1))
    lines = [ln for ln in fig.axes[0].lines if list(ln.get_ydata()) == [0.05, 0.05]]
    assert len(lines) == 1
    results = [{"id": f"j{s}", "dataset": "d", "method": "m", "params": {}, "seed": s,
                "fold": None, "status": "ok",
                "promises": [P.judge(P.Promise("fpr", "FPR ≤ 0.1", P.Quantity(), "<=", 0.1,
                                               "expectation", "x"),
                                     P.Evidence(k, 100), 0.95).record()]}
               for s, k in enumerate((2, 30))]
    frame = promise_report.promises_frame(results)
    assert list(frame["verdict"]) == ["holds", "violated"]
    fig = promise_report.plot(frame)
    ax = fig.axes[0]
    assert any(list(ln.get_xdata()) == [0.1, 0.1] for ln in ax.lines)  # the bound
    assert sum(len(ln.get_xdata()) == 2 and ln.get_xdata()[0] != 0.1 for ln in ax.lines) == 2
    assert "2 jobs" in promise_report.summary(frame).iloc[0]["interval"]

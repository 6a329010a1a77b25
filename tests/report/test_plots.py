"""Default plots a reader understands: every varying parameter kept apart, numbers sorted as
numbers, labels in words with the papers' symbols, no empty panels, log axes over decades."""

from __future__ import annotations

import pytest

from safeclf.report.plots.builtin import BUILTIN, _figure, _with_values, axis_label
from safeclf.spec.schema import PlotEntry
from safeclf.store.folder import results_table
from safeclf.store.result import JobResult


def _frame(rows):
    return results_table([JobResult.from_record(
        dict({"fold": None, "status": "ok", "error": None}, id=f"j{i}", **r))
        for i, r in enumerate(rows)])


def _draw(frame, **entry):
    p = PlotEntry(**entry)
    rows = _with_values(frame, p)
    return BUILTIN[p.kind](rows, p, _figure(rows["dataset"].nunique()))


def test_axis_labels_use_words_and_symbols():
    assert axis_label("param.epsilon") == "ε"
    assert axis_label("param.kappa") == "κ"
    assert axis_label("param.n_tau") == "number of τ values (n_τ)"
    assert axis_label("test_fpr") == "false-positive rate (test)"
    assert axis_label("test_fairness_ratio") == "fairness ratio s_p(protected) / s_p(privileged) (test)"
    assert axis_label("train_error") == "error (training)"
    assert axis_label("margin") == "margin"
    assert axis_label("n_model_classes") == "number of model classes"


def test_bars_sorted_numerically_and_labelled():
    frame = _frame([{"dataset": "d", "method": "svm", "params": {"C": c}, "seed": s,
                     "metrics": {"test_error": 0.1 * c}} for c in (15, 1, 5) for s in (0, 1)])
    fig = _draw(frame, kind="bar", metric="test_error")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["svm (C=1)", "svm (C=5)", "svm (C=15)"]
    assert ax.get_ylabel() == "error (test)"
    assert ax.get_yscale() == "linear"


def test_line_keeps_every_other_varying_parameter_apart_and_logs_decades():
    rows = [{"dataset": "d", "method": "robust", "params": {"epsilon": e, "formulation": f},
             "seed": s, "metrics": {"margin": (10.0 ** (3 * k)) * e}}
            for k, f in enumerate(["MM-SMV", "MM-MC", "MM-SBMV"]) for e in (0.01, 0.1) for s in (0, 1)]
    fig = _draw(_frame(rows), kind="line", x="param.epsilon", y="margin")
    ax = fig.axes[0]
    labels = sorted(line.get_label() for line in ax.get_lines())
    assert labels == ["formulation=MM-MC", "formulation=MM-SBMV", "formulation=MM-SMV"]
    assert len({line.get_color() for line in ax.get_lines()}) == 3
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "formulation=MM-MC", "formulation=MM-SBMV", "formulation=MM-SMV"]
    assert ax.get_xlabel() == "ε" and ax.get_yscale() == "log"


def test_no_panel_for_a_dataset_without_values_and_no_empty_legend():
    rows = [{"dataset": "a", "method": "m", "params": {}, "seed": 0,
             "metrics": {"test_error": 0.1, "test_fpr": 0.2}},
            {"dataset": "b", "method": "m", "params": {}, "seed": 0,
             "metrics": {"test_error": 0.2, "test_fpr": None}}]
    fig = _draw(_frame(rows), kind="scatter", x="test_error", y="test_fpr")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["a"]
    assert len(fig.legends) == 1 and visible[0].get_legend() is None  # one legend, outside
    unlabelled = _frame([dict(rows[0], method="")])
    fig = _draw(unlabelled, kind="scatter", x="test_error", y="test_fpr")
    assert not fig.legends
    assert _with_values(_frame(rows), PlotEntry(kind="bar", metric="test_roc_auc")).empty


@pytest.mark.parametrize("values, scale", [((1e-3, 1.0), "log"), ((0.2, 0.9), "linear"),
                                           ((-1.0, 100.0), "linear")])
def test_log_axis_only_over_decades_of_positive_values(values, scale):
    rows = [{"dataset": "d", "method": "m", "params": {"C": i}, "seed": 0,
             "metrics": {"test_error": v}} for i, v in enumerate(values)]
    fig = _draw(_frame(rows), kind="bar", metric="test_error")
    assert fig.axes[0].get_yscale() == scale


# --------------------------------------------------------------------------------------------
# the frontier and the Seldonian experiment (issue 23 item 7, issue 22 item 7), one style


def _spec(text):
    import yaml

    from safeclf.spec.check import check, parse

    spec = parse(yaml.safe_load(text))
    check(spec)
    return spec


SELDONIAN_SPEC = """
name: s
seeds: 4
datasets:
  - {dataset: breast_cancer, name: small, split: {train_rows: 50}}
  - {dataset: breast_cancer, name: large, split: {train_rows: 200}}
methods:
  - {method: ramp, name: plain, params: {constraints: [{rate: fpr, max: 0.2}]}}
  - method: ramp
    name: certified
    params: {constraints: [{rate: fpr, max: 0.2}]}
    certify: {delta: 0.1, fraction: 0.3}
metrics: [error, fpr]
plots:
  - {kind: seldonian, failure: promise_constraint_fpr_beyond, error: test_error}
  - {kind: frontier, x: test_fpr, y: test_error}
"""


def _seldonian_frame():
    """4 seeds per (method, size); the certified method finds no solution in 2 of 4 at the
    small size; plain ramp breaks its promise in 3 of 4 small and 1 of 4 large trials."""
    rows = []
    for method, size, broken, unsolved in (("plain", "small", 3, 0), ("plain", "large", 1, 0),
                                           ("certified", "small", 0, 2),
                                           ("certified", "large", 0, 0)):
        for s in range(4):
            solved = s >= unsolved
            rows.append({"dataset": size, "method": method, "params": {}, "seed": s,
                         "status": "ok" if solved else "no_solution",
                         "metrics": {"promise_constraint_fpr_beyond": float(s < broken),
                                     "test_error": 0.1 + 0.01 * s + (0.05 if size == "small"
                                                                     else 0.0),
                                     "test_fpr": 0.15 + 0.01 * s}})
    rows.append({"dataset": "large", "method": "plain", "params": {}, "seed": 9,
                 "status": "failed", "metrics": {}})
    return _frame(rows)


def test_seldonian_counts_trials_failures_and_solutions_per_size():
    from safeclf.report.plots.seldonian import curves

    spec = _spec(SELDONIAN_SPEC)
    data = curves(_seldonian_frame(), spec.plots[0], spec)
    # (n, trials, failures, solved, mean error, half-width); the failed job is no trial
    assert [c[:4] for c in data["plain"]] == [(50, 4, 3, 4), (200, 4, 1, 4)]
    assert [c[:4] for c in data["certified"]] == [(50, 4, 0, 2), (200, 4, 0, 4)]
    assert data["certified"][0][4] == pytest.approx(0.15 + 0.025)  # the two solved: s = 2, 3


def test_seldonian_plot_draws_exact_binomial_intervals_and_delta():
    from scipy import stats

    from safeclf.report.plots.seldonian import seldonian

    spec = _spec(SELDONIAN_SPEC)
    fig = seldonian(_seldonian_frame(), spec.plots[0], spec)
    failure, solution, error = fig.axes[:3]
    assert failure.get_xscale() == "log" and failure.get_xlabel() == "training rows n"
    assert "Clopper–Pearson" in failure.get_ylabel()
    # plain ramp at n = 50: 3 failures in 4 trials, the exact 95% interval's ends
    lo, hi = stats.beta.ppf(0.025, 3, 2), stats.beta.ppf(0.975, 4, 1)
    segments = [seg for coll in failure.collections for seg in coll.get_segments()]
    assert any(seg[0][1] == pytest.approx(lo) and seg[1][1] == pytest.approx(hi)
               for seg in segments), segments
    # the certified method's δ is drawn on the failure panel, with its symbol
    assert any(line.get_label() == "δ = 0.1 (certified)" for line in failure.get_lines())
    # solution rate of the certified method: 0.5 at n = 50, 1 at n = 200
    ys = [list(c.lines[0].get_ydata()) for c in solution.containers
          if c.get_label() == "certified"]
    assert ys == [[0.5, 1.0]]
    assert "1 job(s) failed with an error" in fig.texts[0].get_text()


def test_seldonian_needs_training_sizes():
    import yaml

    from safeclf.errors import SpecError
    from safeclf.spec.check import check, parse

    data = yaml.safe_load(SELDONIAN_SPEC)
    del data["datasets"][1]["split"]
    with pytest.raises(SpecError, match=r"plots\[0\] \(seldonian\): dataset 'large' has no "
                                        r"split.train_rows"):
        check(parse(data))
    data["plots"][0]["datasets"] = ["small"]  # leaving it out of the plot is enough
    check(parse(data))
    data["plots"][0]["failure"] = "promise_constraint_fairness_ratio_beyond"
    with pytest.raises(SpecError, match=r"plots\[0\]\.failure: no method reports"):
        check(parse(data))


def test_pareto_judges_a_ratio_by_its_distance_to_one():
    from safeclf.report.plots.frontier import better_default, pareto

    points = [(0.8, 0.20), (1.6, 0.25), (1.0, 0.22), (0.7, 0.30)]
    assert better_default("test_fairness_ratio") == "one"
    assert better_default("test_error") == "min" and better_default("test_accuracy") == "max"
    # 1.6 is no fairer than 1/1.6 = 0.625 and costs more: beaten by (0.8, 0.20)
    assert pareto(points, "one", "min") == [0, 2]
    assert pareto(points, "max", "min") == [0, 1, 2]


def test_frontier_marks_certified_methods_and_the_frontier():
    from safeclf.report.plots.frontier import frontier

    spec = _spec(SELDONIAN_SPEC)
    frame = _seldonian_frame()
    ok = frame[(frame.status == "ok") & frame.dataset.eq("large")]
    fig = frontier(ok, spec.plots[1], spec)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "certified (certified)" in labels and "plain" in labels
    assert "frontier (not beaten on both axes)" in labels
    ax = fig.axes[0]
    assert ax.get_xlabel() == "false-positive rate (test)" and ax.get_ylabel() == "error (test)"
    assert "95% interval over seeds" in ax.get_title()


def test_every_run_plot_is_drawn_in_the_one_style(tmp_path):
    import matplotlib

    from safeclf.report.plots.builtin import wanted_plots, write_plot
    from safeclf.report.plots.style import PALETTE

    spec = _spec(SELDONIAN_SPEC)
    before = matplotlib.rcParams["axes.prop_cycle"]
    frame = _seldonian_frame()
    problems = [line for i in range(len(wanted_plots(spec, frame)))
                for line in write_plot(spec, frame, {}, tmp_path, i)]
    assert problems == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "frontier_test_error.png", "frontier_test_error.svg", "seldonian_0.png",
        "seldonian_0.svg"]
    svg = (tmp_path / "seldonian_0.svg").read_text().lower()
    assert PALETTE[0].lower() in svg and PALETTE[1].lower() in svg
    assert "#1f77b4" not in svg  # matplotlib's default blue: the style was not applied
    assert matplotlib.rcParams["axes.prop_cycle"] == before  # and it does not leak

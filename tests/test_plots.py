"""Default plots a reader understands: every varying parameter kept apart, numbers sorted as
numbers, labels in words with the papers' symbols, no empty panels, log axes over decades."""

from __future__ import annotations

import pytest

from safeclf.plots import BUILTIN, _figure, _with_values, axis_label
from safeclf.result import JobResult
from safeclf.run_folder import results_table
from safeclf.spec import PlotEntry


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

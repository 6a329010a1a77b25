"""The shared metric vocabulary on small hand-checked examples."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.guarantees.metrics import METRICS, Outputs, evaluate, fairness_ratio


def _out(y, pred, **kw):
    y, pred = np.asarray(y), np.asarray(pred)
    return Outputs(y=y, pred=pred, classes=np.unique(np.r_[y, pred]), **kw)


def test_binary_rates_count_the_larger_label_as_positive():
    o = _out([-1, -1, -1, -1, 1, 1], [1, -1, -1, -1, 1, -1])
    m = evaluate(["error", "fpr", "fnr", "recall", "joint_fp_rate", "positive_rate"], o, "test")
    assert m["test_error"] == pytest.approx(2 / 6)
    assert m["test_fpr"] == pytest.approx(1 / 4)
    assert m["test_fnr"] == pytest.approx(1 / 2)
    assert m["test_recall"] == pytest.approx(1 / 2)
    assert m["test_joint_fp_rate"] == pytest.approx(1 / 6)
    assert m["test_positive_rate"] == pytest.approx(2 / 6)


def test_fairness_ratio_and_churn():
    pred = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    groups = np.array(["M", "M", "M", "M", "F", "F", "F", "F"])
    # protected / privileged (safeclf.guarantees.groups); undirected: min / max
    assert fairness_ratio(pred, groups, 1, privileged="M") == pytest.approx(0.25 / 0.5)
    assert fairness_ratio(pred, groups, 1, privileged="F") == pytest.approx(0.5 / 0.25)
    assert fairness_ratio(pred, groups, 1) == pytest.approx(0.5)
    o = _out([0, 1, 0, 0, 1, 0, 0, 1], pred, rows={"groups": groups, "baseline": np.zeros(8)},
             info={"privileged_group": "F"})
    m = evaluate(["fairness_ratio", "churn"], o, "train")
    assert m["train_fairness_ratio"] == pytest.approx(2.0)
    assert m["train_churn"] == pytest.approx(3 / 8)
    # no privileged group named: the undirected ratio, under a name that says so
    o.info = {}
    m = evaluate(["fairness_ratio"], o, "test")
    assert list(m) == ["test_fairness_ratio_minmax"] and m["test_fairness_ratio_minmax"] == 0.5


def test_multiclass_and_probabilities():
    y = np.array([0, 1, 2, 2])
    proba = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    o = Outputs(y=y, pred=proba.argmax(1), classes=np.array([0, 1, 2]), proba=proba)
    m = evaluate(["error", "balanced_accuracy", "log_loss", "roc_auc", "fpr"], o, "test")
    assert m["test_error"] == 0.0 and m["test_balanced_accuracy"] == 1.0
    assert m["test_log_loss"] == pytest.approx(-np.mean(np.log([0.8, 0.7, 0.8, 0.4])))
    assert m["test_roc_auc"] == pytest.approx(1.0)
    assert np.isnan(m["test_fpr"])


def test_unavailable_inputs_give_nan():
    o = _out([0, 1, 1], [0, 1, 0])
    for name in ("log_loss", "fairness_ratio", "churn"):
        value = METRICS[name][0](o)
        assert np.isnan(value[1] if isinstance(value, tuple) else value), name


def test_randomised_rule_gives_expected_values():
    """With ``randomized`` = P(predict positive), error, positive rate, churn and the fairness
    ratio are expectations under the rule: at p in {0, 1} the deterministic values, and in
    between the mean over many draws of the rule."""
    rng = np.random.default_rng(3)
    n = 400
    y = rng.choice([-1, 1], n)
    groups = rng.choice(["a", "b"], n)
    base = rng.choice([-1, 1], n)
    rows, info = {"groups": groups, "baseline": base}, {"privileged_group": "a"}
    names = ("error", "positive_rate", "fairness_ratio", "churn")
    classes = np.array([-1, 1])
    hard = rng.choice([-1, 1], n)
    as_hard = evaluate(names, Outputs(y, hard, classes, rows=rows, info=info), "t")
    as_rule = evaluate(names, Outputs(y, hard, classes, rows=rows, info=info,
                                      randomized=(hard == 1).astype(float)), "t")
    assert as_rule == pytest.approx(as_hard)
    p = rng.uniform(0.1, 0.9, n)
    expected = evaluate(names, Outputs(y, hard, classes, rows=rows, info=info, randomized=p), "t")
    draws = [evaluate(names, Outputs(y, np.where(rng.uniform(size=n) < p, 1, -1), classes,
                                     rows=rows, info=info), "t") for _ in range(3000)]
    for key in ("t_error", "t_positive_rate", "t_churn"):  # linear: exact in expectation
        assert expected[key] == pytest.approx(np.mean([d[key] for d in draws]), abs=3e-3)
    # the ratio of expected group rates, not the expected ratio: its own closed form
    prot, priv = groups != "a", groups == "a"
    assert expected["t_fairness_ratio"] == pytest.approx(p[prot].mean() / p[priv].mean())

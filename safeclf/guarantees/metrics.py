"""One vocabulary of metrics shared by every method.

Each metric is a function of an :class:`Outputs` bundle (true labels, predicted labels, scores,
probabilities and the row-aligned extras of the part evaluated). The runner evaluates the
requested metrics on every part of a task and names them ``<part>_<metric>``
(``test_error``, ``train_fairness_ratio``, ``cal_fpr``).

Binary conventions: the *positive* class is the larger label (``classes[-1]``: ``1``, ``+1``,
``">50K"`` after sorting). So ``fpr`` is the share of negatives predicted positive, and for the
MC-SVM, whose safe class is ``+1``, ``fpr`` is the share of unsafe points predicted safe.
A metric that cannot be computed from what is available (no probabilities, no groups, a
multi-class problem for a binary rate) is ``nan``.

A randomised rule (ramp's: predict positive with probability p(x)) is evaluated by the same
functions: given ``Outputs.randomized`` = p, ``error``, ``positive_rate``, ``fairness_ratio``
and ``churn`` are their expected values under the rule (rates of expectations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Outputs:
    """Labels and predictions of one part, with its row-aligned extras."""

    y: np.ndarray
    pred: np.ndarray
    classes: np.ndarray
    score: np.ndarray | None = None
    proba: np.ndarray | None = None
    rows: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    randomized: np.ndarray | None = None
    """P(predict positive) per row of a binary randomised rule, or None."""

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    @property
    def positive(self):
        return self.classes[-1]


METRICS: dict[str, tuple[Callable[[Outputs], float], str]] = {}


def metric(name: str, description: str):
    """Register ``fn(outputs) -> float`` under ``name``."""

    def deco(fn):
        METRICS[name] = (fn, description)
        return fn

    return deco


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else float("nan")


def positive_rate(pred, positive) -> float:
    """s_p: the share of ``pred`` equal to ``positive`` (nan for an empty set)."""
    pred = np.asarray(pred)
    return float(np.mean(pred == positive)) if pred.size else float("nan")


def group_positive_rates(pred, groups, positive) -> dict[Any, float]:
    """s_p on each group."""
    pred, groups = np.asarray(pred), np.asarray(groups)
    return {g: positive_rate(pred[groups == g], positive) for g in np.unique(groups)}


def expected_disagreement(p, positive) -> float:
    """Share of rows whose prediction differs from a binary label (``positive``: the label is
    the positive class), in expectation when the rule predicts positive with probability
    ``p``."""
    return float(np.mean(np.where(np.asarray(positive, bool), 1.0 - p, p)))


def fairness_ratio(pred, groups, positive, privileged=None) -> float:
    """s_p(protected) / s_p(privileged) (:mod:`safeclf.guarantees.groups`); without a named privileged
    group, the smallest group rate over the largest."""
    from safeclf.guarantees import groups as G

    direction = G.Direction(None if privileged is None else str(privileged),
                            "given" if privileged is not None else "none")
    return G.ratio(np.asarray(pred) == positive, groups, direction)


@metric("error", "share misclassified")
def _error(o: Outputs) -> float:
    if o.randomized is not None:
        return expected_disagreement(o.randomized, np.asarray(o.y) == o.positive)
    return float(np.mean(o.pred != o.y))


@metric("accuracy", "share correctly classified")
def _accuracy(o: Outputs) -> float:
    return float(np.mean(o.pred == o.y))


@metric("balanced_accuracy", "mean recall over classes")
def _balanced_accuracy(o: Outputs) -> float:
    recalls = [np.mean(o.pred[o.y == c] == c) for c in o.classes if np.any(o.y == c)]
    return float(np.mean(recalls))


@metric("log_loss", "mean negative log-likelihood of the true class (needs predict_proba)")
def _log_loss(o: Outputs) -> float:
    if o.proba is None:
        return float("nan")
    from sklearn.metrics import log_loss

    return float(log_loss(o.y, o.proba, labels=o.classes))


@metric("roc_auc", "area under the ROC curve (one-vs-rest macro for several classes)")
def _roc_auc(o: Outputs) -> float:
    from sklearn.metrics import roc_auc_score

    if len(np.unique(o.y)) < 2:
        return float("nan")
    if o.binary:
        s = o.proba[:, 1] if o.proba is not None else o.score
        return float("nan") if s is None else float(roc_auc_score(o.y == o.positive, s))
    if o.proba is None or len(np.unique(o.y)) < len(o.classes):
        return float("nan")
    return float(roc_auc_score(o.y, o.proba, multi_class="ovr", labels=o.classes))


@metric("positive_rate", "s_p: share predicted positive (coverage)")
def _positive_rate(o: Outputs) -> float:
    if o.randomized is not None:
        return float(np.mean(o.randomized))
    return positive_rate(o.pred, o.positive) if o.binary else float("nan")


@metric("fpr", "false-positive rate: negatives predicted positive / negatives")
def _fpr(o: Outputs) -> float:
    if not o.binary:
        return float("nan")
    neg = o.y != o.positive
    return _ratio(np.sum(neg & (o.pred == o.positive)), np.sum(neg))


@metric("fnr", "false-negative rate: positives predicted negative / positives")
def _fnr(o: Outputs) -> float:
    if not o.binary:
        return float("nan")
    pos = o.y == o.positive
    return _ratio(np.sum(pos & (o.pred != o.positive)), np.sum(pos))


@metric("recall", "true-positive rate: positives predicted positive / positives")
def _recall(o: Outputs) -> float:
    return 1.0 - _fnr(o)


@metric("joint_fp_rate", "P(y negative and predicted positive) over all points")
def _joint_fp(o: Outputs) -> float:
    if not o.binary:
        return float("nan")
    return float(np.mean((o.y != o.positive) & (o.pred == o.positive)))


@metric("fairness_ratio", "s_p(protected) / s_p(privileged group of the dataset); without a "
        "named privileged group reported as fairness_ratio_minmax, min/max over groups "
        "(needs rows 'groups')")
def _fairness(o: Outputs):
    from safeclf.guarantees import groups as G

    direction = G.resolve(info=o.info)
    if not o.binary or "groups" not in o.rows:
        return direction.ratio_name(), float("nan")
    p = o.pred == o.positive if o.randomized is None else o.randomized
    return direction.ratio_name(), G.ratio(p, o.rows["groups"], direction)


@metric("churn", "share of predictions differing from a deployed model's (rows 'baseline')")
def _churn(o: Outputs) -> float:
    if "baseline" not in o.rows:
        return float("nan")
    if o.randomized is not None:
        return expected_disagreement(o.randomized, np.asarray(o.rows["baseline"]) == o.positive)
    return float(np.mean(o.pred != np.asarray(o.rows["baseline"])))


DEFAULT_METRICS = ("error", "balanced_accuracy")


def evaluate(names, outputs: Outputs, prefix: str) -> dict[str, float]:
    """``{prefix_name: value}`` for each metric name in ``names``; a metric function may
    return ``(name, value)`` to report under a more precise name (``fairness_ratio_minmax``
    where no privileged group is named)."""
    out = {}
    for n in names:
        value = METRICS[n][0](outputs)
        if isinstance(value, tuple):
            n, value = value
        out[f"{prefix}_{n}"] = value
    return out

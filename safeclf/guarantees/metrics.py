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

The rates (``error``, ``accuracy``, ``positive_rate``, ``recall``, ``fpr``, ``fnr``,
``churn``, ...) are those of the rate vocabulary (:mod:`safeclf.guarantees.rates`): each rate
class that names a :attr:`~safeclf.guarantees.rates.Rate.metric` is one metric, counted as its
promises and constraints are, so a new rate is a new metric too.

A randomised rule (ramp's: predict positive with probability p(x)) is evaluated by the same
functions: given ``Outputs.randomized`` = p, the rates and ``fairness_ratio`` are their
expected values under the rule (rates of expectations).
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


# -- the rates of the vocabulary, one metric each ----------------------------------------------
#: What a label-symmetric rate is with several classes: the share of rows whose prediction
#: differs from (or equals) the label, or the deployed model's prediction.
_SEVERAL_CLASSES = {"error": lambda o: np.mean(o.pred != o.y),
                    "accuracy": lambda o: np.mean(o.pred == o.y),
                    "churn": lambda o: np.mean(o.pred != np.asarray(o.rows["baseline"]))}


def _rate_metric(cls) -> Callable[[Outputs], float]:
    """The metric of rate class ``cls`` (:mod:`safeclf.guarantees.rates`): its value on all
    rows of the part, counted by the vocabulary (:func:`~safeclf.guarantees.rates.rate_counts`);
    under a randomised rule, the ratio of expected counts."""
    from safeclf.guarantees.rates import rate_counts

    q = cls().quantity()

    def value(o: Outputs) -> float:
        if q.event == "differs_from_baseline" and "baseline" not in o.rows:
            return float("nan")
        if not o.binary:
            several = _SEVERAL_CLASSES.get(cls.metric)
            return float(several(o)) if several else float("nan")
        rows = dict(o.rows)
        if "baseline" in rows:  # the deployed model's labels, read as this problem's
            rows["baseline"] = np.asarray(rows["baseline"]) == o.positive
        pred = o.randomized if o.randomized is not None else np.asarray(o.pred) == o.positive
        k, n = rate_counts(q, np.asarray(o.y) == o.positive, pred, rows)
        return _ratio(k, n)

    return value


def _register_rates() -> None:
    from safeclf.guarantees.rates import RATES

    for cls in RATES.values():
        if cls.metric is not None:
            metric(cls.metric, (cls.__doc__ or cls.kind).strip().splitlines()[0])(
                _rate_metric(cls))


_register_rates()


def fairness_ratio(pred, groups, positive, privileged=None) -> float:
    """s_p(protected) / s_p(privileged) (:mod:`safeclf.guarantees.groups`); without a named privileged
    group, the smallest group rate over the largest."""
    from safeclf.guarantees import groups as G

    direction = G.Direction(None if privileged is None else str(privileged),
                            "given" if privileged is not None else "none")
    return G.ratio(np.asarray(pred) == positive, groups, direction)


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

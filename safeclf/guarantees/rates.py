"""The rate vocabulary: every rate a promise, a constraint, a certificate, a held-out check, a
per-group table or a metric speaks of, defined once.

A rate is the share of an *event* among some rows: the rows of a ``subset`` (selected by the
dataset's ``rows`` entries), restricted to one *label* side (the positives of a recall, the
negatives of a false-positive rate) and, for a rate among the predictions, to one *predicted*
side (the rows predicted positive, of a precision). Each :class:`Rate` class says all of this
itself (:attr:`Rate.event`, :attr:`Rate.label`, :attr:`Rate.predicted`, :attr:`Rate.metric`),
and everything else follows from it:

* the ramp method's constraints and objective (Goh et al. 2016, Table 2): every event is
  linear in the indicators p_x = 1[f(x) > 0] (:data:`EVENTS`: a + b·p per row), so a rate on
  fixed rows is ``const + coef · p`` (:class:`Linear`) and a bound on a rate among the
  predicted rows is linear too (precision ≥ a ⇔ (1 − a)·TP − a·FP ≥ 0); the solver never
  needs to know which rate produced a constraint. The same form evaluated at p_x = σ(f(x))
  gives the randomised classifier's expected rate, which is what Problem 2 constrains;
* the held-out quantity of a promise (:class:`Quantity`, :meth:`Rate.quantity`) and its counts
  (:func:`rate_counts`), with which :mod:`safeclf.guarantees.promises` checks it, both
  certification routes test it and :mod:`safeclf.report.by_group` reports it per group;
* the metric a rate is reported as (``test_fpr``, :mod:`safeclf.guarantees.metrics`).

A comparison of two groups' rates (a fairness ratio or difference, equal opportunity,
equalized odds) is a :class:`RatioConstraint`; a bound on one rate a :class:`BoundConstraint`.
How a user writes them (``constraints:``, ``objective:``, ``monitor:`` of the ``ramp`` method
and ``promises:`` of any method entry) is :mod:`safeclf.guarantees.rate_items`.

Adding a rate is one class here (with a new event in :data:`EVENTS` if it counts something
new); the YAML vocabulary, the promises, the checks and the metrics take it from :data:`RATES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import Any, ClassVar

import numpy as np

#: Quantity kinds that compare the rates of two groups.
GROUP_KINDS = ("ratio", "difference")


@dataclass(frozen=True)
class Quantity:
    """What is measured.

    ``kind``:

    * ``"rate"``: the share of ``event`` (a key of :data:`EVENTS`) among the rows of ``subset``
      whose label is ``label`` (``"positive"``/``"negative"``/None) and, with ``predicted``,
      that are predicted ``"positive"`` (or ``"negative"``): precision is the share labelled
      positive among the rows predicted positive; with ``joint=True`` the label is part of the
      event and the denominator is all rows of ``subset`` (the joint rate P(label and event));
    * ``"ratio"``: the rate of ``event`` on the protected group over the privileged group's
      (``groups`` names the rows entry, ``privileged`` the group, ``protected`` the other
      group of the pair — None: every row not privileged; ``label`` restricts both,
      ``"positive"`` for equal opportunity, ``"negative"`` for the false-positive side of
      equalized odds);
    * ``"difference"``: the privileged group's rate minus the protected group's (the same
      fields; a disparity against the protected group is positive, bounded from above);
    * ``"chance_violation"`` and ``"excess_risk"``: computed by the method's plugin
      (:meth:`~safeclf.plugins.contract.MethodPlugin.promise_evidence`).
    """

    kind: str = "rate"
    event: str = "predicted_positive"
    label: str | None = None
    joint: bool = False
    subset: Mapping[str, Any] | None = None
    groups: str = "groups"
    privileged: str | None = None
    baseline: str = "baseline"
    protected: str | None = None
    predicted: str | None = None

    @property
    def compares_groups(self) -> bool:
        """A ratio or difference of two group rates."""
        return self.kind in GROUP_KINDS


# ----------------------------------------------------------------------------- events
def _differs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1[p ≠ x] = x + (1 − 2x)·p for a boolean x."""
    x = np.asarray(x, dtype=float)
    return x, 1.0 - 2.0 * x


def _equals(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1[p = x] = (1 − x) + (2x − 1)·p for a boolean x."""
    a, b = _differs(x)
    return 1.0 - a, -b


def _constant(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) the same on every row of n: read-only views of two numbers, no n-row arrays."""
    return np.broadcast_to(a, (n,)), np.broadcast_to(b, (n,))


#: What a rate counts on each row, as ``(a, b)`` with the event's indicator a + b·p at
#: p = 1[predicted positive] (and its probability under a randomised rule at p ∈ [0, 1]):
#: functions of (the data: labels and rows, the rows entry holding a deployed model's
#: predictions, the place for messages).
EVENTS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "predicted_positive": lambda data, baseline, where: _constant(data.n, 0.0, 1.0),
    "predicted_negative": lambda data, baseline, where: _constant(data.n, 1.0, -1.0),
    "error": lambda data, baseline, where: _differs(data.positive),
    "correct": lambda data, baseline, where: _equals(data.positive),
    "differs_from_baseline": lambda data, baseline, where: _differs(
        baseline_positive(data, baseline, where)),
    "labelled_positive": lambda data, baseline, where: (data.positive.astype(float),
                                                        np.zeros(data.n)),
}
#: Events whose count does not change when the two labels are swapped.
LABEL_SYMMETRIC = ("error", "correct", "differs_from_baseline")


def _sides(mask: np.ndarray, positive: np.ndarray, side: str | None) -> np.ndarray:
    """``mask`` restricted to one side (``"positive"``, ``"negative"``, None: both)."""
    if side is None:
        return mask
    return mask & (positive if side == "positive" else ~positive)


def rate_counts(q: Quantity, y_pos, pred, rows, within=None) -> tuple[float, float]:
    """(k, n) of a ``rate`` quantity on one part: n the rows it is a share of, k those with
    its event (``y_pos``: label positive; ``pred``: predicted positive, booleans, or the
    probabilities of a randomised rule, whose expected counts are returned; ``within``: a
    further mask, e.g. one group). Integers for boolean predictions."""
    p = np.asarray(pred, dtype=float)
    kr, nr, among = _rate_rows(q, y_pos, p, rows, within)
    k, n = float(kr[among].sum()), float(nr[among].sum())
    if np.isin(p, (0.0, 1.0)).all():
        return round(k), round(n)
    return k, n


def _rate_rows(q: Quantity, y_pos, p: np.ndarray, rows, within=None):
    """Each row's share of :func:`rate_counts`'s (k, n) at predictions ``p`` (floats), and the
    rows counted: (k per row, n per row, mask)."""
    y_pos = np.asarray(y_pos, bool)
    data = FitData(y_pos, {k: v for k, v in (rows or {}).items() if not isinstance(v, dict)})
    base = data.mask(q.subset, "promise") if q.subset else np.ones(data.n, bool)
    if within is not None:
        base = base & np.asarray(within, bool)
    a, b = EVENTS[q.event](data, q.baseline, "promise")
    ev = a + b * p
    among = base if q.joint else _sides(base, y_pos, q.label)
    if q.joint:
        ev = ev * _sides(np.ones_like(y_pos), y_pos, q.label)
    w = np.ones_like(p) if q.predicted is None else p if q.predicted == "positive" else 1.0 - p
    return ev * w, w, among


def rate_terms(q: Quantity, y_pos, rows) -> tuple[tuple[float, np.ndarray], ...]:
    """(k, n) of a ``rate`` quantity as functions of boolean predictions p: each the pair
    (c₀, c) with count = c₀ + c · p, read off every row's share of :func:`rate_counts` at
    p = 0 and p = 1 (a row's share depends on its own prediction only). Certification counts
    thousands of threshold rules this way (:mod:`safeclf.guarantees.certify.counting`)."""
    n = np.asarray(y_pos).shape[0]
    k0, n0, among = _rate_rows(q, y_pos, np.zeros(n), rows)
    k1, n1, _ = _rate_rows(q, y_pos, np.ones(n), rows)
    return tuple((float(v0[among].sum()), np.where(among, v1 - v0, 0.0))
                 for v0, v1 in ((k0, k1), (n0, n1)))


def event_values(q: Quantity, y_pos, pred, rows) -> np.ndarray:
    """The event of ``q`` on each row (its probability under a randomised rule)."""
    a, b = event_coefficients(q, y_pos, rows)
    return a + b * np.asarray(pred, dtype=float)


def event_coefficients(q: Quantity, y_pos, rows) -> tuple[np.ndarray, np.ndarray]:
    """(a, b): the event of ``q`` on each row is a + b·p at p = 1[predicted positive]."""
    y_pos = np.asarray(y_pos, bool)
    data = FitData(y_pos, {k: v for k, v in (rows or {}).items() if not isinstance(v, dict)})
    return EVENTS[q.event](data, q.baseline, "promise")


def counted_rows(q: Quantity, y_pos, rows) -> np.ndarray:
    """The rows ``q`` is counted on, predictions not looked at: its subset and label side."""
    y_pos = np.asarray(y_pos, bool)
    data = FitData(y_pos, {k: v for k, v in (rows or {}).items() if not isinstance(v, dict)})
    base = data.mask(q.subset, "promise") if q.subset else np.ones(data.n, bool)
    return _sides(base, y_pos, q.label)


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Linear:
    """``const + coef · p`` for p ∈ [0, 1]^n (one coefficient per training row)."""

    coef: np.ndarray
    const: float

    def value(self, p) -> float:
        return float(self.const + self.coef @ np.asarray(p, dtype=float))

    def __add__(self, other: Linear) -> Linear:
        return Linear(self.coef + other.coef, self.const + other.const)

    def scaled(self, a: float) -> Linear:
        return Linear(a * self.coef, a * self.const)


class FitData:
    """What rates are computed from: positives (bool, n), the rows entries, n."""

    def __init__(self, positive: np.ndarray, rows: Mapping[str, Any]):
        self.positive = np.asarray(positive, dtype=bool)
        self.rows = {k: np.asarray(v) for k, v in rows.items()}
        self.n = self.positive.shape[0]

    def mask(self, subset: Mapping[str, Any] | None, where: str) -> np.ndarray:
        out = np.ones(self.n, dtype=bool)
        for key, wanted in (subset or {}).items():
            if key not in self.rows:
                raise ValueError(f"{where}.subset names rows '{key}' which the data does not "
                                 f"provide (has: {sorted(self.rows) or 'none'})")
            values = wanted if isinstance(wanted, list | tuple) else [wanted]
            col = self.rows[key]
            hit = np.zeros(self.n, dtype=bool)
            for v in values:
                hit |= _equal(col, v)
            out &= hit
        return out

    def row(self, key: str, where: str) -> np.ndarray:
        if key not in self.rows:
            raise ValueError(f"{where} needs rows '{key}' which the data does not provide "
                             f"(has: {sorted(self.rows) or 'none'})")
        return self.rows[key]


def _equal(col: np.ndarray, value) -> np.ndarray:
    if col.dtype.kind in "biuf" and isinstance(value, bool | Real):
        return col.astype(float) == float(value)
    if col.dtype.kind == "b":
        return col == (str(value).lower() in ("true", "1", "yes"))
    return col.astype(str) == str(value)


def baseline_positive(data: FitData, key: str, where: str) -> np.ndarray:
    """The deployed model's predictions as booleans (positive = larger of two labels, or a
    truthy value for 0/1 and bool columns)."""
    b = data.row(key, where)
    if b.dtype.kind == "b":
        return b
    if b.dtype.kind in "iuf":
        values = np.unique(b)
        if set(values.tolist()) <= {0, 1} or set(values.tolist()) <= {-1, 1}:
            return b > 0
        if values.size <= 2:
            return b == values.max()
        raise ValueError(f"{where}: rows '{key}' must hold two labels, got {values.size} values")
    values = np.unique(b.astype(str))
    if values.size > 2:
        raise ValueError(f"{where}: rows '{key}' must hold two labels, got {values.size} values")
    return b.astype(str) == values.max()


# ----------------------------------------------------------------------------- rates
_WHAT = {None: "the subset", "positive": "the positive subset", "negative": "the negative subset"}


@dataclass(frozen=True)
class Rate:
    """A rate on the training rows selected by ``subset``: the share of :attr:`event` among
    them, restricted to the :attr:`label` side and the :attr:`predicted` side."""

    subset: Mapping[str, Any] | None = None
    where: str = "rate"
    #: The name a spec writes (``rate: fpr``).
    kind: ClassVar[str] = "rate"
    #: What is counted (a key of :data:`EVENTS`).
    event: ClassVar[str] = "predicted_positive"
    #: The label side the rate is among (``"positive"``, ``"negative"``, None: all rows).
    label: ClassVar[str | None] = None
    #: The predicted side the rate is among (precision: ``"positive"``); None: all rows. Such
    #: a rate is not linear in p (no objective term), but a bound on it is.
    predicted: ClassVar[str | None] = None
    #: The metric the rate is reported as (``test_<metric>``), or None.
    metric: ClassVar[str | None] = None

    def rows_needed(self) -> set[str]:
        return set(self.subset or {})

    def on(self, data: FitData) -> np.ndarray:
        return data.mask(self.subset, self.where)

    def among(self, data: FitData) -> np.ndarray:
        """The rows the rate is a share of (before any predicted side)."""
        return _sides(self.on(data), data.positive, self.label)

    def _terms(self, data: FitData) -> tuple[np.ndarray, np.ndarray, int]:
        m = self.among(data)
        k = int(m.sum())
        if k == 0:
            raise ValueError(f"{self.where}: {_WHAT[self.label]} is empty on the training data")
        a, b = EVENTS[self.event](data, getattr(self, "baseline", "baseline"), self.where)
        return np.where(m, a, 0.0), np.where(m, b, 0.0), k

    def linear(self, data: FitData) -> Linear:
        """The rate as ``const + coef · p`` (Goh et al. 2016, Table 2)."""
        if self.predicted is not None:
            raise ValueError(f"{self.where}: {self.kind} is a share of the predicted rows, not "
                             "linear in the predictions; it can be bounded, not summed")
        a, b, k = self._terms(data)
        return Linear(b / k, float(a.sum() / k))

    def bounded(self, data: FitData, sense: str, t: float) -> tuple[Linear, float]:
        """(g, γ) with ``rate ≤ t`` (``sense="max"``) or ``≥ t`` written g(p) ≤ γ. A rate
        among the predicted positives, Σ a_x p_x / Σ p_x (an event a_x not depending on p_x),
        is ≤ t exactly when Σ (a_x − t) p_x ≤ 0: linear (precision ≥ t ⇔ (1 − t)·TP − t·FP
        ≥ 0); among the predicted negatives, with 1 − p_x for p_x."""
        sign = 1.0 if sense == "max" else -1.0
        if self.predicted is None:
            lin = self.linear(data)
            return lin.scaled(sign), sign * t
        a, b, k = self._terms(data)
        if np.any(b != 0):
            raise ValueError(f"{self.where}: {self.kind} counts an event of the prediction "
                             "among the predicted rows")
        m = self.among(data)
        c = np.where(m, a - t, 0.0) / k
        lin = Linear(c, 0.0) if self.predicted == "positive" else Linear(-c, float(c.sum()))
        return lin.scaled(sign), 0.0

    def value(self, data: FitData, p) -> float:
        """The rate at predictions ``p`` (booleans or probabilities: the expected counts'
        ratio); nan when it has no rows."""
        a, b, _ = self._terms(data)
        p = np.asarray(p, dtype=float)
        m = self.among(data)
        w = (np.ones_like(p) if self.predicted is None
             else p if self.predicted == "positive" else 1.0 - p)[m]
        return float(((a + b * p)[m] * w).sum() / w.sum()) if w.sum() > 0 else float("nan")

    def size(self, data: FitData) -> int:
        """|D| the rate is normalised by (for ``count: true`` objective terms)."""
        return int(self.among(data).sum())

    def quantity(self) -> Quantity:
        """What a promise about this rate measures on held-out data."""
        return Quantity("rate", self.event, label=self.label, predicted=self.predicted,
                        subset=dict(self.subset) if self.subset else None,
                        baseline=getattr(self, "baseline", "baseline"))

    def describe(self) -> str:
        sub = ", ".join(f"{k}={v}" for k, v in (self.subset or {}).items())
        return f"{self.kind}" + (f" on {sub}" if sub else "")


class Coverage(Rate):
    """s_p(D): the share predicted positive (coverage)."""

    kind, metric = "coverage", "positive_rate"


class ErrorRate(Rate):
    """Share misclassified: #Errors/|D| = (|D−| s_p(D−) + |D+| s_n(D+)) / |D|."""

    kind, event, metric = "error", "error", "error"


class Accuracy(Rate):
    """Share classified correctly: 1 − the error rate."""

    kind, event, metric = "accuracy", "correct", "accuracy"


class Egregious(Accuracy):
    """The share of a listed set of examples classified correctly (rows ``egregious``)."""

    kind, metric = "egregious", None


class Recall(Rate):
    """True-positive rate: positives predicted positive / positives, s_p(D+)."""

    kind, label, metric = "recall", "positive", "recall"


class FalsePositiveRate(Rate):
    """False-positive rate: negatives predicted positive / negatives, s_p(D−) (the
    Neyman–Pearson constraint)."""

    kind, label, metric = "fpr", "negative", "fpr"


class FalseNegativeRate(Rate):
    """False-negative rate: positives predicted negative / positives, s_n(D+) = 1 − recall."""

    kind, event, label, metric = "fnr", "predicted_negative", "positive", "fnr"


@dataclass(frozen=True)
class Churn(Rate):
    """Share of predictions differing from a deployed model's (rows ``baseline``): #Changes/|D|,
    the share of D where p_x differs from the baseline's label (Table 2)."""

    baseline: str = "baseline"
    kind, event, metric = "churn", "differs_from_baseline", "churn"

    def rows_needed(self):
        return super().rows_needed() | {self.baseline}


class Precision(Rate):
    """Precision: positives among the rows predicted positive, TP / (TP + FP); a bound
    precision ≥ a is (1 − a)·TP − a·FP ≥ 0, linear in p (:meth:`Rate.bounded`)."""

    kind, event, predicted, metric = "precision", "labelled_positive", "positive", "precision"


#: Every rate, by the name a spec writes.
RATES: dict[str, type[Rate]] = {
    cls.kind: cls
    for cls in (Coverage, ErrorRate, Accuracy, Egregious, Recall, FalsePositiveRate,
                FalseNegativeRate, Churn, Precision)
}


# ----------------------------------------------------------------------------- constraints
@dataclass(frozen=True)
class BoundConstraint:
    """``rate ≤ max`` or ``rate ≥ min``; the bound may be ``baseline``: the rate of the
    deployed model's predictions (rows ``baseline``) on the same rows."""

    rate: Rate
    sense: str  # "max" | "min"
    bound: Any
    name: str
    where: str

    def rows_needed(self):
        need = self.rate.rows_needed()
        return need | {"baseline"} if self.bound == "baseline" else need

    def target(self, data: FitData) -> float:
        if self.bound == "baseline":
            base = baseline_positive(data, "baseline", self.where).astype(float)
            return self.rate.value(data, base)
        return float(self.bound)

    def linear(self, data) -> tuple[Linear, float]:
        """(g, γ) with the constraint written g(p) ≤ γ (Problem 1)."""
        return self.rate.bounded(data, self.sense, self.target(data))

    def value(self, data, p) -> float:
        return self.rate.value(data, p)

    def quantity(self) -> Quantity:
        """The held-out quantity of the constraint: its rate's."""
        return self.rate.quantity()

    def describe(self) -> str:
        op = "≤" if self.sense == "max" else "≥"
        return f"{self.rate.describe()} {op} {self.bound}"


@dataclass(frozen=True)
class RatioConstraint:
    """A comparison of two group rates (Table 2, with D_B the privileged group and D_A the
    protected): the ratio s_p(D_A) ≥ κ s_p(D_B), written κ s_p(D_B) − s_p(D_A) ≤ 0, or
    (``measure="difference"``) the difference s_p(D_B) − s_p(D_A) ≤ ε; both linear in p, so
    the solver consumes them like any rate. Its reported value is the direction-aware ratio
    s_p(D_A)/s_p(D_B) of :mod:`safeclf.guarantees.groups` (the paper's Figure 2 plots the inverse) or
    the difference. ``label`` restricts both groups to the positive rows (equal opportunity:
    true-positive rates) or the negative rows (false-positive rates); equalized odds is the
    two together.

    As parsed, a constraint may compare several groups (``compare`` and ``protected``,
    :func:`safeclf.guarantees.groups.comparisons`); :meth:`expanded` turns it, at fit time, into one
    constraint per compared pair (the paper's constraints are on arbitrary subsets: one
    linear constraint each), with ``privileged`` fixed from the constraint, the dataset or
    the named fallback and ``source`` recording where it came from, so test data is
    evaluated with the training direction. A pair's ``protected`` None is every row not
    privileged (the two-group meaning)."""

    kappa: float
    groups: str
    privileged: Any
    positives_only: bool
    name: str
    where: str
    subset: Mapping[str, Any] | None = None
    source: str = "constraint"
    protected: Any = None
    compare: str | None = None
    label: str | None = None
    measure: str = "ratio"
    rate: str = "fairness_ratio"
    pair: bool = False
    op: str | None = None  # ">=" or "<="; None: a ratio from below, a difference from above

    @property
    def sense(self):
        op = self.op or ("<=" if self.measure == "difference" else ">=")
        return "min" if op == ">=" else "max"

    @property
    def kind(self):
        return self.rate

    def rows_needed(self):
        return set(self.subset or {}) | {self.groups}

    def _label(self) -> str | None:
        return "positive" if self.positives_only else self.label

    def _labels(self) -> list[str | None]:
        """The label restrictions this constraint stands for: both sides for equalized odds."""
        if self.rate.startswith("equalized_odds") and not self.pair and self.label is None:
            return ["positive", "negative"]
        return [self._label()]

    def expanded(self, data: FitData, dataset_privileged=None) -> list[RatioConstraint]:
        """One constraint per compared pair (and per label side of equalized odds), each with
        its privileged and protected group fixed; a single pair keeps the constraint's name,
        several are named ``<name>_<pair>`` (``fairness_group_b``; ``_tpr``/``_fpr`` added for
        equalized odds)."""
        from safeclf.guarantees import groups as G

        g = data.row(self.groups, self.where)
        if self.subset:  # the groups compared are those with rows in the subset
            g = np.asarray(g)[data.mask(self.subset, self.where)]
        compare = self.compare or G.default_compare(g, self.protected)
        privileged, source = self.privileged, self.source
        if compare != "worst_pair":
            # the dataset's privileged group is a group of its rows "groups"; a pair named in
            # full (protected and privileged) is its own reference, whatever the dataset's
            # (certified training writes a worst_pair comparison out so, one item per pair)
            explicit = self.protected is not None and self.privileged is not None
            declared = (dataset_privileged if self.groups == "groups" and not explicit
                        else None)
            d = G.resolve(None if self.privileged is None else G.label(self.privileged),
                          {"privileged_group": declared}, g, data.positive,
                          where=f"{self.where}.privileged")
            privileged, source = d.privileged, d.source
        try:
            pairs = G.comparisons(g, privileged, compare, self.protected, self.where)
        except Exception as exc:  # a DataError: the same one line, as a ValueError here
            raise ValueError(str(exc)) from None
        labels = self._labels()
        out = []
        for pair in pairs:
            for lab in labels:
                name = self.name
                if len(pairs) > 1:
                    name += "_" + pair.suffix(compare)
                if len(labels) > 1:
                    name += "_tpr" if lab == "positive" else "_fpr"
                out.append(replace(self, name=name, privileged=pair.privileged,
                                   protected=pair.protected, source=source, compare=compare,
                                   label=lab, positives_only=lab == "positive", pair=True))
        return out

    def resolved(self, data: FitData, dataset_privileged=None) -> RatioConstraint:
        """This constraint with its privileged group fixed, when it compares one pair (two
        groups, or one named protected group); use :meth:`expanded` for several."""
        (one, *more) = self.expanded(data, dataset_privileged)
        if more:
            raise ValueError(f"{self.where} compares {len(more) + 1} pairs of groups; "
                             "expand it (one constraint per pair)")
        return one

    def base(self, data: FitData) -> np.ndarray:
        base = data.mask(self.subset, self.where)
        lab = self._label()
        if lab == "positive":
            return base & data.positive
        if lab == "negative":
            return base & ~data.positive
        return base

    def _sets(self, data: FitData):
        from safeclf.guarantees import groups as G

        c = self if self.pair else self.resolved(data)
        A, B = G.pair_masks(data.row(self.groups, self.where), c.privileged, c.protected)
        base = c.base(data)
        A, B = A & base, B & base
        if not B.any():
            raise ValueError(f"{self.where}.privileged group '{c.privileged}' has no training rows"
                             + (f" among the {c._label()}s" if c._label() else ""))
        if not A.any():
            what = ("outside the privileged group" if c.protected is None
                    else f"in group '{c.protected}'")
            raise ValueError(f"{self.where}: no training rows {what}"
                             + (f" among the {c._label()}s" if c._label() else ""))
        return A, B

    def target(self, data) -> float:
        return float(self.kappa)

    def linear(self, data) -> tuple[Linear, float]:
        """(g, γ) with the constraint written g(p) ≤ γ: s_p(A) ≥ κ s_p(B) as
        κ s_p(B) − s_p(A) ≤ 0 and s_p(A) ≤ κ s_p(B) as s_p(A) − κ s_p(B) ≤ 0; a difference
        s_p(B) − s_p(A) ≤ ε as it is and ≥ ε as s_p(A) − s_p(B) ≤ −ε."""
        A, B = self._sets(data)
        sign = 1.0 if self.sense == "max" else -1.0
        if self.measure == "difference":
            return Linear(sign * (B / B.sum() - A / A.sum()), 0.0), sign * float(self.kappa)
        return Linear(sign * (A / A.sum() - self.kappa * B / B.sum()), 0.0), 0.0

    def value(self, data, p) -> float:
        A, B = self._sets(data)
        p = np.asarray(p, dtype=float)
        b = p[B].mean()
        if self.measure == "difference":
            return float(b - p[A].mean())
        return float(p[A].mean() / b) if b > 0 else float("nan")

    def quantity(self) -> Quantity:
        """The held-out quantity of one compared pair (a constraint :meth:`expanded`)."""
        return Quantity(self.measure, "predicted_positive", label=self._label(),
                        subset=dict(self.subset) if self.subset else None, groups=self.groups,
                        privileged=None if self.privileged is None else str(self.privileged),
                        protected=None if self.protected is None else str(self.protected))

    def describe(self) -> str:
        """The constraint in words, naming its groups and subset:
        ``fairness_ratio: s_p(group_b) ≥ 0.8·s_p(group_a)``."""
        lab = self._label()
        on = {"positive": "positives of ", "negative": "negatives of ", None: ""}[lab]
        priv = self.privileged if self.privileged is not None else "privileged"
        if self.pair or self.compare in (None, "pooled") and self.protected is None:
            prot = f"not {priv}" if self.protected is None else self.protected
        elif self.compare == "worst_pair":
            prot, priv = "each group", "any other"
        else:
            prot = ("each group" if self.protected is None
                    else " and ".join(map(str, self.protected if isinstance(self.protected, list)
                                          else [self.protected])))
        sub = ", ".join(f"{k}={v}" for k, v in (self.subset or {}).items())
        where = f" on {sub}" if sub else ""
        op = "≥" if self.sense == "min" else "≤"
        if self.measure == "difference":
            return f"{self.kind}: s_p({on}{priv}) − s_p({on}{prot}) {op} {self.kappa}{where}"
        return f"{self.kind}: s_p({on}{prot}) {op} {self.kappa}·s_p({on}{priv}){where}"


def quantity(c) -> Quantity:
    """The held-out quantity of a parsed constraint (a group comparison expanded: one pair,
    :meth:`RatioConstraint.expanded`)."""
    return c.quantity()


# ----------------------------------------------------------------------------- objective
@dataclass(frozen=True)
class ObjectiveTerm:
    rate: Rate
    weight: float = 1.0
    count: bool = False

    def linear(self, data: FitData) -> Linear:
        lin = self.rate.linear(data)
        scale = self.weight * (self.rate.size(data) / data.n if self.count else 1.0)
        return lin.scaled(scale)


@dataclass(frozen=True)
class Objective:
    terms: tuple[ObjectiveTerm, ...] = field(default_factory=tuple)

    def rows_needed(self):
        return set().union(*(t.rate.rows_needed() for t in self.terms))

    def linear(self, data: FitData) -> Linear:
        out = Linear(np.zeros(data.n), 0.0)
        for t in self.terms:
            out = out + t.linear(data)
        return out

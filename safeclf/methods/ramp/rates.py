"""Rate expressions: the paper's Table 2 as small objects the solver consumes.

Every quantity of Goh et al. (2016) is a linear function of the indicators
p_x = 1[f(x) > 0] over the training rows (Problem 1 writes it as positive combinations of
s_p(D_i) and s_n(D_i); since s_n = 1 − s_p we keep one signed coefficient per row plus a
constant). A constraint is therefore ``const + coef · p ≤ γ`` (:class:`Linear`); the solver
never needs to know which rate produced it, so a new rate is one new class here.

The same linear form evaluated at p_x = σ(f(x)) (the ramp probability) gives the randomised
classifier's expected rate, which is what Problem 2 constrains.

YAML vocabulary (``constraints:`` and ``objective:`` of the ``ramp`` method)::

    {rate: coverage,  max: 0.3, subset: {groups: Female}}   # s_p(D) ≤ 0.3
    {rate: error,     max: 0.2}                              # error rate on D
    {rate: recall,    min: 0.9, subset: {role: d2}}          # s_p(D+) ≥ 0.9 (Neyman–Pearson)
    {rate: recall,    min: baseline, subset: {role: d2}}     # ≥ the deployed model's recall
    {rate: fpr,       max: 0.1}                              # s_p(D−) ≤ 0.1
    {rate: churn,     max: 0.03, subset: {role: d3}}         # share differing from rows baseline
    {rate: fairness_ratio,    kappa: 0.8}                    # s_p(D_A) ≥ κ s_p(D_B)
    {rate: churn, max: target, subset: {role: d3}}           # bound = the method's `target`
    {rate: equal_opportunity, kappa: 0.8}                    # s_p(D_A∩D+) ≥ κ s_p(D_B∩D+)
    {rate: equalized_odds,    kappa: 0.8}                    # the same on D+ and on D−
    {rate: fairness_difference, max: 0.1}                    # s_p(D_B) − s_p(D_A) ≤ 0.1
    {rate: fairness_ratio, min: 0.8, max: 1.25}              # a band: 0.8 ≤ s_p(D_A)/s_p(D_B) ≤ 1.25
    {rate: fairness_difference, min: -0.1, max: 0.1}         # a band on the difference
    {rate: fairness_ratio, kappa: 0.8, privileged: a, protected: [b, c]}  # one per pair
    {rate: fairness_ratio, kappa: 0.8, compare: worst_pair}  # min group rate ≥ κ max (4/5 rule)
    {rate: egregious, min: 0.9, subset: {egregious: 1}}      # share of a listed set correct

``subset`` selects training rows by dataset ``rows`` entries (a value or a list of values);
``groups`` names the row with group labels (default ``groups``), ``privileged`` the group B
(default: the dataset's privileged group, else the group whose training labels are most often
positive: :mod:`safeclf.guarantees.groups`; a list names an intersection); ``compare`` how several
groups are compared (``each`` against the privileged one, the default with more than two
groups; ``worst_pair``; ``pooled``: every non-privileged row as one group, the two-group
meaning) and ``protected`` which groups are compared with the privileged one. A ratio's lower
bound is ``kappa`` (or ``min``), its upper bound ``max``; a difference's upper bound is ``max``,
its lower bound ``min``. An item with both is a *band*: two constraints, one per side
(:func:`split_bands`), named ``<name>_lower`` and ``<name>_upper``, so a ratio cannot overshoot
into the reverse disparity. A comparison of
several pairs is one linear constraint per pair (:meth:`RatioConstraint.expanded`, at fit
time, when the groups are known). ``_difference`` kinds bound s_p(D_B) − s_p(D_A) by ``max``
instead. ``name`` labels the constraint in reports. A ratio constraint without ``kappa`` takes the
method's ``kappa`` parameter and a bound
written ``target`` the method's ``target`` parameter, so a spec can grid over them.
Objective terms take ``weight`` and ``count: true`` (the term counts examples,
divided by the number of training rows, instead of being a rate on its subset).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, TypeAdapter, model_validator


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


def _share(mask: np.ndarray, where: str, what: str) -> np.ndarray:
    """Coefficients of s_p(D) for D = mask: 1/|D| on D (eq. 1)."""
    k = int(mask.sum())
    if k == 0:
        raise ValueError(f"{where}: {what} is empty on the training data")
    return mask / k


# ----------------------------------------------------------------------------- rates
@dataclass(frozen=True)
class Rate:
    """A rate on the training rows selected by ``subset``: ``linear(data)`` in p."""

    subset: Mapping[str, Any] | None = None
    where: str = "rate"
    kind = "rate"

    def rows_needed(self) -> set[str]:
        return set(self.subset or {})

    def on(self, data: FitData) -> np.ndarray:
        return data.mask(self.subset, self.where)

    def linear(self, data: FitData) -> Linear:  # pragma: no cover - abstract
        raise NotImplementedError

    def size(self, data: FitData) -> int:
        """|D| the rate is normalised by (for ``count: true`` objective terms)."""
        return int(self.on(data).sum())

    def describe(self) -> str:
        sub = ", ".join(f"{k}={v}" for k, v in (self.subset or {}).items())
        return f"{self.kind}" + (f" on {sub}" if sub else "")


class Coverage(Rate):
    """s_p(D): the share predicted positive."""

    kind = "coverage"

    def linear(self, data):
        return Linear(_share(self.on(data), self.where, "the subset"), 0.0)


class ErrorRate(Rate):
    """#Errors/|D| = (|D−| s_p(D−) + |D+| s_n(D+)) / |D|."""

    kind = "error"

    def linear(self, data):
        m = self.on(data)
        k = int(m.sum())
        if k == 0:
            raise ValueError(f"{self.where}: the subset is empty on the training data")
        pos, neg = m & data.positive, m & ~data.positive
        return Linear((neg.astype(float) - pos) / k, pos.sum() / k)


class Accuracy(ErrorRate):
    """1 − error rate: the share classified correctly (the egregious-examples rate)."""

    kind = "accuracy"

    def linear(self, data):
        e = super().linear(data)
        return Linear(-e.coef, 1.0 - e.const)


class Egregious(Accuracy):
    kind = "egregious"


class Recall(Rate):
    """#TP/|D+| = s_p(D+)."""

    kind = "recall"

    def linear(self, data):
        return Linear(_share(self.on(data) & data.positive, self.where, "the positive subset"), 0.0)

    def size(self, data):
        return int((self.on(data) & data.positive).sum())


class FalsePositiveRate(Rate):
    """s_p(D−): the Neyman–Pearson constraint."""

    kind = "fpr"

    def linear(self, data):
        return Linear(_share(self.on(data) & ~data.positive, self.where, "the negative subset"),
                      0.0)

    def size(self, data):
        return int((self.on(data) & ~data.positive).sum())


class FalseNegativeRate(Rate):
    """s_n(D+) = 1 − recall."""

    kind = "fnr"

    def linear(self, data):
        r = Recall.linear(self, data)
        return Linear(-r.coef, 1.0)

    def size(self, data):
        return int((self.on(data) & data.positive).sum())


@dataclass(frozen=True)
class Churn(Rate):
    """#Changes/|D| against the deployed model's predictions ``rows[baseline]``:
    (|D+−| s_n... in Table 2) = share of D where p_x differs from the baseline's label."""

    baseline: str = "baseline"
    kind = "churn"

    def rows_needed(self):
        return super().rows_needed() | {self.baseline}

    def linear(self, data):
        m = self.on(data)
        k = int(m.sum())
        if k == 0:
            raise ValueError(f"{self.where}: the subset is empty on the training data")
        base = baseline_positive(data, self.baseline, self.where)
        was_pos, was_neg = m & base, m & ~base
        return Linear((was_neg.astype(float) - was_pos) / k, was_pos.sum() / k)


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


RATES: dict[str, type[Rate]] = {
    cls.kind: cls
    for cls in (Coverage, ErrorRate, Accuracy, Egregious, Recall, FalsePositiveRate,
                FalseNegativeRate, Churn)
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
            return self.rate.linear(data).value(base)
        return float(self.bound)

    def linear(self, data) -> tuple[Linear, float]:
        """(g, γ) with the constraint written g(p) ≤ γ (Problem 1)."""
        lin, t = self.rate.linear(data), self.target(data)
        return (lin, t) if self.sense == "max" else (lin.scaled(-1.0), -t)

    def value(self, data, p) -> float:
        return self.rate.linear(data).value(p)

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
            # the dataset's privileged group is a group of its rows "groups"
            declared = dataset_privileged if self.groups == "groups" else None
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


# ----------------------------------------------------------------------------- schema
# The YAML vocabulary as pydantic models: a constraint is a union discriminated by ``rate``
# (bound rates, churn with its baseline rows, ratio rates); objective terms and monitors are
# bound rates with their own keys. Errors are translated by safeclf._utils.messages.
_BOUND_KINDS = tuple(k for k in RATES if k != "churn")
_RATIO_KINDS = ("fairness_ratio", "equal_opportunity", "equalized_odds")
_DIFFERENCE_KINDS = ("fairness_difference", "equal_opportunity_difference",
                     "equalized_odds_difference")
#: The label side each comparison kind restricts its groups to.
_SIDES = {"fairness": None, "equal_opportunity": "positive", "equalized_odds": None}

_Unit = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
# κ > 1 asks the protected group's rate to exceed the privileged one's (certified training's
# internal targets need it, up to KAPPA_MAX); the method's kappa parameter stays in (0, 1]
KAPPA_MAX = 3.0
_Kappa = Annotated[float, Field(strict=True, gt=0.0, le=KAPPA_MAX, allow_inf_nan=False)]
_Weight = Annotated[float, Field(strict=True, ge=0.0, allow_inf_nan=False)]
_Name = Annotated[str, Field(pattern=r"^\w+$")]
_Bound = _Unit | Literal["baseline", "target"]


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subset: dict[str, Any] | None = None
    name: _Name | None = None


class _BoundItem(_Item):
    rate: Literal[_BOUND_KINDS]  # type: ignore[valid-type]
    max: _Bound | None = None
    min: _Bound | None = None

    @model_validator(mode="after")
    def _one_sense(self):
        if (self.max is None) == (self.min is None):
            raise ValueError(f"needs exactly one of max or min (rate {self.rate} ≤ max or "
                             "≥ min)")
        return self


class _ChurnItem(_BoundItem):
    rate: Literal["churn"]  # type: ignore[assignment]
    baseline: str = "baseline"


_Group = str | int | float | bool | list[str | int | float | bool]


class _RatioItem(_Item):
    rate: Literal[_RATIO_KINDS]  # type: ignore[valid-type]
    kappa: _Kappa | None = None
    max: _Kappa | None = None  # the upper side: s_p(D_A) ≤ max·s_p(D_B)
    groups: str = "groups"
    privileged: _Group | None = None
    protected: _Group | None = None
    compare: Literal["each", "worst_pair", "pooled"] | None = None
    side: Literal["tpr", "fpr"] | None = None

    @model_validator(mode="after")
    def _side_of_equalized_odds(self):
        if self.side is not None and not self.rate.startswith("equalized_odds"):
            raise ValueError(f"side (tpr or fpr) is for equalized_odds, not {self.rate}")
        return self


_Signed = Annotated[float, Field(strict=True, ge=-1.0, le=1.0, allow_inf_nan=False)]


class _DifferenceItem(_Item):
    rate: Literal[_DIFFERENCE_KINDS]  # type: ignore[valid-type]
    max: _Signed | None = None
    min: _Signed | None = None  # the lower side: s_p(D_B) − s_p(D_A) ≥ min
    groups: str = "groups"
    privileged: _Group | None = None
    protected: _Group | None = None
    compare: Literal["each", "worst_pair", "pooled"] | None = None
    side: Literal["tpr", "fpr"] | None = None

    _side_of_equalized_odds = _RatioItem._side_of_equalized_odds

    @model_validator(mode="after")
    def _a_side(self):
        if self.max is None and self.min is None:
            raise ValueError(f"needs max (s_p(privileged) − s_p(protected) ≤ max), min, or "
                             f"both (a band) for rate {self.rate}")
        return self


_ConstraintItem = Annotated[_BoundItem | _ChurnItem | _RatioItem | _DifferenceItem,
                            Field(discriminator="rate")]


class _TermItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rate: Literal[tuple(RATES)]  # type: ignore[valid-type]
    subset: dict[str, Any] | None = None
    weight: _Weight = 1.0
    count: StrictBool = False


class _MonitorItem(_Item):
    rate: Literal[_BOUND_KINDS]  # type: ignore[valid-type]


class _ChurnMonitorItem(_Item):
    rate: Literal["churn"]
    baseline: str = "baseline"


_MonitorEntry = Annotated[_MonitorItem | _ChurnMonitorItem, Field(discriminator="rate")]

_CONSTRAINTS = TypeAdapter(list[_ConstraintItem])
_OBJECTIVE = TypeAdapter(Annotated[list[_TermItem], Field(min_length=1)])
_MONITORS = TypeAdapter(list[_MonitorEntry])
_ITEM_MODELS = {**{k: _BoundItem for k in _BOUND_KINDS}, "churn": _ChurnItem,
                **{k: _RatioItem for k in _RATIO_KINDS},
                **{k: _DifferenceItem for k in _DIFFERENCE_KINDS}}


def _validated(adapter: TypeAdapter, items, where: str, models=None):
    """``items`` validated by ``adapter``; a :class:`ValueError` with one line naming the
    place under ``where`` otherwise."""
    from pydantic import ValidationError

    from safeclf._utils.messages import explain

    def known(parts):
        here = items
        for p in parts:
            here = here[p]
        kind = here.get("rate") if isinstance(here, Mapping) else None
        model = (models or {}).get(kind)
        return list(model.model_fields) if model else []

    try:
        return adapter.validate_python(items)
    except ValidationError as exc:
        raise ValueError(explain(exc, items, where, known)) from None


# ----------------------------------------------------------------------------- parsing
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


def _rate(item, where: str) -> Rate:
    """The :class:`Rate` of a validated item (an egregious rate defaults to rows
    ``egregious`` = 1)."""
    subset = item.subset or None
    if item.rate == "egregious" and subset is None:
        subset = {"egregious": 1}
    extra = {"baseline": item.baseline} if item.rate == "churn" else {}
    return RATES[item.rate](subset=subset, where=where, **extra)


def _side(item) -> str | None:
    """The label side a comparison item restricts its groups to (equalized odds: both,
    unless ``side`` picks one)."""
    if getattr(item, "side", None) is not None:
        return "positive" if item.side == "tpr" else "negative"
    return _SIDES[item.rate.removesuffix("_ratio").removesuffix("_difference")]


def _constraint(item, where: str, defaults: Mapping[str, Any]):
    name = item.name or item.rate
    if isinstance(item, _RatioItem):
        upper = item.kappa is None and item.max is not None  # one side of a band, or alone
        kappa = item.max if upper else item.kappa if item.kappa is not None \
            else defaults.get("kappa")
        if kappa is None:
            raise ValueError(f"{where}.kappa is required for rate {item.rate} (s_p(D_A) ≥ κ "
                             "s_p(D_B)), or set the method's kappa parameter")
        return RatioConstraint(float(kappa), item.groups, item.privileged,
                               item.rate == "equal_opportunity", name, where, item.subset or None,
                               protected=item.protected, compare=item.compare,
                               label=_side(item), rate=item.rate, op="<=" if upper else None)
    if isinstance(item, _DifferenceItem):
        base = item.rate.removesuffix("_difference")
        lower = item.max is None
        return RatioConstraint(float(item.min if lower else item.max), item.groups,
                               item.privileged, base == "equal_opportunity", name, where,
                               item.subset or None, protected=item.protected,
                               compare=item.compare, label=_side(item), measure="difference",
                               rate=item.rate, op=">=" if lower else None)
    sense = "max" if item.max is not None else "min"
    bound = getattr(item, sense)
    if bound == "target":
        bound = defaults.get("target")
        if bound is None:
            raise ValueError(f"{where}.{sense} is 'target' but the method's target parameter "
                             "is not set")
    return BoundConstraint(_rate(item, where), sense, bound, name, where)


#: The two keys of a band's sides, per comparison measure: (lower, upper).
_BAND_KEYS = {"ratio": ("kappa", "max"), "difference": ("min", "max")}


def _is_comparison(item) -> bool:
    return isinstance(item, Mapping) and item.get("rate") in (*_RATIO_KINDS, *_DIFFERENCE_KINDS)


def _min_as_kappa(item, place: str):
    """A ratio item with its ``min`` read as ``kappa`` (the same lower bound)."""
    if _is_comparison(item) and item.get("rate") in _RATIO_KINDS and "min" in item:
        if "kappa" in item:
            raise ValueError(f"{place} gives both min and kappa (the same lower bound); "
                             "keep one")
        return {k: v for k, v in item.items() if k != "min"} | {"kappa": item["min"]}
    return item


def split_bands(items, where: str = "constraints") -> tuple[list, list[str]]:
    """``items`` with a ratio's ``min`` read as its ``kappa`` and each band (a comparison
    with both a lower and an upper bound) written as two one-sided items named
    ``<name>_lower`` and ``<name>_upper``; and, for each item returned, the place of the item
    it came from (``where[i]``), so messages name what the user wrote. A band whose lower
    bound exceeds its upper bound is a :class:`ValueError`."""
    out, places = [], []
    for i, item in enumerate(items or []):
        place = f"{where}[{i}]"
        item = _min_as_kappa(item, place)
        keys = _BAND_KEYS["ratio" if _is_comparison(item) and item.get("rate") in _RATIO_KINDS
                          else "difference"]
        if not (_is_comparison(item) and all(k in item for k in keys)):
            out.append(item)
            places.append(place)
            continue
        lo, hi = (item[k] for k in keys)
        if all(isinstance(v, Real) and not isinstance(v, bool) for v in (lo, hi)) and lo > hi:
            raise ValueError(f"{place} is a band whose lower bound {lo} exceeds its upper "
                             f"bound {hi}")
        name = item.get("name") or item["rate"]
        rest = {k: v for k, v in item.items() if k not in (*keys, "name")}
        out += [rest | {keys[0]: lo, "name": f"{name}_lower"},
                rest | {keys[1]: hi, "name": f"{name}_upper"}]
        places += [place, place]
    return out, places


def parse_constraints(items, where: str = "constraints", defaults=None) -> list:
    """The constraint mappings ``items`` (see the module's vocabulary); ``defaults`` supplies
    ``kappa`` when a ratio omits it and the value of a bound written as the word ``target``
    (the method's ``kappa`` and ``target`` parameters, so a spec can grid over them). A band is
    two constraints (:func:`split_bands`). Constraints sharing a name are numbered after the
    first."""
    if items is None:
        return []
    if isinstance(items, list | tuple):
        items = [_min_as_kappa(it, f"{where}[{i}]") for i, it in enumerate(items)]
    _validated(_CONSTRAINTS, items, where, _ITEM_MODELS)  # as written: messages name them
    items, places = split_bands(items, where)
    parsed = _validated(_CONSTRAINTS, items, where, _ITEM_MODELS)
    out = [_constraint(it, places[i], defaults or {}) for i, it in enumerate(parsed)]
    names = [c.name for c in out]
    for i, nm in enumerate(names):
        if names.count(nm) > 1:
            out[i] = replace(out[i], name=f"{nm}{names[:i].count(nm)}")
    return out


def expand_constraints(constraints, data: FitData, dataset_privileged=None) -> list:
    """``constraints`` with every group comparison expanded into one constraint per compared
    pair (:meth:`RatioConstraint.expanded`), the others as they are; names stay unique."""
    out = []
    for c in constraints:
        out.extend(c.expanded(data, dataset_privileged) if isinstance(c, RatioConstraint)
                   else [c])
    names = [c.name for c in out]
    for i, nm in enumerate(names):
        if names.count(nm) > 1:
            out[i] = replace(out[i], name=f"{nm}{names[:i].count(nm)}")
    return out


def parse_objective(spec, where: str = "objective") -> Objective:
    """``"error"`` (the default), a rate name, or a list of terms
    ``{rate, subset, weight, count}`` summed."""
    items = [{"rate": spec}] if isinstance(spec, str) else spec
    parsed = _validated(_OBJECTIVE, items, where, {k: _TermItem for k in RATES})
    return Objective(tuple(
        ObjectiveTerm(_rate(it, f"{where}[{i}]"), it.weight, it.count)
        for i, it in enumerate(parsed)))


def parse_monitors(items, where: str = "monitor") -> list[tuple[str, Rate]]:
    """Rates reported but not constrained: ``[{rate, subset, name}]`` (name defaults to the
    rate), reported as ``<part>_monitor_<name>``."""
    if items is None:
        return []
    models = {**{k: _MonitorItem for k in _BOUND_KINDS}, "churn": _ChurnMonitorItem}
    parsed = _validated(_MONITORS, items, where, models)
    return [(it.name or it.rate, _rate(it, f"{where}[{i}]")) for i, it in enumerate(parsed)]

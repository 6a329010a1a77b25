"""How rates are written: the YAML items of ramp's ``constraints:``, ``objective:`` and
``monitor:`` and of a method entry's declared ``promises:``, validated and parsed into the
objects of :mod:`safeclf.guarantees.rates` (which says what each rate counts).

The vocabulary (every name of :data:`~safeclf.guarantees.rates.RATES` is a ``rate``)::

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
from dataclasses import replace
from numbers import Real
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, TypeAdapter, model_validator

from safeclf.guarantees.rates import (
    RATES,
    BoundConstraint,
    FitData,
    Objective,
    ObjectiveTerm,
    Rate,
    RatioConstraint,
)

# ----------------------------------------------------------------------------- schema
# The YAML vocabulary as pydantic models: a constraint is a union discriminated by ``rate``
# (bound rates, churn with its baseline rows, ratio rates); objective terms and monitors are
# bound rates with their own keys. Errors are translated by safeclf._utils.messages.
_BOUND_KINDS = tuple(k for k in RATES if k != "churn")
#: Rates an objective may sum: those linear in the predictions (not a share of the predicted
#: rows, whose bound is linear but whose value is not).
_LINEAR_KINDS = tuple(k for k, cls in RATES.items() if cls.predicted is None)
RATIO_KINDS = ("fairness_ratio", "equal_opportunity", "equalized_odds")
DIFFERENCE_KINDS = ("fairness_difference", "equal_opportunity_difference",
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
    rate: Literal[RATIO_KINDS]  # type: ignore[valid-type]
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
    rate: Literal[DIFFERENCE_KINDS]  # type: ignore[valid-type]
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

    rate: Literal[_LINEAR_KINDS]  # type: ignore[valid-type]
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
                **{k: _RatioItem for k in RATIO_KINDS},
                **{k: _DifferenceItem for k in DIFFERENCE_KINDS}}


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
    return isinstance(item, Mapping) and item.get("rate") in (*RATIO_KINDS, *DIFFERENCE_KINDS)


def _min_as_kappa(item, place: str):
    """A ratio item with its ``min`` read as ``kappa`` (the same lower bound)."""
    if _is_comparison(item) and item.get("rate") in RATIO_KINDS and "min" in item:
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
        keys = _BAND_KEYS["ratio" if _is_comparison(item) and item.get("rate") in RATIO_KINDS
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
    wrote_min = []
    if isinstance(items, list | tuple):
        wrote_min = [f"{where}[{i}]" for i, it in enumerate(items)
                     if isinstance(it, Mapping) and "min" in it and "kappa" not in it]
        items = [_min_as_kappa(it, f"{where}[{i}]") for i, it in enumerate(items)]
    try:  # as written: messages name what the user wrote (min, where min was read as kappa)
        _validated(_CONSTRAINTS, items, where, _ITEM_MODELS)
    except ValueError as exc:
        raise ValueError(_as_written(str(exc), wrote_min)) from None
    items, places = split_bands(items, where)
    parsed = _validated(_CONSTRAINTS, items, where, _ITEM_MODELS)
    out = [_constraint(it, places[i], defaults or {}) for i, it in enumerate(parsed)]
    names = [c.name for c in out]
    for i, nm in enumerate(names):
        if names.count(nm) > 1:
            out[i] = replace(out[i], name=f"{nm}{names[:i].count(nm)}")
    return out


def _as_written(message: str, wrote_min: list[str]) -> str:
    """A validation message about ``<place>.kappa`` of an item the user wrote with ``min``,
    said of ``min``; a bound above :data:`KAPPA_MAX` read as a percentage is said to be one."""
    for place in wrote_min:
        if f"{place}.kappa " in message:
            message = message.replace(f"{place}.kappa ", f"{place}.min ")
            if f"must be ≤ {KAPPA_MAX:g}" in message:
                message += " (a ratio of two rates: 0.8 for 80%)"
    return message


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
    parsed = _validated(_OBJECTIVE, items, where, {k: _TermItem for k in _LINEAR_KINDS})
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

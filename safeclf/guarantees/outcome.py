"""The favourable outcome: which label value a "positive" prediction is, named, never guessed.

Every rate that counts positive predictions (a share predicted positive, a recall, a
false-positive rate, a fairness ratio or difference) takes the positive class to be
``classes_[-1]``, the larger label. That is only what the user means when the larger label
*is* the favourable decision. So the meaning is fixed once, at the dataset boundary:

* a loader may declare it (``info["outcome"]``, :func:`record`): the ``csv`` loader's
  ``positive`` parameter names the favourable value of the target and the target is encoded
  as 0/1 with 1 = favourable (:func:`encode`); each built-in data set states its own;
* without a declaration, labels 0/1 or booleans are unambiguous: 1 / True is taken as
  favourable (:func:`implicit`, ``declared: False``);
* any other labels have no outcome, and a promise, constraint or certificate whose rate
  depends on which label is positive (:func:`depends`) is refused before anything runs
  (:func:`check_method`).

Downstream nothing changes: the positive class is ``classes_[-1]`` = 1 = favourable. What the
outcome adds is its name in every statement (:func:`name_promises`), in ``promises.csv`` and
in the per-group table (:func:`describe`), and the original label values in ``predict``'s
output (:func:`decode`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from safeclf.errors import DataError

#: The key of ``Dataset.info`` holding the outcome record.
KEY = "outcome"

#: Unquoted words YAML reads as booleans (YAML 1.1, as PyYAML does).
YAML_BOOLEANS = {"yes", "no", "on", "off", "y", "n", "true", "false"}


def text(value) -> str:
    """A label value as text, as a reader writes it: ``True``, ``1`` (also for ``1.0``),
    ``approve``."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def record(target: str, positive, negative, declared: bool = True, encoded: bool = False,
           **extra) -> dict[str, Any]:
    """The outcome record kept in ``info["outcome"]``: the target's name, its favourable and
    other value as text, whether the data's owner declared it, whether ``y`` was encoded as
    0/1 from those values (:func:`encode`; ``predict`` then writes them back,
    :func:`decode`); ``extra`` (e.g. ``meaning``) is kept as given."""
    return {"target": str(target), "positive": text(positive), "negative": text(negative),
            "declared": bool(declared), "encoded": bool(encoded), **extra}


def of(info: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The outcome record of a dataset's (or task's) ``info``, or None."""
    out = (info or {}).get(KEY)
    return out if isinstance(out, Mapping) else None


def describe(outcome: Mapping[str, Any] | None) -> str | None:
    """The favourable outcome as a reader names it: ``decision = approve``; None without one."""
    if not outcome:
        return None
    return f"{outcome['target']} = {outcome['positive']}"


def _values(y) -> list[str]:
    return sorted(dict.fromkeys(text(v) for v in np.asarray(y, dtype=object).ravel().tolist()))


def shown(values) -> str:
    """Label values for a message: ``'approve', 'deny'`` (at most 10)."""
    values = list(values)
    return ", ".join(repr(v) for v in values[:10]) + (", ..." if len(values) > 10 else "")


def implicit(y, target: str = "label") -> dict[str, Any] | None:
    """The outcome of labels nobody declared one for: 0/1 or booleans (1 / True favourable,
    ``declared: False``); None for any other labels."""
    y = np.asarray(y)
    if y.dtype.kind == "b":
        return record(target, True, False, declared=False)
    if y.dtype.kind in "iuf":
        found = set(np.unique(y).tolist())
        if found == {0, 1}:
            return record(target, 1, 0, declared=False)
    return None


def encode(y, target: str, positive, where: str = "csv") -> tuple[np.ndarray, dict[str, Any]]:
    """``y`` as int 0/1 with 1 = ``positive`` (compared as text: ``positive: 1`` matches an int
    column, ``positive: approve`` a text one), and the outcome record.

    Raises
    ------
    DataError
        When the target does not hold exactly two values, when ``positive`` is not one of
        them, or when it is a boolean that YAML read from an unquoted ``yes``/``no`` (the
        message says to quote it).
    """
    found = _values(y)
    place = f"{where}: positive"
    if len(found) != 2:
        raise DataError(f"{place} names the favourable value of target '{target}', which needs "
                        f"exactly two values; it holds {len(found)}: {shown(found)}")
    want = text(positive)
    if want not in found:
        if isinstance(positive, bool) and any(v.lower() in YAML_BOOLEANS for v in found):
            raise DataError(f"{place} is the boolean {positive} (YAML reads an unquoted "
                            f"yes/no/true/false as one), but target '{target}' holds "
                            f"{shown(found)}; quote the value: positive: \"{found[0]}\" or "
                            f"\"{found[1]}\"")
        near = [v for v in found if v.lower() == want.lower()]
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise DataError(f"{place} is {want!r}, which is not a value of target '{target}'"
                        f"{hint}; it holds {shown(found)}")
    other = found[1] if found[0] == want else found[0]
    labels = np.array([text(v) for v in np.asarray(y, dtype=object).ravel().tolist()])
    return (labels == want).astype(int), record(target, want, other, encoded=True)


def decode(pred, outcome: Mapping[str, Any] | None) -> np.ndarray:
    """Predictions of a model trained on an encoded target (``encoded``: 0/1) as the
    original label values; anything else (no outcome: a model saved before outcomes were
    recorded) as it is."""
    pred = np.asarray(pred)
    if not outcome or not outcome.get("encoded"):
        return pred
    return np.where(pred.astype(str) == "1", outcome["positive"], outcome["negative"])


def class_names(classes, outcome: Mapping[str, Any] | None) -> list[str]:
    """The names of ``classes`` (0/1 after encoding) as the data's owner wrote them."""
    return [text(c) for c in decode(np.asarray(classes), outcome)]


# -- which quantities depend on it -----------------------------------------------------------
def depends(quantity) -> bool:
    """Whether a :class:`~safeclf.guarantees.rates.Quantity` changes when the labels are
    swapped: its event is not label-symmetric (:data:`~safeclf.guarantees.rates.LABEL_SYMMETRIC`:
    a positive or negative prediction, a positive label), or it is restricted to the rows of one
    label or one prediction (a share predicted positive, recall, fpr, fnr, precision, every
    fairness ratio and difference, equal opportunity, equalized odds). Error, accuracy, churn
    and the egregious rate are label-symmetric; a plugin's own quantity (chance constraint,
    excess risk) is the plugin's."""
    from safeclf.guarantees.rates import LABEL_SYMMETRIC

    if quantity.kind not in ("rate", "ratio", "difference"):
        return False
    return quantity.event not in LABEL_SYMMETRIC or quantity.label is not None \
        or getattr(quantity, "predicted", None) is not None


def phrase(quantity, outcome: Mapping[str, Any] | None) -> str | None:
    """What a statement about ``quantity`` adds to name the outcome: ``s_p = share predicted
    decision = approve`` (and which rows the positives are, for a rate restricted to a
    label); None when the quantity does not depend on it or there is no outcome."""
    name = describe(outcome)
    if name is None or not depends(quantity):
        return None
    out = f"s_p = share predicted {name}"
    if quantity.label is not None or getattr(quantity, "predicted", None) is not None:
        out += (f"; positives = rows labelled {name}, negatives = rows labelled "
                f"{outcome['target']} = {outcome['negative']}")
    return out


def name_promises(promises, info: Mapping[str, Any] | None) -> list:
    """``promises`` with each statement naming the favourable outcome where it depends on it
    (``s_p(Female) ≥ 0.8·s_p(Male) (training data), s_p = share predicted decision = approve``)
    and its ``positive`` field set (``decision = approve``); the others as they are. Applied
    once, where a job gathers its promises."""
    from dataclasses import replace

    outcome = of(info)
    out = []
    for p in promises:
        words = phrase(p.quantity, outcome)
        if words is None or p.positive is not None:
            out.append(p)
            continue
        out.append(replace(p, statement=f"{p.statement}, {words}", positive=describe(outcome)))
    return out


# -- the check before a run -------------------------------------------------------------------
def counted(items, prefix: str = "") -> list[str]:
    """The places of parsed constraints ``items`` (ramp's vocabulary, also that of declared
    promises) whose quantity depends on the favourable outcome (:func:`depends`), each as
    ``<prefix><where> (<rate>)``: ``params.constraints[0] (fairness_ratio)``."""
    return [f"{prefix}{c.where} ({c.kind if hasattr(c, 'measure') else c.rate.kind})"
            for c in items if depends(c.quantity())]


def check_method(places: list[str], info, y, dataset: str, csv_loader: bool) -> None:
    """Refuse, before anything runs, a method entry whose ``places`` (constraints, declared
    promises, a certificate: :func:`counted`) count favourable decisions on a dataset whose
    outcome is unknown (labels neither declared nor 0/1 / boolean). The message names the key
    to add and the label values found."""
    if not places or of(info) is not None:
        return
    found = _values(y)
    if len(found) != 2:
        return  # several classes: the method's own check says it takes two
    what = (f"{places[0]} counts favourable decisions"
            + (f" (and {len(places) - 1} more)" if len(places) > 1 else ""))
    target = (info or {}).get("target")
    holds = (f"the target '{target}' holds {shown(found)}" if target
             else f"its labels are {shown(found)}")
    if csv_loader:
        raise DataError(f"{dataset}.params.positive is needed: {what}, and {holds}; say which "
                        f"is favourable (positive: {found[0]})")
    raise DataError(f"{dataset} names no favourable outcome: {what}, and {holds}, of which "
                    "neither is 0/1 or boolean; give the dataset an outcome "
                    "(info['outcome'], safeclf.guarantees.outcome.record)")

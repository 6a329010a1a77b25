"""Promises a user writes on a method entry, in the vocabulary of ramp's constraints.

``promises: [{rate: fpr, max: 0.05}, {rate: fairness_ratio, min: 0.8}]`` states what the
user requires of a method that may promise nothing itself: each item is read exactly as a ramp
constraint (:func:`safeclf.guarantees.rate_items.parse_constraints`: ``rate``, ``max`` / ``min``,
``subset``, ``name``; a ratio's ``groups`` and ``privileged``; ``min`` is accepted for a
ratio's ``kappa``) and becomes a :class:`~safeclf.guarantees.promises.Promise` about the same quantity
(:meth:`safeclf.guarantees.rates.Rate.quantity`), so a declared promise, a ramp constraint, a
held-out check and a certificate all speak of one thing. Uncertified, a declared promise has
kind ``declared``: checked on the test split, guaranteed by nothing. Certified (``certify``),
it becomes a high-confidence promise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from safeclf.guarantees.promises import Promise
from safeclf.guarantees.rate_items import RATIO_KINDS, expand_constraints, parse_constraints
from safeclf.guarantees.rates import FitData, RatioConstraint

SOURCE = "declared in the spec"


def parse(items, where: str = "promises") -> list:
    """The constraints ``items`` state (ValueError naming the place when malformed); a ratio
    without ``kappa`` / ``min`` is an error here (there is no method default to take)."""
    for i, item in enumerate(items or []):  # before parsing, whose message would name kappa
        if isinstance(item, Mapping) and item.get("rate") in RATIO_KINDS \
                and not {"min", "kappa", "max"} & set(item):
            raise ValueError(f"{where}[{i}] needs min (the ratio's lower bound κ), max (its "
                             "upper bound), or both (a band, recommended: min: 0.8, max: 1.25)")
    return parse_constraints(items, where)


def promises(items, y_pos, rows, info=None, where: str = "promises") -> list[Promise]:
    """The declared promises, each comparison of groups expanded into one promise per compared
    pair with its privileged group resolved on the training rows (``y_pos``: label is
    positive; ``rows``: the task's row entries; ``info``: the dataset's)."""
    from safeclf.guarantees.groups import privileged_of

    data = FitData(np.asarray(y_pos, bool), dict(rows or {}))
    out = []
    # a comparison of several groups is one promise per compared pair (safeclf.guarantees.groups)
    for c in expand_constraints(parse(items, where), data, privileged_of(info)):
        sense = ">=" if c.sense == "min" else "<="
        bound = float(c.kappa if isinstance(c, RatioConstraint) else c.bound)
        out.append(Promise(f"declared_{c.name}", c.describe(), c.quantity(), sense, bound,
                           "declared", f"{SOURCE} ({c.where})",
                           note="checked on held-out data; guaranteed only when certified"))
    return out

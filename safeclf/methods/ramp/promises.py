"""The ramp method's promises: one per dataset constraint (Goh et al. 2016, Problem 2).

Each promise is about the rule ``predict`` uses (the estimator's ``prediction``): by default
the deterministic rule 1[f(x) > 0], whose threshold ``fit`` chose on the training scores so
that it meets the constraints (:mod:`safeclf.methods.ramp.threshold`); with ``prediction:
randomized`` the randomised rule σ(f) Problem 2 constrains, in expectation over its draws.
Without certification each constraint is promised on the training data only (within
``feasibility_tol``: the training check in ``promises.csv`` says whether it holds there; a fit
whose rule misses one has also warned); with ``certify`` (:mod:`safeclf.guarantees.certify.training`) the same
quantity carries a high-confidence promise from a safety test on held-back training rows.
"""

from __future__ import annotations

import copy

from safeclf.guarantees.promises import Promise
from safeclf.guarantees.rates import BoundConstraint, RatioConstraint, quantity

SOURCE = "Goh et al. 2016, Problem 2 (Table 2 rates)"


def constraint_promises(est) -> list[Promise]:
    """One training-only promise per constraint of the fitted ``est``."""
    out = []
    for c, row in zip(est._constraints, est.constraint_values_, strict=True):
        sense = ">=" if row["sense"] == "min" else "<="
        randomized = row.get("rule") == "randomized"
        note = ("promised for predict's randomised rule σ(f), in expectation, on the training "
                "rows" if randomized else
                "promised for predict (1[f(x) > 0], threshold chosen on the training scores) "
                "on the training rows")
        if isinstance(c, BoundConstraint) and c.bound == "baseline":
            note += "; bound = the deployed model's value on the training rows"
        out.append(Promise(
            f"constraint_{c.name}", f"{c.describe()} (training data)", quantity(c), sense,
            float(row["target"]), "training", f"{SOURCE}, {c.where}", note=note,
            rule="randomized" if randomized else "predict", tolerance=float(row["tolerance"])))
    return out


def tightened_params(params: dict, bounds: list[float | None], promises=None) -> dict:
    """``params`` with constraint i's bound replaced by ``bounds[i]`` (None: unchanged):
    ``kappa`` of a ratio constraint, ``max`` of a difference, ``max``/``min`` of a rate
    constraint.

    A comparison of several pairs of groups is one promise per pair (one bound each), so
    ``bounds`` may be longer than the constraint list; then ``promises`` (the fitted model's,
    :func:`constraint_promises`, aligned with ``bounds``) say which pair each bound is for,
    and each such constraint is rewritten as one explicit constraint per pair
    (``privileged``, ``protected``, ``side`` fixed) with its own bound."""
    from safeclf.guarantees.rate_items import parse_constraints, split_bands

    params = copy.deepcopy(dict(params))
    items = split_bands(list(params.get("constraints") or []))[0]  # a band is two items
    parsed = parse_constraints(items, defaults={"kappa": params.get("kappa"),
                                                "target": params.get("target")})
    if len(bounds) != len(parsed):
        if promises is None or len(promises) != len(bounds):
            raise ValueError(f"{len(bounds)} bounds for {len(parsed)} constraints: a comparison "
                             "of several pairs of groups needs the promises the bounds are for")
        params["constraints"] = _per_pair_items(items, parsed, bounds, promises)
        return params
    for i, (item, c, b) in enumerate(zip(items, parsed, bounds, strict=True)):
        if b is None:
            continue
        item = dict(item)
        if isinstance(c, RatioConstraint):
            item[_bound_key(c)] = float(b)
        else:
            item[c.sense] = float(min(1.0, max(0.0, b)))
        items[i] = item
    params["constraints"] = items
    return params


def _bound_key(c: RatioConstraint) -> str:
    """The item key that holds a comparison's bound: a ratio's ``kappa`` (from below) or
    ``max``; a difference's ``max`` (from above) or ``min``."""
    if c.measure == "difference":
        return "max" if c.sense == "max" else "min"
    return "kappa" if c.sense == "min" else "max"


def _per_pair_items(items, parsed, bounds, promises) -> list[dict]:
    """The constraint items with each group comparison written out per pair (see
    :func:`tightened_params`); promises are consumed in order, a comparison taking those named
    ``constraint_<name>`` or ``constraint_<name>_<pair>``."""
    out, j = [], 0
    for item, c in zip(items, parsed, strict=True):
        if not isinstance(c, RatioConstraint):
            item = dict(item)
            if bounds[j] is not None:
                item[c.sense] = float(min(1.0, max(0.0, bounds[j])))
            out.append(item)
            j += 1
            continue
        stem = f"constraint_{c.name}"
        while j < len(promises) and (promises[j].name == stem
                                     or promises[j].name.startswith(stem + "_")):
            q = promises[j].quantity
            pair = {k: v for k, v in dict(item).items() if k not in ("compare", "protected")}
            pair.update(name=promises[j].name.removeprefix("constraint_"),
                        privileged=q.privileged,
                        compare="pooled" if q.protected is None else "each")
            if q.protected is not None:
                pair["protected"] = q.protected
            if c.rate.startswith("equalized_odds"):
                pair["side"] = "tpr" if q.label == "positive" else "fpr"
            key = _bound_key(c)
            pair[key] = float(bounds[j]) if bounds[j] is not None else item.get(key, c.kappa)
            out.append(pair)
            j += 1
    if j != len(promises):
        raise ValueError("the promises do not follow the constraints' order")
    return out

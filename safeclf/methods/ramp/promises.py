"""The ramp method's promises: one per dataset constraint (Goh et al. 2016, Problem 2).

Each promise is about the rule ``predict`` uses (the estimator's ``prediction``): by default
the deterministic rule 1[f(x) > 0], whose threshold ``fit`` chose on the training scores so
that it meets the constraints (:mod:`safeclf.methods.ramp.threshold`); with ``prediction:
randomized`` the randomised rule σ(f) Problem 2 constrains, in expectation over its draws.
Without certification each constraint is promised on the training data only (within
``feasibility_tol``: the training check in ``promises.csv`` says whether it holds there; a fit
whose rule misses one has also warned); with ``certify`` (:mod:`safeclf.certify`) the same
quantity carries a high-confidence promise from a safety test on held-back training rows.
"""

from __future__ import annotations

import copy

from safeclf.methods.ramp.rates import BoundConstraint, RatioConstraint
from safeclf.promises import Promise, Quantity

_RATE_EVENTS = {
    # rate kind: (event, label)
    "coverage": ("predicted_positive", None),
    "error": ("error", None),
    "accuracy": ("correct", None),
    "egregious": ("correct", None),
    "recall": ("predicted_positive", "positive"),
    "fpr": ("predicted_positive", "negative"),
    "fnr": ("predicted_negative", "positive"),
    "churn": ("differs_from_baseline", None),
}

SOURCE = "Goh et al. 2016, Problem 2 (Table 2 rates)"


def quantity(c) -> Quantity:
    """The held-out quantity of a parsed (and, for ratios, resolved) constraint."""
    if isinstance(c, RatioConstraint):
        return Quantity("ratio", "predicted_positive",
                        label="positive" if c.positives_only else None,
                        subset=dict(c.subset) if c.subset else None, groups=c.groups,
                        privileged=c.privileged)
    event, label = _RATE_EVENTS[c.rate.kind]
    extra = {"baseline": c.rate.baseline} if c.rate.kind == "churn" else {}
    return Quantity("rate", event, label=label,
                    subset=dict(c.rate.subset) if c.rate.subset else None, **extra)


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


def tightened_params(params: dict, bounds: list[float | None]) -> dict:
    """``params`` with constraint i's bound replaced by ``bounds[i]`` (None: unchanged):
    ``kappa`` of a ratio constraint, ``max``/``min`` of a rate constraint."""
    from safeclf.methods.ramp.rates import parse_constraints

    params = copy.deepcopy(dict(params))
    items = list(params.get("constraints") or [])
    parsed = parse_constraints(items, defaults={"kappa": params.get("kappa"),
                                                "target": params.get("target")})
    for i, (item, c, b) in enumerate(zip(items, parsed, bounds, strict=True)):
        if b is None:
            continue
        item = dict(item)
        if isinstance(c, RatioConstraint):
            item["kappa"] = float(b)
        else:
            item[c.sense] = float(min(1.0, max(0.0, b)))
        items[i] = item
    params["constraints"] = items
    return params

"""Choosing λ from repeated k-fold cross-validation scores (``lam: auto``): the standard error
of a repeated-fold mean, which λ are eligible, and the one-standard-error rule.

The scores come as arrays of shape (λ, repeats, folds); :func:`select` is pure, so the rule can
be tested on tables made by hand (the estimator's ``_choose_lam`` fits the folds)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def repeated_fold_se(values: np.ndarray) -> np.ndarray:
    """The standard error of each row's mean over repeats × folds, ``values`` (L, R, k).

    With R ≥ 2 repeats it is the standard deviation of the R per-repeat means over √R: the
    folds of different repeats share their rows, so the R·k fold values are not independent,
    while each repeat's mean is one draw of the k-fold estimate from its own random partition.
    (Treating the R·k values as independent would shrink the error as √(R·k) however many
    times the same rows were reused.) With one repeat, the usual k-fold error: the standard
    deviation of the k fold values over √k. NaN where a value is NaN."""
    values = np.asarray(values, dtype=float)
    _, repeats, folds = values.shape
    with np.errstate(invalid="ignore"):
        if repeats >= 2:
            return values.mean(axis=2).std(axis=1, ddof=1) / np.sqrt(repeats)
        return values[:, 0].std(axis=1, ddof=1) / np.sqrt(folds)


@dataclass
class Selection:
    """The outcome of :func:`select`: the chosen row and the table's columns (one per λ)."""

    chosen: int
    objective: np.ndarray
    objective_se: np.ndarray
    violation: np.ndarray
    violation_se: np.ndarray
    constant: np.ndarray
    eligible: np.ndarray


def select(objective, violation, constant, tol: float) -> Selection:
    """The one-standard-error choice among eligible rows (λ ascending: the last row is the most
    regularised).

    Parameters
    ----------
    objective, violation : arrays (L, R, k)
        Each fold fit's objective rate on its validation fold and its worst constraint value
        minus bound there, *signed* (negative where every constraint holds with room): a fit
        whose constraint binds on its training rows lands on either side of the bound on new
        rows, and clipping at 0 would bias the mean upwards by about 0.4 of the fold's standard
        deviation, so that the only λ that stayed eligible was one whose fits predict no
        positives (violation exactly 0). NaN objective / +inf violation: the fit failed.
    constant : bool array (L, R, k)
        Whether each fold fit predicts one class on all its validation rows.
    tol : float
        The violation allowed (``feasibility_tol``).

    A row is *eligible* when its mean violation is at most ``tol`` plus its standard error
    (:func:`repeated_fold_se`): validation rates carry sampling noise, and only a violation
    distinguishable from it excludes a λ. A *constant* row — most of its fits predict one class
    — is not eligible while any other row is: such a fit ignores the features, and it meets a
    ratio constraint trivially (no positives in either group), so the filter cannot judge it.
    If no row is eligible, those with the smallest mean violation are. Among the eligible rows
    the one-standard-error rule takes the last whose mean objective is within one standard
    error of the smallest mean (the error of that best row's mean)."""
    objective = np.asarray(objective, dtype=float)
    violation = np.asarray(violation, dtype=float)
    constant = np.asarray(constant, dtype=bool)
    rows = objective.shape[0]
    with np.errstate(invalid="ignore"):
        obj_mean = objective.reshape(rows, -1).mean(axis=1)
        viol_mean = violation.reshape(rows, -1).mean(axis=1)
    obj_se, viol_se = repeated_fold_se(objective), repeated_fold_se(violation)
    # a degenerate SE (NaN with a single fold value, or an inf violation) adds no allowance
    viol_allow = np.where(np.isfinite(viol_se), viol_se, 0.0)
    is_constant = constant.reshape(rows, -1).mean(axis=1) > 0.5
    finite = np.isfinite(obj_mean) & np.isfinite(viol_mean)
    eligible = finite & (viol_mean <= tol + viol_allow)
    if (eligible & ~is_constant).any():
        eligible &= ~is_constant
    if not eligible.any():
        if not finite.any():
            raise ValueError("no λ has a finite cross-validation score")
        eligible = finite & (viol_mean == viol_mean[finite].min())
    best = np.flatnonzero(eligible)[np.argmin(obj_mean[eligible])]
    allow = obj_se[best] if np.isfinite(obj_se[best]) else 0.0
    within = eligible & (obj_mean <= obj_mean[best] + allow)
    return Selection(chosen=int(np.flatnonzero(within).max()), objective=obj_mean,
                     objective_se=obj_se, violation=viol_mean, violation_se=viol_se,
                     constant=is_constant, eligible=eligible)

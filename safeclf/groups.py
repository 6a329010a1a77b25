"""Which group is privileged and which protected: named once, used by every fairness figure.

A fairness ratio has a direction. safeclf states it as the *protected* group's rate over the
*privileged* group's, s_p(protected) / s_p(privileged), so a value below 1 is a disparity
against the protected group and a ratio constraint reads s_p(protected) ≥ κ s_p(privileged)
(Goh et al. 2016, Table 2, with D_A the protected and D_B the privileged group; the paper's
Figure 2 plots the inverse, s_p(D_M)/s_p(D_F) against 1/κ).

The privileged group is taken, in this order, from

1. the constraint (``{rate: fairness_ratio, privileged: Male}`` or an estimator's
   ``privileged`` parameter),
2. the dataset (``info["privileged_group"]``: Adult and the churn data set it, the ``csv``
   loader through its ``privileged`` parameter),
3. a named fallback, used only where a model must pick one to train: the group whose training
   labels are most often positive (:data:`FALLBACK`).

Where no direction is named (a figure computed for any method on a dataset that names no
privileged group), the ratio is the smallest group rate over the largest, which is ≤ 1 like a
directed ratio that shows a disparity, and its metric name says so (``fairness_ratio_minmax``).

A constraint that names a privileged group other than the dataset's is an error: the
training-side and test-side figures of one run must agree on direction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from safeclf.errors import DataError, closest

#: How the fallback privileged group is chosen, in words (recorded with every result).
FALLBACK = "fallback: the group whose training labels are most often positive"

#: The metric name of a ratio without a named direction.
UNDIRECTED = "fairness_ratio_minmax"


@dataclass(frozen=True)
class Direction:
    """The privileged group (``None``: no direction named) and where it came from
    (``"constraint"``, ``"dataset"``, :data:`FALLBACK` or ``"none"``)."""

    privileged: str | None
    source: str

    @property
    def named(self) -> bool:
        return self.privileged is not None

    def ratio_name(self, base: str = "fairness_ratio") -> str:
        """``base`` for a directed ratio, ``base + "_minmax"`` for an undirected one."""
        return base if self.named else f"{base}_minmax"

    def describe(self) -> str:
        if not self.named:
            return "min over groups / max over groups (no privileged group named)"
        return f"protected (not {self.privileged}) / privileged ({self.privileged}; {self.source})"


def named_group(named: Any, groups, what: str, of: str = "the data's groups"):
    """The value of ``groups`` that ``named`` names (compared as strings). A
    :class:`DataError` ``"<what> 'male' is not a value of <of> (did you mean 'Male'?); its
    groups are ..."`` when none does (``what`` names the place, e.g. a constraint's
    ``privileged``)."""
    values = [v for v in dict.fromkeys(np.asarray(groups, dtype=object).ravel().tolist())
              if v is not None and v == v]
    match = [v for v in values if str(v) == str(named)]
    if match:
        return match[0]
    shown = ", ".join(repr(v) for v in values[:20]) + (", ..." if len(values) > 20 else "")
    same_but_case = [v for v in values if str(v).lower() == str(named).lower()]
    hint = (f" (did you mean {same_but_case[0]!r}?)" if same_but_case
            else closest(str(named), map(str, values)))
    raise DataError(f"{what} {named!r} is not a value of {of}{hint}; its groups are {shown}")


def resolve(named: Any = None, info: Mapping[str, Any] | None = None, groups=None,
            positive=None, where: str = "privileged") -> Direction:
    """The direction of a fairness figure.

    Parameters
    ----------
    named : the privileged group a constraint or estimator names, or None.
    info : the dataset's ``info`` (its ``privileged_group``), or None.
    groups, positive : (n,) group labels and booleans "label is positive" of the training rows;
        when given and nothing is named, the :data:`FALLBACK` group is chosen from them.
    where : the place named in the error raised when ``named`` contradicts the dataset or, with
        ``groups``, is not one of them (:func:`named_group`).
    """
    declared = (info or {}).get("privileged_group")
    if named is not None and groups is not None:
        named_group(named, groups, where)
    if named is not None:
        if declared is not None and str(declared) != str(named):
            raise DataError(f"{where} '{named}' contradicts the dataset's privileged group "
                            f"'{declared}'; name the same group or leave it out")
        return Direction(str(named), "constraint")
    if declared is not None:
        return Direction(str(declared), "dataset")
    if groups is not None and positive is not None:
        g = np.asarray(groups).astype(str)
        pos = np.asarray(positive, dtype=bool)
        names = np.unique(g)
        if names.size:
            return Direction(str(max(names, key=lambda a: pos[g == a].mean())), FALLBACK)
    return Direction(None, "none")


def split(groups, privileged: str) -> tuple[np.ndarray, np.ndarray]:
    """(protected, privileged) boolean masks of ``groups`` (compared as strings)."""
    g = np.asarray(groups).astype(str)
    priv = g == str(privileged)
    return ~priv, priv


def ratio(p, groups, direction: Direction, base=None) -> float:
    """The fairness ratio of per-row values ``p`` (0/1 predictions "positive", or the
    randomised rule's probabilities) on the rows ``base`` (default all): mean over protected /
    mean over privileged when ``direction`` is named, else min / max of the group means.
    ``nan`` when a group is empty or the denominator is 0."""
    p = np.asarray(p, dtype=float)
    g = np.asarray(groups).astype(str)
    keep = np.ones(p.shape[0], bool) if base is None else np.asarray(base, bool)
    if direction.named:
        prot, priv = split(g, direction.privileged)
        prot, priv = prot & keep, priv & keep
        if not prot.any() or not priv.any():
            return float("nan")
        num, den = p[prot].mean(), p[priv].mean()
    else:
        means = [p[keep & (g == a)].mean() for a in np.unique(g[keep])]
        if len(means) < 2:
            return float("nan")
        num, den = min(means), max(means)
    return float(num / den) if den > 0 else float("nan")


def counts(positive_pred, groups, privileged: str, base=None) -> tuple[int, int, int, int]:
    """(k_protected, n_protected, k_privileged, n_privileged): predicted positives and sizes
    of the two groups within ``base`` — what an interval for the ratio needs."""
    pos = np.asarray(positive_pred, dtype=bool)
    keep = np.ones(pos.shape[0], bool) if base is None else np.asarray(base, bool)
    prot, priv = split(groups, privileged)
    prot, priv = prot & keep, priv & keep
    return int((pos & prot).sum()), int(prot.sum()), int((pos & priv).sum()), int(priv.sum())

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
3. a named fallback, used only where a model must pick one to train: the group whose labels
   are most often positive (favourable, :mod:`safeclf.guarantees.outcome`) on *all* the dataset's rows,
   chosen once when the dataset is loaded (:func:`references`, ``info["reference_groups"]``),
   so every job and seed compares in the same direction (:data:`FALLBACK`).

The per-group table (:mod:`safeclf.report.by_group`) takes its reference group of each column from
the same place (:func:`reference_of`).

Where no direction is named (a figure computed for any method on a dataset that names no
privileged group), the ratio is the smallest group rate over the largest, which is ≤ 1 like a
directed ratio that shows a disparity, and its metric name says so (``fairness_ratio_minmax``).

A constraint that names a privileged group other than the dataset's is an error: the
training-side and test-side figures of one run must agree on direction.

More than two groups
--------------------
With two groups the protected group is every row not privileged. With more, a comparison is
a list of pairs (:func:`comparisons`): by default each group against the privileged one;
``worst_pair`` every ordered pair (all hold exactly when min / max ≥ κ, the four-fifths rule
over k groups); ``pooled`` the two-group meaning on purpose. Every user of groups — ramp's
constraints, promises and their held-out checks, certification, the shared
``fairness_ratio`` metric (the smallest ratio over the pairs) and the by-group report — takes
its pairs from here. Intersectional groups are one label per row joining several columns'
values (:func:`intersect`, ``"Female & Black"``); a group with fewer rows than
:data:`MIN_GROUP_SIZE` is reported as small, never pooled with another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from safeclf.errors import DataError, closest

#: How the fallback privileged group is chosen, in words (recorded with every result).
FALLBACK = ("fallback: the group whose labels are most often positive on all the dataset's "
            "rows (before the split)")

#: The same, for data that did not go through the runner's loading (no
#: ``info["reference_groups"]``): chosen on the rows given, so it may differ between splits.
FALLBACK_ROWS = "fallback: the group whose training labels are most often positive"

#: The key of ``Dataset.info`` holding each group column's reference group
#: (``{column: {"group": ..., "source": ...}}``, :func:`references`).
REFERENCES = "reference_groups"


class Reference(str):
    """A group label that remembers where it came from (``source``): the dataset-level
    fallback passed where a privileged group is expected (:func:`privileged_of`)."""

    def __new__(cls, value, source: str = FALLBACK):
        out = str.__new__(cls, value)
        out.source = source
        return out

    def __reduce__(self):
        return (Reference, (str(self), self.source))


def as_labels(groups) -> np.ndarray:
    """``groups`` as an array of text labels (the vocabulary compares groups as strings),
    without a copy when it is one already."""
    g = np.asarray(groups)
    return g if g.dtype.kind == "U" else g.astype(str)


def fallback(groups, positive) -> str:
    """The group whose rows are most often positive (the first in label order on a tie)."""
    g = as_labels(groups)
    pos = np.asarray(positive, dtype=bool)
    return str(max(np.unique(g), key=lambda a: pos[g == a].mean()))


def references(rows: Mapping[str, Any], info: Mapping[str, Any], positive) -> dict:
    """The reference group of each group column of a dataset, chosen once on all its rows
    (``positive``: each row's label is the favourable one): ``groups`` takes the declared
    privileged group; each column of an intersection (``info["group_columns"]``) its part of
    a declared privileged intersection; any other column the :data:`FALLBACK` group.
    ``{column: {"group": label, "source": where it came from}}``."""
    declared = info.get("privileged_group")
    columns = list(info.get("group_columns") or [])
    parts = label(declared).split(JOIN) if declared is not None else []
    out = {}
    for column in ["groups", *columns]:
        if column not in rows or isinstance(rows[column], Mapping):
            continue
        g = np.asarray(rows[column]).astype(str)
        if column == "groups" and declared is not None:
            out[column] = {"group": label(declared), "source": "dataset"}
        elif len(parts) == len(columns) and column in columns \
                and parts[columns.index(column)] in set(g.tolist()):
            out[column] = {"group": parts[columns.index(column)],
                           "source": "dataset (its part of the privileged intersection)"}
        else:
            out[column] = {"group": fallback(g, positive), "source": FALLBACK}
    return out


def reference_of(info: Mapping[str, Any] | None, column: str = "groups") -> str | None:
    """The reference group of ``column`` (:func:`references`): the declared privileged group,
    else the one chosen when the dataset was loaded; None when neither is known."""
    info = info or {}
    if column == "groups" and info.get("privileged_group") is not None:
        return label(info["privileged_group"])
    ref = (info.get(REFERENCES) or {}).get(column)
    return None if ref is None else str(ref["group"])


def privileged_of(info: Mapping[str, Any] | None):
    """What a model that must compare against a privileged group takes from the dataset: the
    declared group (a string), else the dataset-level fallback as a :class:`Reference`
    (its ``source`` says so, and a constraint may name another group), else None."""
    info = info or {}
    if info.get("privileged_group") is not None:
        return info["privileged_group"]
    ref = (info.get(REFERENCES) or {}).get("groups")
    return None if ref is None else Reference(ref["group"], ref["source"])


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
    words = _YAML_WORDS.get(str(named), ())
    read_as = [v for v in values if str(v).lower() in words]
    if read_as:  # privileged: no, unquoted, is YAML's false
        hint = (f" (YAML reads an unquoted {str(read_as[0])} as {named}: quote it, "
                f"\"{read_as[0]}\")")
    raise DataError(f"{what} {named!r} is not a value of {of}{hint}; its groups are {shown}")


#: The words YAML 1.1 (PyYAML) reads as each boolean, unquoted.
_YAML_WORDS = {"True": ("yes", "y", "on", "true"), "False": ("no", "n", "off", "false")}


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
    if isinstance(declared, Reference) and groups is not None \
            and str(declared) not in set(as_labels(groups).tolist()):
        declared = None  # a fallback for rows that lack it (a subset): chosen on these rows
    if named is not None and groups is not None:
        named_group(named, groups, where)
    if named is not None:
        if declared is not None and not isinstance(declared, Reference) \
                and str(declared) != str(named):
            raise DataError(f"{where} '{named}' contradicts the dataset's privileged group "
                            f"'{declared}'; name the same group or leave it out")
        return Direction(str(named), "constraint")
    if declared is not None:
        return Direction(str(declared), getattr(declared, "source", "dataset"))
    if groups is not None and positive is not None:
        ref = reference_of(info)
        if ref is not None and ref in set(as_labels(groups).tolist()):
            return Direction(ref, FALLBACK)
        if np.asarray(groups).size:
            return Direction(fallback(groups, positive), FALLBACK_ROWS)
    return Direction(None, "none")


def split(groups, privileged: str) -> tuple[np.ndarray, np.ndarray]:
    """(protected, privileged) boolean masks of ``groups`` (compared as strings)."""
    g = as_labels(groups)
    priv = g == str(privileged)
    return ~priv, priv


def ratio(p, groups, direction: Direction, base=None) -> float:
    """The fairness ratio of per-row values ``p`` (0/1 predictions "positive", or the
    randomised rule's probabilities) on the rows ``base`` (default all): mean over protected /
    mean over privileged when ``direction`` is named (with more than two groups, the smallest
    of each group's mean over the privileged group's: :func:`comparisons`' default), else
    min / max of the group means. ``nan`` when a group is empty or the denominator is 0."""
    p = np.asarray(p, dtype=float)
    g = as_labels(groups)
    keep = np.ones(p.shape[0], bool) if base is None else np.asarray(base, bool)
    if direction.named:
        present = values(g[keep])
        if direction.privileged not in present or len(present) < 2:
            return float("nan")
        worst = float("nan")
        for pair in comparisons(g[keep], direction.privileged):
            prot, priv = pair_masks(g, pair.privileged, pair.protected)
            num, den = p[prot & keep].mean(), p[priv & keep].mean()
            r = float(num / den) if den > 0 else float("nan")
            worst = r if worst != worst or r < worst else worst
        return worst
    else:
        means = [p[keep & (g == a)].mean() for a in np.unique(g[keep])]
        if len(means) < 2:
            return float("nan")
        num, den = min(means), max(means)
    return float(num / den) if den > 0 else float("nan")


def counts(positive_pred, groups, privileged: str, base=None,
           protected=None) -> tuple[int, int, int, int]:
    """(k_protected, n_protected, k_privileged, n_privileged): predicted positives and sizes
    of the two groups of a pair within ``base`` — what an interval for the ratio needs;
    ``protected`` None is every row not privileged (:func:`pair_masks`)."""
    pos = np.asarray(positive_pred, dtype=bool)
    keep = np.ones(pos.shape[0], bool) if base is None else np.asarray(base, bool)
    prot, priv = pair_masks(groups, privileged, protected)
    prot, priv = prot & keep, priv & keep
    return int((pos & prot).sum()), int(prot.sum()), int((pos & priv).sum()), int(priv.sum())


# -- several groups: comparisons, intersections, small groups --------------------------------
#: How the values of several group columns are joined into one intersectional group label
#: (``group: [sex, race]`` gives ``"Female & Black"``).
JOIN = " & "

#: A group with fewer rows than this is reported as small (by-group tables, ``validate``): its
#: figures are kept and compared, never pooled into another group, but its intervals are wide.
MIN_GROUP_SIZE = 30

#: How the groups of a ratio or difference are compared (:func:`comparisons`):
#: ``each`` — each non-privileged group against the privileged one (the default with more than
#: two groups); ``worst_pair`` — every ordered pair of groups, so that all hold exactly when
#: the smallest group rate is within κ of the largest (the four-fifths rule over k groups);
#: ``pooled`` — every non-privileged row pooled into one protected group (the two-group
#: meaning, and the default with two groups, where it equals ``each``).
COMPARE = ("each", "worst_pair", "pooled")


def label(value) -> str:
    """A group as its label: a list or tuple (an intersection named by its parts, ``[Female,
    Black]``) is joined with :data:`JOIN`; anything else is its string."""
    if isinstance(value, (list, tuple)):
        return JOIN.join(str(v) for v in value)
    return str(value)


def intersect(columns) -> np.ndarray:
    """Intersectional group labels of several aligned columns (one label per row, the
    columns' values joined with :data:`JOIN` in the order given)."""
    cols = [np.asarray(c).astype(str) for c in columns]
    if len(cols) == 1:
        return cols[0].astype(object)
    out = cols[0].astype(object)
    for c in cols[1:]:
        out = out + JOIN + c.astype(object)
    return out


def values(groups) -> list[str]:
    """The distinct group labels of ``groups`` as strings, sorted."""
    g = as_labels(groups)
    return sorted(np.unique(g).tolist())


def codes(groups) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct group labels as strings, sorted; each row's position among them): what
    ``np.unique(groups, return_inverse=True)`` gives on the labels as text, without sorting
    the rows (the labels found by hashing, each row's position by a binary search among
    them; a million rows in three groups cost a quarter of the sort)."""
    g = as_labels(groups)
    names = np.unique(g)
    return names, np.searchsorted(names, g).astype(np.intp, copy=False)


def sizes(groups, base=None) -> dict[str, int]:
    """Rows per group (within ``base``), every group of ``groups`` listed."""
    g = as_labels(groups)
    keep = np.ones(g.shape[0], bool) if base is None else np.asarray(base, bool)
    return {v: int((keep & (g == v)).sum()) for v in values(g)}


def small(groups, minimum: int = MIN_GROUP_SIZE, base=None) -> dict[str, int]:
    """The groups with fewer than ``minimum`` rows (within ``base``) and their sizes."""
    return {v: n for v, n in sizes(groups, base).items() if n < minimum}


@dataclass(frozen=True)
class Pair:
    """One compared pair: the rate of ``protected`` (``None``: every row not privileged) set
    against the rate of ``privileged`` (the reference group of the pair)."""

    protected: str | None
    privileged: str

    def numerator(self) -> str:
        return f"not {self.privileged}" if self.protected is None else self.protected

    def describe(self) -> str:
        """``group_b vs group_a``: the pair as a reader names it."""
        return f"{self.numerator()} vs {self.privileged}"

    def suffix(self, compare: str) -> str:
        """An identifier fragment naming the pair (``group_b``; ``group_b_vs_group_a`` for a
        worst-pair comparison, whose reference group varies)."""
        if self.protected is None:
            return "pooled"
        if compare == "worst_pair":
            return f"{_slug(self.protected)}_vs_{_slug(self.privileged)}"
        return _slug(self.protected)


def _slug(text: str) -> str:
    import re

    return re.sub(r"\W+", "_", str(text)).strip("_") or "group"


def default_compare(groups, protected=None) -> str:
    """``pooled`` with two groups or fewer (today's meaning, identical to ``each`` there),
    ``each`` with more; ``each`` whenever protected groups are named."""
    if protected is not None:
        return "each"
    return "pooled" if len(values(groups)) <= 2 else "each"


def comparisons(groups, privileged=None, compare: str | None = None, protected=None,
                where: str = "comparison") -> list[Pair]:
    """The pairs a ratio or difference of group rates compares, given the data's groups.

    Parameters
    ----------
    groups : (n,) group labels.
    privileged : the reference group (a label, or a list naming an intersection); needed by
        ``each`` and ``pooled``, ignored by ``worst_pair``.
    compare : one of :data:`COMPARE`; None for :func:`default_compare`.
    protected : a group or a list of groups to compare with ``privileged`` (``each`` only);
        None for every other group.
    where : the place named in errors (a group the data lacks, a missing privileged group).

    Returns
    -------
    list of Pair
        One per comparison, in the order of the groups' labels. Every group is its own
        side of a pair: none is pooled with another except under ``pooled``.
    """
    names = values(groups)
    compare = compare or default_compare(groups, protected)
    if compare not in COMPARE:
        raise DataError(f"{where}.compare must be one of {', '.join(COMPARE)}, got {compare!r}")
    if compare == "worst_pair":
        if protected is not None:
            raise DataError(f"{where}: protected names groups, which a worst_pair comparison "
                            "does not take (it compares every pair); leave one out")
        if len(names) < 2:
            raise DataError(f"{where}: a worst_pair comparison needs two groups, the data has "
                            f"{len(names)}")
        return [Pair(a, b) for b in names for a in names if a != b]
    if privileged is None:
        raise DataError(f"{where}: comparing against the privileged group needs one; name it "
                        "(privileged: ...) or use compare: worst_pair")
    priv = str(named_group(label(privileged), as_labels(groups),
                           f"{where}.privileged"))
    if compare == "pooled":
        if protected is not None:
            raise DataError(f"{where}: protected names groups, which a pooled comparison does "
                            "not take (it pools every row not privileged)")
        return [Pair(None, priv)]
    wanted = names if protected is None else [
        str(named_group(label(p), as_labels(groups), f"{where}.protected"))
        for p in (protected if isinstance(protected, list) else [protected])]
    if priv in wanted and protected is not None:
        raise DataError(f"{where}.protected names the privileged group {priv!r}; a group is "
                        "not compared with itself")
    return [Pair(g, priv) for g in dict.fromkeys(wanted) if g != priv]


def pair_masks(groups, privileged, protected=None) -> tuple[np.ndarray, np.ndarray]:
    """(protected, privileged) boolean masks of one pair: ``protected`` None is every row not
    privileged (:func:`split`), else the rows of that group."""
    g = as_labels(groups)
    priv = g == label(privileged)
    prot = ~priv if protected is None else g == label(protected)
    return prot, priv

"""Counting thousands of threshold rules on one part in O(n log n) (issue 37): the rows sorted
by score once within each group, every count a promise needs as c₀ + c · p (p the rule's 0/1
predictions, :func:`safeclf.guarantees.promises.evidence_terms`), so a rule's count is, per
group, a prefix sum of c up to the number of rows above the group's threshold (a binary
search). It gives the same integers as counting each rule's predictions row by row
(:func:`safeclf.guarantees.promises.rate_evidence`), without a pass over the rows per rule.
"""

from __future__ import annotations

import numpy as np

from safeclf.guarantees.promises import evidence_terms


def terms(part, q) -> tuple[tuple[float, np.ndarray], ...]:
    """:func:`~safeclf.guarantees.promises.evidence_terms` of quantity ``q`` on ``part``,
    computed once per part."""
    cache = part.__dict__.setdefault("_terms", {})
    key = repr(q)
    if key not in cache:
        cache[key] = evidence_terms(q, part.y_pos, part.rows, part.memo())
    return cache[key]


def by_score(part) -> np.ndarray:
    """The rows of ``part`` in ascending score order: one argsort, computed once per part
    (the grid's quantiles and every :class:`SortedPart` of the part read it)."""
    if "_by_score" not in part.__dict__:
        part._by_score = np.argsort(part.score)
    return part._by_score


def sizes(part, q) -> tuple[int, int, int, int]:
    """(n, n₂) of ``q`` on ``part`` with no prediction looked at, as
    :func:`~safeclf.guarantees.promises.sizes` gives them (every row predicted positive for a
    rate among the predicted positives, none otherwise), and the k's at those predictions."""
    everyone = q.predicted == "positive"
    return tuple(int(round(c0 + (float(c.sum()) if everyone else 0.0)))
                 for c0, c in terms(part, q))


class SortedPart:
    """A part's scores sorted within each group of the rows entry ``entry`` (one group for
    every row when None): what :meth:`positives` and :meth:`total` read.

    Parameters
    ----------
    part : safeclf.guarantees.certify.threshold.Part
    entry : str or None
        The rows entry whose groups the rules' per-group thresholds are for.
    """

    def __init__(self, part, entry: str | None):
        self.part, self.entry = part, entry
        n = part.score.size
        if entry is not None and entry in part.rows:
            self.names, codes = part.codes(entry)
        else:
            self.names, codes = np.array([""]), np.zeros(n, dtype=np.intp)
        # by group, then by score descending: a group's rows above a threshold are a prefix.
        # One sort of the part's scores (shared with the grid, :func:`by_score`), then a stable
        # sort by group code (small integers: a radix sort, linear), so each group's rows stay
        # in ascending score order. Ties may come in any order: the prefix is the set of rows
        # above, whatever their order, and the counts are sums of integers, exact in any order.
        up = by_score(part)
        k = len(self.names)
        small = np.uint8 if k <= 2 ** 8 else np.uint16 if k <= 2 ** 16 else np.intp
        asc = up[np.argsort(codes[up].astype(small), kind="stable")]
        self.starts = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=k))]).astype(int)
        score = part.score[asc]
        bounds = list(zip(self.starts[:-1], self.starts[1:]))
        self.ascending = [score[a:b] for a, b in bounds]
        self.order = np.concatenate([asc[a:b][::-1] for a, b in bounds]) if bounds \
            else np.zeros(0, dtype=int)
        self.y_pos = part.y_pos[self.order]
        self._prefix: dict = {}  # id of a coefficient array -> (the array, its prefix sums)

    def thresholds(self, rules) -> np.ndarray:
        """(rules, groups) thresholds: each group's own where a rule has one, else the rule's."""
        out = np.empty((len(rules), len(self.names)))
        names = [str(a) for a in self.names]
        for i, r in enumerate(rules):
            own = dict(r.per_group) if r.per_group and r.groups == self.entry else {}
            if r.per_group and not own:
                raise ValueError(f"rule for rows '{r.groups}' counted on groups of "
                                 f"'{self.entry}'")
            out[i] = [own.get(a, r.threshold) for a in names]
        return out

    def positives(self, rules) -> np.ndarray:
        """(rules, groups): how many rows of each group each rule predicts positive (score
        strictly above its threshold, as :meth:`Rule.positive`)."""
        t = self.thresholds(rules)
        out = np.empty(t.shape, dtype=np.int64)
        for g, asc in enumerate(self.ascending):
            out[:, g] = asc.size - np.searchsorted(asc, t[:, g], side="right")
        return out

    def total(self, coef: np.ndarray, positives: np.ndarray) -> np.ndarray:
        """Σ coef over each rule's positive rows (``positives`` from :meth:`positives`;
        ``coef`` per row of the part, in the part's order). Its per-group prefix sums are
        computed once and kept (by the array's identity, the array with them) for every
        later call: the part's coefficient arrays are themselves computed once
        (:func:`terms`)."""
        if id(coef) not in self._prefix:
            ranked, prefixes = coef[self.order], []
            for a, b in zip(self.starts[:-1], self.starts[1:]):
                c = ranked[a:b]  # None: no prediction in this group changes the count
                prefixes.append(np.concatenate([[0.0], np.cumsum(c, dtype=float)])
                                if c.any() else None)
            self._prefix[id(coef)] = (coef, prefixes)
        out = np.zeros(positives.shape[0])
        for g, prefix in enumerate(self._prefix[id(coef)][1]):
            if prefix is not None:
                out += prefix[positives[:, g]]
        return out

    def counts(self, promises, positives: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """Per promise, the arrays (k, n, k₂, n₂) of its counts under each rule (a
        coefficient array shared by several promises, :func:`terms`, summed once)."""
        totals: dict = {}  # id of a coefficient array -> (the array, its totals)

        def total(c):
            if id(c) not in totals:
                totals[id(c)] = (c, self.total(c, positives) if c.any()
                                 else np.zeros(positives.shape[0]))
            return totals[id(c)][1]

        return [tuple(np.rint(c0 + total(c)) for c0, c in terms(self.part, p.quantity))
                for p in promises]

    def errors(self, positives: np.ndarray) -> np.ndarray:
        """Each rule's count of rows whose prediction is not their label."""
        if "flip" not in self.__dict__:  # a row's change in errors when predicted positive
            self.flip = 1.0 - 2.0 * self.part.y_pos
        return np.rint(float(self.y_pos.sum()) + self.total(self.flip, positives))

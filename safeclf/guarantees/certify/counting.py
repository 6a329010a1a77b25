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
            self.names, codes = np.array([""]), np.zeros(n, dtype=int)
        # by group, then by score descending: a group's rows above a threshold are a prefix
        # (ties in any order: the prefix is the set of rows above, whatever their order, and
        # the counts are sums of integers, exact in any order; so no stable sort, at twice
        # the cost)
        members = [np.flatnonzero(codes == g) for g in range(len(self.names))]
        self.ascending = []
        for g, rows in enumerate(members):
            up = np.argsort(part.score[rows])
            self.ascending.append(part.score[rows[up]])
            members[g] = rows[up[::-1]]
        self.order = np.concatenate(members) if members else np.zeros(0, dtype=int)
        self.starts = np.concatenate([[0], np.cumsum([m.size for m in members])]).astype(int)
        self.y_pos = part.y_pos[self.order]

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
        ``coef`` per row in this object's order)."""
        out = np.zeros(positives.shape[0])
        for g, (a, b) in enumerate(zip(self.starts[:-1], self.starts[1:])):
            c = coef[a:b]
            if c.any():  # else no prediction in this group changes the count
                prefix = np.concatenate([[0.0], np.cumsum(c, dtype=float)])
                out += prefix[positives[:, g]]
        return out

    def counts(self, promises, positives: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        """Per promise, the arrays (k, n, k₂, n₂) of its counts under each rule (a
        coefficient array shared by several promises, :func:`terms`, summed once)."""
        totals: dict = {}  # id of a coefficient array -> (the array, its totals)

        def total(c):
            if id(c) not in totals:
                totals[id(c)] = (c, self.total(c[self.order], positives) if c.any()
                                 else np.zeros(positives.shape[0]))
            return totals[id(c)][1]

        return [tuple(np.rint(c0 + total(c)) for c0, c in terms(self.part, p.quantity))
                for p in promises]

    def errors(self, positives: np.ndarray) -> np.ndarray:
        """Each rule's count of rows whose prediction is not their label."""
        y = self.y_pos
        return np.rint(float(y.sum()) + self.total(1.0 - 2.0 * y, positives))

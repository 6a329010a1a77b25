"""One part of the rows certification reads (:mod:`safeclf.guarantees.certify.threshold`):
the model's scores, the labels and the row entries of the candidate or the held-back part, and
what every search over it computes once (score order, count terms, rows sorted by group).
On a large table the held-back part is prepared in a helper thread beside the candidate part
(:data:`THREADED_ROWS`, :func:`beside`)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from safeclf.errors import DataError
from safeclf.guarantees.certify import counting
from safeclf.guarantees.certify.counting import SortedPart
from safeclf.guarantees.promises import group_codes


def scores_of(estimator, X) -> np.ndarray:
    """A score that orders rows (larger: more positive)."""
    if hasattr(estimator, "decision_function"):
        s = np.asarray(estimator.decision_function(X), dtype=float)
        if s.ndim == 1:
            return s
    if hasattr(estimator, "predict_proba"):
        return np.asarray(estimator.predict_proba(X), dtype=float)[:, -1]
    raise DataError(f"{type(estimator).__name__} gives no score (decision_function or "
                    "predict_proba), so no threshold can be certified for it")


@dataclass
class Part:
    """Rows of one part: scores, labels (positive or not) and row entries (groups, ...)."""

    score: np.ndarray
    y_pos: np.ndarray
    rows: dict = field(default_factory=dict)

    def take(self, idx) -> Part:
        return Part(self.score[idx], self.y_pos[idx],
                    {k: np.asarray(v)[idx] for k, v in self.rows.items()})

    def codes(self, entry: str) -> tuple[np.ndarray, np.ndarray]:
        """(group names as text, each row's position among them) of the rows entry
        ``entry``, computed once per part (every rule of a search reads them)."""
        return group_codes(self.rows, entry, self.memo())

    def memo(self) -> dict:
        """What is computed once per part (group codes, count terms: :func:`group_codes`,
        :func:`~safeclf.guarantees.promises.evidence_terms`)."""
        return self.__dict__.setdefault("_memo", {})

    def sorted(self, entry: str | None) -> SortedPart:
        """The rows sorted by score within each group of ``entry`` (None: all rows one group),
        computed once per part: every rule's counts are read off it
        (:mod:`safeclf.guarantees.certify.counting`)."""
        cache = self.__dict__.setdefault("_sorted", {})
        if entry not in cache:
            cache[entry] = SortedPart(self, entry)
        return cache[entry]


#: From this many rows, :meth:`CertifiedClassifier._certify` prepares the held-back part in a
#: thread beside the candidate part (below it a thread costs more than it saves).
THREADED_ROWS = 200_000


def prepared(part: Part, promises, *entries) -> Part:
    """``part`` with what a search reads computed: its score order, each promise's count terms
    and its rows sorted within the groups of each of ``entries`` (None: all rows one group) —
    the values the search would otherwise compute on first use."""
    counting.by_score(part)
    for p in promises:
        counting.terms(part, p.quantity)
    for entry in entries:
        part.sorted(entry if entry is not None and entry in part.rows else None)
    return part


@contextmanager
def beside(threaded: bool):
    """Yields ``later(fn, *args)``, which returns a function giving ``fn(*args)``: computed
    in one helper thread, in the order submitted, from the call of ``later`` when
    ``threaded``; else when that function is called."""
    if not threaded:
        yield lambda fn, *args: lambda: fn(*args)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="safeclf-certify") as pool:
        yield lambda fn, *args: pool.submit(fn, *args).result


def rows_of(X, idx):
    """Rows ``idx`` of X (an array: by ``np.take``, the same values as ``X[idx]`` at a third of
    its cost on a million rows)."""
    if isinstance(X, np.ndarray):
        return np.take(X, idx, axis=0)
    return X[idx] if not hasattr(X, "iloc") else X.iloc[idx]

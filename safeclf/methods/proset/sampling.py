"""Choosing the candidates of a batch: the 2K bins, Algorithm alg_bins, condition eq_min_cases_2."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from safeclf.errors import DataError


def check_min_cases(counts, classes, eta: float) -> None:
    """Refuse data violating condition eq_min_cases_2 of the paper:
    ceil(N_k / 2) >= 1 / (2 eta) and ceil(N_k / 2) > 1 / (2 (1 - eta)) for every class k,
    which is what makes every class present both among the candidates and the scoring set.
    Decided in exact arithmetic on the decimal η the user wrote (:func:`_meets_min_cases`)."""
    for label, n_k in zip(classes, counts):
        if not _meets_min_cases(int(n_k), eta):
            need = _min_class_size(eta)
            raise DataError(
                f"proset: class {_plain(label)!r} has {int(n_k)} training samples but with "
                f"max_fraction η = {eta:g} every class needs at least {need} (condition "
                "eq_min_cases_2: each class must give a candidate and keep a scoring point)"
            )


def _meets_min_cases(n_k: int, eta: float) -> bool:
    """eq_min_cases_2 for one class, in fractions: ``2 η ⌈N_k/2⌉ ≥ 1`` and ``2 (1 − η)
    ⌈N_k/2⌉ > 1``, η taken as the shortest decimal that reads back as the float (0.95 is
    19/20). In floats 0.5 / (1 − 0.95) is 9.999999999999991, so N_k = 19 and 20 passed the
    strict inequality at η = 0.95 where 10 > 10 is false."""
    exact = Fraction(repr(float(eta)))
    half = -(-n_k // 2)
    return 2 * exact * half >= 1 and 2 * (1 - exact) * half > 1


def _min_class_size(eta: float) -> int:
    n = 1
    while not _meets_min_cases(n, eta):
        n += 1
    return n


def bin_counts(g, M: int, eta: float) -> np.ndarray:
    """Algorithm alg_bins: how many candidates h_i to draw from bins of sizes g_i.

    Bins are visited from the smallest; each gives at most eta * g_i, and once the remaining
    bins are large enough the remaining budget R is split evenly between them. Returned in the
    order of ``g`` (not sorted), rounded to the closest integer.
    """
    g = np.asarray(g, dtype=float)
    order = np.argsort(g, kind="stable")
    h = np.zeros_like(g)
    R = float(M)
    m = g.size
    for pos, i in enumerate(order):                    # [1]..[4]
        r = R / (m - pos)                              # [2]
        if r <= eta * g[i]:                            # [3]
            h[order[pos:]] = r
            break
        h[i] = eta * g[i]                              # [4]
        R -= h[i]
    h = np.floor(h + 0.5)                              # [5] round half up
    return np.minimum(h, g).astype(int)


def bins(correct, y, n_classes: int) -> np.ndarray:
    """Bin id per sample: 2 k for correctly classified samples of class k, 2 k + 1 otherwise."""
    return 2 * np.asarray(y) + (~np.asarray(correct, bool)).astype(int)


def draw_candidates(q, y, n_classes: int, M: int, eta: float, rng) -> np.ndarray:
    """Indices of the candidates for the next batch, given the current unscaled
    probabilities ``q`` (N x K) of all training samples.

    A sample is correctly classified iff the probability of its true class is greater than
    that of every other class; the 2K bins (class x correct/incorrect) are sampled with the
    counts of :func:`bin_counts`, without replacement.
    """
    n = q.shape[0]
    own = q[np.arange(n), y]
    other = q.copy()
    other[np.arange(n), y] = -np.inf
    correct = own > other.max(axis=1)
    b = bins(correct, y, n_classes)
    members = [np.flatnonzero(b == i) for i in range(2 * n_classes)]
    h = bin_counts([m.size for m in members], M, eta)
    chosen = [rng.choice(m, size=k, replace=False) for m, k in zip(members, h) if k > 0]
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, int)


def _plain(label):
    """A numpy scalar as the Python value (so messages read 'a', not np.str_('a'))."""
    return label.item() if hasattr(label, "item") else label

"""Complexity penalties γ_i(n), the optimistic criterion (6) and the coarse grid (Definition 1).

Notation (Agarwal, Duchi, Bartlett, Levrard 2011): K classes, budget T quanta, a quantum buys
n_i samples of class i, γ_i(n) the complexity penalty of class i after n samples, κ₂ the
concentration constant of Assumption A, λ the coarse-grid accuracy.
"""

from __future__ import annotations

import math

import numpy as np


def gamma(d: float, n: float, c: float, alpha: float) -> float:
    """γ_i(n) = c·(d_i / n)^α (Assumption A(c); α = 1/2 for VC classes, eq. (4))."""
    return float(c * (d / n) ** alpha) if n > 0 else math.inf


def optimistic_criterion(risk: float, d: float, n: float, n_total: float, K: int, c: float,
                         alpha: float, kappa2: float, t: int | None = None) -> float:
    """Criterion (6): R̃_i(n) = R̂_n(Â(i,n)) − γ_i(n) − κ₂·sqrt(log K / n) + γ_i(T n_i).

    ``n_total`` is T·n_i. With ``t`` given, the term −κ₂·sqrt(log t / n) that the proof of
    Theorem 1 (Lemma 1, eq. (17)) adds at round t is subtracted as well.
    """
    conf = kappa2 * math.sqrt(math.log(K) / n) if K > 1 else 0.0
    if t is not None and t > 1:
        conf += kappa2 * math.sqrt(math.log(t) / n)
    return risk - gamma(d, n, c, alpha) - conf + gamma(d, n_total, c, alpha)


def coarse_grid(penalty_at, K: int, lam: float) -> list[int]:
    """The smallest S ⊆ [K] with the coarse-grid property (Definition 1, eq. (11)).

    ``penalty_at(i, s)`` is γ_i(T n_i / s), the penalty of class i (0-based) when the budget is
    split over s classes; it must be non-decreasing in i (assumption (10)). Class i is covered
    by j ∈ S when j ≥ i (so R*_j ≤ R*_i by nesting, Assumption B) and
    γ_i(T n_i/s) ≤ γ_j(T n_j/s) ≤ (1 + λ)·γ_i(T n_i/s).

    For a fixed s the covering sets are intervals [a_j, j] with a_j non-decreasing in j, so
    taking j = K, then the largest uncovered index, and so on, gives a smallest cover (the
    construction after Example 1, where γ_i(T n_i) = g(T)·h(i)). The size s enters only
    through γ(·/s); the smallest s whose greedy cover has at most s classes is returned.
    Returns 0-based indices in increasing order.
    """
    if K <= 0:
        return []
    for s in range(1, K + 1):
        g = [penalty_at(i, s) for i in range(K)]
        S = []
        top = K - 1
        while top >= 0:
            S.append(top)
            i = top
            while i >= 0 and g[top] <= (1.0 + lam) * g[i] + 1e-15:
                i -= 1
            top = i
        if len(S) <= s:
            return sorted(S)
    return list(range(K))


def remark_terms(penalty_at, per_quantum, T: int):
    """The terms of the remark after Theorem 3: γ_i(T n_i / s) + sqrt(log i / (2 T n_i)) (i
    1-based), as a function of (i, s) for :func:`coarse_grid` and :func:`covers`; requiring
    the coarse-grid property (11) over them moves the κ₂ sqrt(log K / 2T n_K) term of
    Theorem 3 inside the minimum over classes as (1 + λ) sqrt(log i / 2T n_i)."""
    return lambda i, s: penalty_at(i, s) + math.sqrt(math.log(i + 1) / (2.0 * T * per_quantum[i]))


def covers(S, penalty_at, K: int, lam: float) -> bool:
    """Whether the set ``S`` (0-based) has the coarse-grid property (11) for the terms
    ``penalty_at(i, |S|)``: every class i has some j ∈ S, j ≥ i, with
    g_i ≤ g_j ≤ (1 + λ)·g_i."""
    s = max(len(S), 1)
    g = [penalty_at(i, s) for i in range(K)]
    return all(any(j >= i and g[i] <= g[j] + 1e-15 and g[j] <= (1.0 + lam) * g[i] + 1e-15
                   for j in S) for i in range(K))


def grid_size_bound(h_first: float, h_last: float, lam: float) -> int:
    """The bound after Example 1: |S| ≤ 1 + ⌈log(h(K)/h(1)) / log(1 + λ)⌉ when
    γ_i(T n_i) = g(T)·h(i) (here h(i) ∝ (d_i·cost_i)^α)."""
    if h_last <= h_first:
        return 1
    return 1 + math.ceil(math.log(h_last / h_first) / math.log1p(lam) - 1e-12)


def penalties_nondecreasing(values) -> int | None:
    """The first index i with γ_i < γ_{i-1} (violating (10)), or None."""
    v = np.asarray(values, float)
    bad = np.flatnonzero(v[1:] < v[:-1] * (1 - 1e-12))
    return int(bad[0] + 1) if bad.size else None

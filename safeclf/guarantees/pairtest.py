"""An exact unconditional test comparing two independent binomial rates, for Learn-then-Test.

Every comparison of two groups' rates that :mod:`safeclf.guarantees.ltt` certifies (a ratio s_A/s_B ≥ κ
or ≤ κ, a difference s_B − s_A ≤ ε or ≥ ε) is, after naming the groups so that the promise
says "A is high enough", the alternative

    H1: p_A > κ p_B + c        against the null        H0: p_A ≤ κ p_B + c

(ratio ≥ κ: A protected, B privileged, c = 0; ratio ≤ u: A privileged, B protected, κ = 1/u;
difference s_B − s_A ≤ ε: κ = 1, c = −ε; difference ≥ ε: the groups swapped, κ = 1, c = ε;
:func:`canonical`), with k_A ~ Bin(n_A, p_A) and k_B ~ Bin(n_B, p_B) independent.

The statistic is D = k_A/n_A − κ k_B/n_B (large D: evidence for H1) and the p-value

    p(x) = min(1, sup_{θ ∈ C_γ(x) ∩ H0} P_θ(D ≥ D(x)) + γ)          (Berger and Boos, 1994)

where C_γ(x) = {p_A ≤ U_A, p_B ≥ L_B} with U_A, L_B the exact (Clopper–Pearson) one-sided
limits at γ/2 each, so P_θ(θ ∈ C_γ) ≥ 1 − γ.

Why it is valid (P_θ(p ≤ α) ≤ α for every θ in H0):

1. *Monotone tail.* {D ≥ d} is increasing in k_A and decreasing in k_B, and a binomial is
   stochastically increasing in its rate, so T(p_A, p_B) = P(D ≥ d) is non-decreasing in p_A
   and non-increasing in p_B (couple the draws).
2. *The sup is on a segment.* On C_γ ∩ H0, T is largest at p_A = min(U_A, κ p_B + c, 1); for
   p_B ≥ (U_A − c)/κ that is U_A and T decreases in p_B. So the sup is over p_B in
   [b_lo, b_hi] = [max(L_B, −c/κ), max(b_lo, min(1, (U_A − c)/κ))] of
   T(min(U_A, κ p_B + c, 1), p_B).
3. *A rigorous envelope, not a grid value.* Cut [b_lo, b_hi] into cells [u, v]. For p_B in a
   cell, by 1., T(min(U_A, κ p_B + c, 1), p_B) ≤ T(min(U_A, κ v + c, 1), u). The maximum of
   these corner values over the cells bounds the sup from above, whatever the cells; they
   are refined around the largest corners (:data:`CELLS`, :data:`SPLITS`) only to make the
   bound tight. The tail sums run over the whole support except far tails, whose mass is
   computed and added (never dropped).
4. *Berger–Boos.* With S(x) the bound of 3. and θ in H0: if θ ∈ C_γ(x) then
   S(x) ≥ P_θ(D ≥ D(x)) =: G_θ(x), and G_θ(X) is super-uniform (a survival function at its
   own statistic). So P(S + γ ≤ α) ≤ P(θ ∉ C_γ) + P(G_θ(X) ≤ α − γ) ≤ γ + (α − γ) = α.

Why this and not the union of two one-sided bounds (L_A(α/2) ≥ κ U_B(α/2)): the union spends
the two groups' margins additively at α/2, about z_{α/2}(se_A + κ se_B), where this test
needs about z_α √(se_A² + κ² se_B²) (plus γ = :data:`GAMMA` and the envelope's slack): on
300 held-back rows the margin a ratio must clear is roughly halved (``tests/guarantees/test_ltt.py``
checks the power over a grid of alternatives, and validity by exact enumeration). D is not
studentised: its tail is monotone by construction (1.), which a studentised statistic's is not
at the edges of the support, and within C_γ the variance of D changes little, so the sup
costs little over a known-variance test.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit  # cache folder: set once in safeclf/__init__.py

from safeclf.guarantees.bounds import ClopperPearson

#: Berger–Boos γ: the confidence set for the nuisance rate costs γ of the level.
GAMMA = 1e-3
#: The nuisance segment's first cut (cells), how many parts a cell is split into, at most how
#: many rounds of splitting, and the relative slack above the sup at which a cell is left whole.
CELLS, SPLITS, STAGES, RTOL = 8, 4, 5, 0.03
#: Standard deviations of a binomial beyond which its tail mass is summed in one term.
WINDOW_SD = 7.0
_CP = ClopperPearson()


def canonical(kind: str, sense: str, b: float, k, n: int, k2, n2: int):
    """(kA, nA, kB, nB, κ, c) for the alternative p_A > κ p_B + c of a comparison of
    ``kind`` ("ratio" or "difference") held ``sense`` ``b``, protected counts ``k``/``n``,
    privileged ``k2``/``n2`` (see the module docstring)."""
    if kind == "ratio":
        if sense == ">=":
            return k, n, k2, n2, float(b), 0.0
        return k2, n2, k, n, (1.0 / b if b > 0 else np.inf), 0.0
    if sense == "<=":
        return k, n, k2, n2, 1.0, -float(b)
    return k2, n2, k, n, 1.0, float(b)


def _half_width(n: int, p: np.ndarray) -> int:
    """Half the width of the support window of Bin(n, p) for every p of ``p`` (the widest
    law's :data:`WINDOW_SD` standard deviations, plus 5)."""
    return int(np.ceil(WINDOW_SD * np.sqrt(n * np.max(p * (1 - p), initial=0.0)))) + 5


@njit(cache=True, nogil=True)
def _pmf(n, p, h, out):  # pragma: no cover - compiled
    """Bin(n, p)'s probabilities on its window, k0 + 0 … k0 + w − 1 (``out`` of size w, the
    support but for far tails): one exp at the window's mode, the others by the ratio of
    neighbours, pmf(k + 1) = pmf(k) · (n − k)/(k + 1) · p/(1 − p), moving away from it (so
    values only shrink, and a far tail underflows to 0 instead of starting from 0). Returns
    k0 and the mass outside the window (1 minus the sum, clipped to [0, 1])."""
    w = out.size
    k0 = min(max(math.floor(n * p) - h, 0.0), float(n + 1 - w))
    m = min(max(math.floor((n + 1) * p), k0), k0 + w - 1)  # the mode, or the window's nearest
    log_at = math.lgamma(n + 1.0) - math.lgamma(m + 1.0) - math.lgamma(n - m + 1.0)
    if m > 0:
        log_at += m * math.log(p)  # p > 0 here: the mode of Bin(n, 0) is 0
    if m < n:
        log_at += (n - m) * math.log1p(-p)
    j = int(m - k0)
    out[j] = math.exp(log_at)
    up = p / (1.0 - p) if p < 1.0 else 0.0  # p = 1: the mode is n, the last point
    down = (1.0 - p) / p if p > 0.0 else 0.0
    for i in range(j + 1, w):  # the ratios first (independent divisions), then the products
        out[i] = up * (n - k0 - i + 1.0) / (k0 + i)
    for i in range(j):
        out[i] = down * (k0 + i + 1.0) / (n - k0 - i)
    for i in range(j + 1, w):
        out[i] *= out[i - 1]
    for i in range(j - 1, -1, -1):
        out[i] *= out[i + 1]
    total = 0.0
    for i in range(w):
        total += out[i]
    return k0, min(max(1.0 - total, 0.0), 1.0)


@njit(cache=True, nogil=True)
def _tail_rows(d, na, nb, kappa, pa, pb, ha, hb, out):  # pragma: no cover - compiled
    """:func:`tail` for flat arrays ``d``, ``pa``, ``pb`` into ``out``: per row, B's
    cumulative probabilities on its window (plus the mass outside it, so each is an upper
    bound), then the sum over A's window of P(k_A) · P(k_B ≤ n_B (k_A/n_A − d)/κ), plus A's
    mass outside its window."""
    pmf_a = np.empty(min(na + 1, 2 * ha + 1))
    cdf_b = np.empty(min(nb + 1, 2 * hb + 1))
    wb = cdf_b.size
    for r in range(out.size):
        b0, rest_b = _pmf(nb, pb[r], hb, cdf_b)
        run = 0.0
        for i in range(wb):
            run += cdf_b[i]
            cdf_b[i] = min(1.0, run + rest_b)
        a0, rest_a = _pmf(na, pa[r], ha, pmf_a)
        total = 0.0
        for i in range(pmf_a.size):  # k_B's largest count in the tail, in B's window
            b = math.floor(nb * ((a0 + i) / na - d[r]) / kappa + 1e-9) - b0
            cdf = rest_b if b < 0 else (1.0 if b >= wb - 1 else cdf_b[int(b)])
            total += pmf_a[i] * cdf
        out[r] = min(1.0, total + rest_a)


def tail(d, na: int, nb: int, kappa: float, pa, pb) -> np.ndarray:
    """An upper bound, tight to rounding, on P(D ≥ d) with D = k_A/n_A − κ k_B/n_B,
    k_A ~ Bin(n_A, pa), k_B ~ Bin(n_B, pb) (``pa``, ``pb`` arrays of one shape whose first
    axis runs along ``d``): the sum over k_A of P(k_A) · P(k_B ≤ n_B (k_A/n_A − d)/κ), each
    law over its window (:func:`_pmf`) with the mass outside it counted as in the tail.
    Rounding errors stay upward: a probability computed too small leaves its deficit in the
    mass outside the window, which is added."""
    pa, pb = np.broadcast_arrays(np.atleast_1d(np.asarray(pa, float)),
                                 np.atleast_1d(np.asarray(pb, float)))
    d = np.asarray(d, float).reshape((-1,) + (1,) * (pa.ndim - 1))
    shape = np.broadcast_shapes(d.shape, pa.shape)
    d_, pa_, pb_ = (np.ascontiguousarray(np.broadcast_to(x, shape), dtype=float).ravel()
                    for x in (d, pa, pb))
    out = np.empty(shape)
    _tail_rows(d_, int(na), int(nb), float(kappa), pa_, pb_, _half_width(na, pa),
               _half_width(nb, pb), out.reshape(-1))
    return out


def p_values(ka, na: int, kb, nb: int, kappa: float, c: float = 0.0,
             gamma: float = GAMMA, alpha: float | None = None) -> np.ndarray:
    """The exact unconditional p-value of H0: p_A ≤ κ p_B + c for arrays of counts ``ka``
    and ``kb`` (broadcast together) at sizes ``na``, ``nb`` (module docstring): each distinct
    pair of counts is computed once. Every value returned is at least the p-value of the
    module docstring (its sup bounded from above), so it is itself a valid p-value; within
    :data:`RTOL` of it, or, given ``alpha``, refined only as far as deciding p ≤ α needs
    (faster; a value far from α is then a looser upper bound)."""
    ka, kb = np.broadcast_arrays(np.asarray(ka, dtype=float), np.asarray(kb, dtype=float))
    if not na or not nb or not np.isfinite(kappa):
        return np.ones(ka.shape)
    kappa = max(float(kappa), 1e-12)  # a larger null than κ = 0's: still valid
    pairs, inv = np.unique(np.c_[ka.ravel(), kb.ravel()], axis=0, return_inverse=True)
    return _p_unique(pairs[:, 0], na, pairs[:, 1], nb, float(kappa), float(c),
                     gamma, alpha)[inv.ravel()].reshape(ka.shape)


def _p_unique(ka, na, kb, nb, kappa, c, gamma, alpha=None, rtol=None, stages=None):
    """:func:`p_values` for one array of count pairs: the segment of 2. in :data:`CELLS`
    cells; a cell whose corner value exceeds the largest value found *on* the segment (a
    lower bound of the sup) by more than ``rtol`` is split in :data:`SPLITS`, for up to
    ``stages`` rounds; the p-value is the largest corner value of the cells left, plus γ.
    With ``alpha``, a cell is split only while that can change whether p ≤ α."""
    rtol = RTOL if rtol is None else rtol
    stages = STAGES if stages is None else stages
    ka, kb = np.clip(np.round(ka), 0, na), np.clip(np.round(kb), 0, nb)
    d = ka / na - kappa * kb / nb
    u_a = np.asarray(_CP.upper(ka, na, gamma / 2), dtype=float)
    l_b = np.asarray(_CP.lower(kb, nb, gamma / 2), dtype=float)
    lo = np.maximum(l_b, max(0.0, -c / kappa))
    empty = lo > 1.0  # C_γ ∩ H0 is empty: the sup is 0
    lo = np.minimum(lo, 1.0)
    hi = np.maximum(lo, np.minimum(1.0, (u_a - c) / kappa))

    def value(q, u, v):  # T at (min(U_A, κ v + c, 1), u) for the pairs q
        pa = np.clip(np.minimum(u_a[q], kappa * v + c), 0.0, 1.0)
        return tail(d[q], na, nb, kappa, pa[:, None], u[:, None])[:, 0]

    m = len(d)
    frac = np.linspace(0, 1, CELLS + 1)
    q = np.repeat(np.arange(m), CELLS)
    edges = lo[:, None] + (hi - lo)[:, None] * frac
    u, v = edges[:, :-1].ravel(), edges[:, 1:].ravel()
    on = np.zeros(m)  # the largest value found on the segment, per pair
    np.maximum.at(on, np.repeat(np.arange(m), CELLS + 1), value(
        np.repeat(np.arange(m), CELLS + 1), edges.ravel(), edges.ravel()))
    env = value(q, u, v)
    done = np.zeros(m)  # the largest corner value of the cells no longer split
    for _ in range(stages):
        split = env > on[q] * (1 + rtol) + 1e-12
        if alpha is not None:  # only where it can decide p ≤ α
            split &= (env + gamma > alpha) & (on[q] + gamma <= alpha)
        np.maximum.at(done, q[~split], env[~split])
        q, u, v, env = q[split], u[split], v[split], env[split]
        if not q.size:
            break
        f = np.linspace(0, 1, SPLITS + 1)
        cuts = u[:, None] + (v - u)[:, None] * f
        inner = cuts[:, 1:-1].ravel()
        qi = np.repeat(q, SPLITS - 1)
        np.maximum.at(on, qi, value(qi, inner, inner))
        q = np.repeat(q, SPLITS)
        u, v = cuts[:, :-1].ravel(), cuts[:, 1:].ravel()
        env = value(q, u, v)
    np.maximum.at(done, q, env)
    return np.where(empty, gamma, np.minimum(1.0, done + gamma))


def approx_p_values(ka, na: int, kb, nb: int, kappa: float, c: float = 0.0,
                    gamma: float = GAMMA) -> np.ndarray:
    """A normal approximation of :func:`p_values` (Φ of D's distance to the null boundary in
    its standard errors at the observed rates, plus γ): cheap, for ranking rules and
    predicting pass probabilities from the candidate part; never a certificate."""
    from scipy.special import ndtr

    ka, kb = np.broadcast_arrays(np.asarray(ka, dtype=float), np.asarray(kb, dtype=float))
    if not na or not nb or not np.isfinite(kappa):
        return np.ones(ka.shape)
    ra, rb = np.clip(ka / na, 0, 1), np.clip(kb / nb, 0, 1)
    # rates kept off 0 and 1 by half a count, so a zero count does not make the variance 0
    va = np.clip(ra, 0.5 / na, 1 - 0.5 / na)
    vb = np.clip(rb, 0.5 / nb, 1 - 0.5 / nb)
    se = np.sqrt(va * (1 - va) / na + kappa ** 2 * vb * (1 - vb) / nb)
    return np.minimum(1.0, ndtr(-(ra - kappa * rb - c) / se) + gamma)

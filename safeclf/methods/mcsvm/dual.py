"""Decomposition solver for the MC-SVM dual (Prop. 5, eqs. 22–23).

The dual, written as a minimisation over α ∈ ℝ^{m×n} (block k = weight τ_k):

    min_α  (η/2) ᾱᵀ D K D ᾱ − 1ᵀᾱ,   ᾱ_i = Σ_k α_ik,                          (22)
    s.t.   Σ_i y_i α_ik = 0  (k = 1..m),   0 ≤ α_ik ≤ C_ik = ½((1 − 2τ_k) y_i + 1),

and wᵀφ(x) = −η Σ_i ᾱ_i y_i K(x_i, x)                                            (23)

The gradient with respect to α_ik, G_i = η (DKDᾱ)_i − 1, is the same for every block k, so the
solver keeps one vector F_i = −y_i G_i = wᵀφ(x_i) + y_i for all blocks. A block is optimal when
max over I_up(k) of F ≤ min over I_low(k) of F (the LIBSVM conditions), and its offset b_k then
lies between the two (b_k = F_i for any free α_ik).

Decomposition: each outer iteration picks the q points that violate these conditions most in any
block, fetches their kernel rows once from the shared :class:`KernelCache`, solves the
subproblem in those q·m variables with SMO (blocks visited cyclically, pairs within a block by
LIBSVM's second-order rule WSS2, the step split over every block where the pair is feasible),
and updates F with one matrix-vector product. When the cache holds every row (n² float32 within
``cache_size``) the subproblem is the whole problem and the outer loop only confirms the KKT
conditions on the full F.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from safeclf.errors import SolverError


@dataclass
class DualSolution:
    alpha: np.ndarray  # (m, n)
    b: np.ndarray  # (m,) offsets b_k
    F: np.ndarray  # (n,) wᵀφ(x_i) + y_i at the solution
    gap: float  # final KKT gap max_k (m_k − M_k)
    n_outer: int
    n_pairs: int


def _masks(alpha, C, pos):
    up = np.where(pos, alpha < C, alpha > 0)
    low = np.where(pos, alpha > 0, alpha < C)
    return up, low


def _block_extremes(F, up, low):
    Fup = np.where(up, F, -np.inf)
    Flow = np.where(low, F, np.inf)
    return Fup, Flow, Fup.max(axis=-1), Flow.min(axis=-1)


def _smo_subproblem(a, C, pos, F, K, kdiag, eta, tol, max_pairs):
    """SMO on a small problem, in place on ``a`` (m, q) and ``F`` (q,), with numpy steps.

    Blocks are visited cyclically, one pair per visit: i = argmax_{I_up(k)} F, j by the
    second-order rule within block k. The objective depends on ᾱ only, so the step along (i, j)
    is split over every block where i ∈ I_up and j ∈ I_low (the visited block first, then by
    their last gap); each block keeps Σ_i y_i α_ik = 0. Stops when m consecutive blocks are
    within ``tol``. Returns the number of pair updates.
    """
    m = a.shape[0]
    gaps = np.full(m, np.inf)
    # I_up(k) = {y_t α_tk < UB_tk}, I_low(k) = {y_t α_tk > LB_tk} (cheaper than boolean where)
    sgn = np.where(pos, 1.0, -1.0)
    UB = np.where(pos, C, 0.0)
    LB = np.where(pos, 0.0, -C)
    pairs, k, calm = 0, m - 1, 0
    while pairs < max_pairs:
        k = (k + 1) % m
        sa = sgn * a[k]
        Fu = np.where(sa < UB[k], F, -np.inf)
        i = int(Fu.argmax())
        lowk = sa > LB[k]
        Fi = Fu[i]
        gaps[k] = Fi - np.where(lowk, F, np.inf).min()
        if gaps[k] <= tol:
            calm += 1
            if calm >= m:
                break
            continue
        calm = 0
        diff = Fi - F
        curv = (kdiag[i] + kdiag) - 2.0 * K[i]
        curv *= eta
        np.maximum(curv, 1e-12, out=curv)
        score = diff * diff
        score /= curv
        score[~(lowk & (diff > 0))] = -1.0
        j = int(score.argmax())
        ai, ci, aj, cj = a[:, i], C[:, i], a[:, j], C[:, j]
        cap_i = np.where(ai < ci, ci - ai, 0.0) if pos[i] else ai.copy()
        cap_j = aj.copy() if pos[j] else np.where(aj < cj, cj - aj, 0.0)
        cap = np.minimum(cap_i, cap_j)
        order = np.argsort(-np.where(np.arange(m) == k, np.inf, gaps))
        csum = np.cumsum(cap[order])
        t = min(diff[j] / curv[j], csum[-1])
        if t <= 0.0:
            break
        take = np.zeros(m)
        take[order] = np.minimum(cap[order], np.maximum(t - (csum - cap[order]), 0.0))
        full = (take >= cap) & (take > 0)  # capped blocks land exactly on a bound
        ai_new = ai + (take if pos[i] else -take)
        aj_new = aj - (take if pos[j] else -take)
        a[:, i] = np.where(full & (cap == cap_i), ci if pos[i] else 0.0, ai_new)
        a[:, j] = np.where(full & (cap == cap_j), 0.0 if pos[j] else cj, aj_new)
        F -= (eta * t) * (K[i] - K[j])
        pairs += 1
    return pairs


def _top(v, k):
    """Indices of the (at most) k largest positive finite entries of v."""
    if k < v.size:
        idx = np.argpartition(-v, k - 1)[:k]
    else:
        idx = np.arange(v.size)
    return idx[np.isfinite(v[idx]) & (v[idx] > 0)]


def solve_dual(cache, y, C, eta, tol=1e-3, max_iter=100_000, working_set=128) -> DualSolution:
    """Solve (22) for labels ``y`` in {−1, +1} (n,), box bounds ``C`` (m, n), η > 0.

    ``cache`` is a :class:`~safeclf.methods.mcsvm.kernels.KernelCache` over the training points.
    ``max_iter`` bounds the outer iterations; reaching it raises :class:`SolverError`.
    """
    y = np.asarray(y, dtype=float)
    m, n = C.shape
    pos = y > 0
    alpha = np.zeros((m, n))
    F = y.copy()  # at α = 0, w = 0 so F = y
    q = int(min(max(working_set, 2), n))
    n_pairs = 0
    gap = np.inf
    outer = 0
    while outer < max_iter:
        outer += 1
        up, low = _masks(alpha, C, pos)
        Fup, Flow, mk, Mk = _block_extremes(F, up, low)
        gap = float(np.max(mk - Mk))
        if gap <= tol:
            break
        # the q/2 points most violating from above and the q/2 most violating from below
        vu = (Fup - Mk[:, None]).max(axis=0)
        vl = (mk[:, None] - Flow).max(axis=0)
        if q >= n:  # the cache holds every row: the subproblem is the whole problem
            W = np.arange(n)
        else:
            W = np.union1d(_top(vu, q // 2), _top(vl, q - q // 2))
        Krows = cache.rows(W)
        Kww = Krows if W.size == n else Krows[:, W]  # float32, no copy when W is everything
        aW = alpha[:, W].copy()
        FW = F[W].copy()
        pairs = _smo_subproblem(aW, np.ascontiguousarray(C[:, W]), pos[W], FW, Kww, cache.diag[W], eta, tol,
                    50 * W.size * m)
        if pairs == 0:
            raise SolverError(f"MC-SVM dual solver made no progress at KKT gap {gap:.3g}")
        n_pairs += pairs
        dabar = (aW - alpha[:, W]).sum(axis=0)
        alpha[:, W] = aW
        coef = (eta * y[W] * dabar).astype(np.float32)
        F -= coef @ Krows
    else:
        raise SolverError(
            f"MC-SVM dual solver reached max_iter={max_iter} with KKT gap {gap:.3g} > tol={tol}"
        )
    up, low = _masks(alpha, C, pos)
    _, _, mk, Mk = _block_extremes(F, up, low)
    b = np.empty(m)
    for k in range(m):
        free = (alpha[k] > 0) & (alpha[k] < C[k])
        if free.any():
            b[k] = F[free].mean()
        else:
            lo, hi = mk[k], Mk[k]
            b[k] = (lo + hi) / 2 if np.isfinite(lo) and np.isfinite(hi) else (
                lo if np.isfinite(lo) else hi)
    return DualSolution(alpha=alpha, b=b, F=F, gap=gap, n_outer=outer, n_pairs=n_pairs)

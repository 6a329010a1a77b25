"""Decomposition solver for the MC-SVM dual (Prop. 5, eqs. 22–23).

The dual, written as a minimisation over α ∈ ℝ^{m×n} (block k = weight τ_k):

    min_α  (η/2) ᾱᵀ D K D ᾱ − 1ᵀᾱ,   ᾱ_i = Σ_k α_ik,                          (22)
    s.t.   Σ_i y_i α_ik = 0  (k = 1..m),   0 ≤ α_ik ≤ C_ik = ½((1 − 2τ_k) y_i + 1),

and wᵀφ(x) = −η Σ_i ᾱ_i y_i K(x_i, x)                                            (23)

The gradient with respect to α_ik, G_i = η (DKDᾱ)_i − 1, is the same for every block k, so the
solver keeps one vector F_i = −y_i G_i = wᵀφ(x_i) + y_i for all blocks. A block is optimal when
max over I_up(k) of F ≤ min over I_low(k) of F (the LIBSVM conditions), and its offset b_k then
lies between the two (b_k = F_i for any free α_ik).

The solver (``working_set`` = n, the estimator's default) runs SMO on the whole problem in
q = n·m variables: blocks visited cyclically, pairs within a block by LIBSVM's second-order
rule WSS2, the step split over every block where the pair is feasible. Every point stays
active, so F stays exact and the stopping rule (max_k gap ≤ tol) is checked on it directly.

Decomposition (``working_set`` q < n): each outer iteration picks the q points that violate
the conditions most in any block and solves the subproblem in those q·m variables with the
same SMO, shrinking inside it (LIBSVM's rule: points that can be in no violating pair stop
being updated), then updates F on every point with the kernel rows of the points whose ᾱ
moved and checks the stopping rule on the full F.

The whole iteration (selection, pair steps, gradient updates) runs in one numba-compiled loop;
kernel rows are computed inside it when a pair first needs them, through the shared bounded
:class:`~safeclf.methods.mcsvm.kernels.KernelCache` (least recently used rows evicted), so
memory stays within ``cache_size`` whatever q is. Compiled code is cached on disk
(``cache=True``): only the first process on a machine pays the compilation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, types

from safeclf.methods._solvers.status import SolverStatus, iteration_status, settle
from safeclf.methods.mcsvm.kernels import bit_cast, fetch_row


@dataclass
class DualSolution:
    alpha: np.ndarray  # (m, n)
    b: np.ndarray  # (m,) offsets b_k
    F: np.ndarray  # (n,) wᵀφ(x_i) + y_i at the solution
    gap: float  # final KKT gap max_k (m_k − M_k)
    n_outer: int
    n_pairs: int
    status: SolverStatus = SolverStatus.OPTIMAL


#: finite stand-in for ±∞ in the compiled loops: they are compiled with fastmath, which
#: assumes no infinities (F and the scores are always finite)
_BIG = 1e300
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)
_KMIN = np.iinfo(np.int64).min  # the key of an empty maximum
_KMAX = np.iinfo(np.int64).max  # the key of an empty minimum


@njit(cache=True, fastmath=True)
def _smo_subproblem(W, a, C, pos, F, kd, eta, tol, max_pairs, whole, X, code, gamma, degree,
                    coef0, store, slot_of, owner, links, state, work):
    """SMO on the points ``W`` (q,), in place on ``a`` (m, q) and ``F`` (q,); the points are
    permuted together (``W`` too) so that the active ones come first.

    Blocks are visited cyclically, one pair per visit: i = argmax_{I_up(k)} F, j by the
    second-order rule within block k. The objective depends on ᾱ only, so the step along (i, j)
    is split over every block where i ∈ I_up and j ∈ I_low (the visited block first, then by
    their last gap); each block keeps Σ_i y_i α_ik = 0. Stops when m consecutive blocks are
    within ``tol`` on the active points. Returns the number of pair updates.

    Each pair costs a few passes over the active points (block extremes, second-order scores,
    the gradient update), each a loop without calls or data-dependent branches over contiguous
    arrays, so that it compiles to vector instructions. When the subproblem is the ``whole``
    problem (``W`` = 0 .. n − 1), the kernel rows are read as they are cached (the row of i
    stays cached while j's is fetched: the cache never evicts its latest row) and every point
    stays active, so F stays exact on every point. Otherwise the
    rows of i and j are first gathered into the subproblem's order, and the subproblem shrinks
    (as LIBSVM): every min(q, 100) pairs, a point at a bound in every block that violates no
    block's conditions (F_t below min_{I_low(k)} F while only in I_up(k), or above
    max_{I_up(k)} F while only in I_low(k)) leaves the active set; its F is no longer updated
    here (the caller recomputes F on every point and checks the conditions there).
    """
    m, q = a.shape
    # membership flags, refreshed at i and j after each pair:
    # I_up(k) = {t : y_t α_tk < UB_tk}, I_low(k) = {t : y_t α_tk > LB_tk}
    upf = np.empty((m, q), dtype=np.bool_)
    lowf = np.empty((m, q), dtype=np.bool_)
    for b in range(m):
        for t in range(q):
            _flags(a, C, pos, upf, lowf, b, t)
    gaps = np.full(m, _BIG)
    cap_i = np.empty(m)
    cap_j = np.empty(m)
    cap = np.empty(m)
    key = np.empty(m)
    order = np.empty(m, dtype=np.int64)
    hi = np.empty(m)
    lo = np.empty(m)
    ri = np.empty(q, dtype=np.float32)  # K(x_i, x_W[t]) in the active order
    rj = np.empty(q, dtype=np.float32)
    na = q  # active points: positions 0 .. na − 1
    every = min(q, 100)
    countdown = every
    pairs, k, calm = 0, m - 1, 0
    ahead = False  # the previous pair's gradient update already found block k's extremes
    hik, lok = _KMIN, _KMAX
    low_bits = np.int64(1)  # the low key bits that hold a position (see _extremes)
    while low_bits < q:
        low_bits = low_bits * 2
    low_bits -= 1
    while pairs < max_pairs:
        countdown -= 1
        if countdown <= 0 and not whole:
            countdown = every
            na = _shrink(W, a, C, pos, F, kd, upf, lowf, hi, lo, na, low_bits)
            ahead = False
        k = (k + 1) % m
        # max of F over I_up(k), min over I_low(k): the block's gap
        if not ahead:
            hik, lok = _extremes(F, upf[k], lowf[k], na, low_bits)
        ahead = False
        i = low_bits - (hik & low_bits)
        Fi = F[i] if hik != _KMIN else -_BIG
        gaps[k] = Fi - _value(lok)
        if gaps[k] <= tol:
            calm += 1
            if calm >= m:
                break
            continue
        calm = 0
        # j by the second-order rule: max (F_i − F_j)² / (η (K_ii + K_jj − 2 K_ij)) over I_low(k)
        si = fetch_row(W[i], X, code, gamma, degree, coef0, store, slot_of, owner, links,
                       state, work)
        rowi = store[si] if whole else _gather(store[si], W, na, ri)
        best = _best_j(F, kd, rowi, lowf[k], Fi, kd[i], eta, na, low_bits, code == 2)
        if best == _KMIN:  # no t ∈ I_low(k) with F_t < F_i
            break
        j = low_bits - (best & low_bits)
        diff_j = Fi - F[j]
        curv_j = max(eta * ((kd[i] + kd[j]) - 2.0 * np.float64(rowi[j])), 1e-12)
        # capacity of each block along the direction (i up, j down in y α)
        for b in range(m):
            ai, ci, aj, cj = a[b, i], C[b, i], a[b, j], C[b, j]
            cap_i[b] = (ci - ai if ai < ci else 0.0) if pos[i] else ai
            cap_j[b] = aj if pos[j] else (cj - aj if aj < cj else 0.0)
            cap[b] = min(cap_i[b], cap_j[b])
            key[b] = -_BIG if b == k else -gaps[b]
        for b in range(m):  # stable insertion sort: visited block first, then by last gap
            order[b] = b
            u = b
            while u > 0 and key[order[u - 1]] > key[order[u]]:
                order[u - 1], order[u] = order[u], order[u - 1]
                u -= 1
        total = 0.0
        for b in range(m):
            total += cap[order[b]]
        step = min(diff_j / curv_j, total)
        if step <= 0.0:
            break
        before = 0.0
        for u in range(m):
            b = order[u]
            take = min(cap[b], max(step - before, 0.0))
            before += cap[b]
            capped = take >= cap[b] and take > 0.0  # a capped block lands exactly on a bound
            if capped and cap[b] == cap_i[b]:
                a[b, i] = C[b, i] if pos[i] else 0.0
            else:
                a[b, i] = a[b, i] + take if pos[i] else a[b, i] - take
            if capped and cap[b] == cap_j[b]:
                a[b, j] = 0.0 if pos[j] else C[b, j]
            else:
                a[b, j] = a[b, j] - take if pos[j] else a[b, j] + take
            _flags(a, C, pos, upf, lowf, b, i)
            _flags(a, C, pos, upf, lowf, b, j)
        sj = fetch_row(W[j], X, code, gamma, degree, coef0, store, slot_of, owner, links,
                       state, work)
        # F −= η step (K_i − K_j) on the active points, finding the next block's extremes
        kn = (k + 1) % m
        rowi = store[si]  # still cached: the row fetched last is never evicted
        rowi = rowi if whole else _gather(rowi, W, na, ri)
        rowj = store[sj] if whole else _gather(store[sj], W, na, rj)
        hik, lok = _update(F, rowi, rowj, eta * step, upf[kn], lowf[kn], na, low_bits)
        ahead = True
        pairs += 1
    return pairs


_bits = bit_cast(types.float64, types.int64)
_from_bits = bit_cast(types.int64, types.float64)


@njit(cache=True, inline="always")
def _key(x):
    """An int64 that orders as the float64 ``x`` (its bits, the magnitude bits of negatives
    flipped). Maxima and minima are taken over these keys: integer reductions compile to vector
    instructions, float ones (with their NaN rules) do not."""
    b = _bits(x)
    return b ^ ((b >> 63) & _LOW63)


@njit(cache=True)
def _value(key):
    """The float64 whose key (:func:`_key`) is ``key``; ±_BIG for the empty-set keys."""
    if key == _KMIN:
        return -_BIG
    if key == _KMAX:
        return _BIG
    return _from_bits(key ^ ((key >> 63) & _LOW63))


@njit(cache=True, inline="always")
def _at(key, t, top, low_bits):
    """``key`` with its ``low_bits`` (2ᵇ − 1 ≥ the number of points) replaced by
    ``low_bits`` − t: a maximum of such keys gives its position too (position =
    low_bits − (key & low_bits)), the first of the values equal to within the dropped bits (a
    relative 2⁻³⁹ for 5,000 points)."""
    return (key & top) | (low_bits - t)


@njit(cache=True, inline="always")
def _fold(hi, lo, f, t, up, low, top, low_bits):
    """One point of an extremes pass: the running max over ``up`` (its key carrying the
    position, :func:`_at`) and min over ``low`` of F, as keys, after F_t = ``f``."""
    key = _key(f)
    ku = _at(key, t, top, low_bits) if up else _KMIN
    kl = key if low else _KMAX
    return (ku if ku > hi else hi), (kl if kl < lo else lo)


@njit(cache=True, fastmath=True)
def _extremes(F, up, low, na, low_bits):
    """(max over ``up``, min over ``low``) of F among the active points, as keys
    (:func:`_key`); the maximum's key carries its position (:func:`_at`), the minimum's is
    exact; (_KMIN, _KMAX) when empty."""
    hi, lo = _KMIN, _KMAX
    top = ~low_bits
    for t in range(na):
        hi, lo = _fold(hi, lo, F[t], t, up[t], low[t], top, low_bits)
    return hi, lo


@njit(cache=True, fastmath=True)
def _gather(row, W, na, out):
    """out[t] = row[W[t]] for the active points; returns ``out``."""
    for t in range(na):
        out[t] = row[W[t]]
    return out


@njit(cache=True, fastmath=True)
def _best_j(F, kd, ri, low, Fi, kdi, eta, na, low_bits, unit):
    """The key (carrying its position, :func:`_at`) of the largest of LIBSVM's second-order
    scores (F_i − F_t)² / (η (K_ii + K_tt − 2 K_it)) over the active t ∈ I_low with F_t < F_i;
    _KMIN when there is none. ``unit``: K_tt = 1 for every t (RBF), so the pass does not read
    ``kd`` (a third of the bytes it reads)."""
    best = _KMIN
    top = ~low_bits
    for t in range(na):
        diff = Fi - F[t]
        kdt = 1.0 if unit else kd[t]
        curv = eta * ((kdi + kdt) - 2.0 * np.float64(ri[t]))
        curv = curv if curv > 1e-12 else 1e-12
        score = diff * diff / curv if low[t] and diff > 0.0 else -1.0
        key = _at(_key(score), t, top, low_bits)
        best = key if key > best else best
    return best if _value(best) > 0.0 else _KMIN


@njit(cache=True, fastmath=True)
def _update(F, ri, rj, c, up, low, na, low_bits):
    """F_t −= c (K_it − K_jt) on the active points; returns the extremes of the new F for the
    block whose flags are ``up``, ``low`` (as :func:`_extremes`), found in the same pass."""
    hi, lo = _KMIN, _KMAX
    top = ~low_bits
    for t in range(na):
        f = F[t] - c * (np.float64(ri[t]) - np.float64(rj[t]))
        F[t] = f
        hi, lo = _fold(hi, lo, f, t, up[t], low[t], top, low_bits)
    return hi, lo


@njit(cache=True)
def _shrink(W, a, C, pos, F, kd, upf, lowf, hi, lo, na, low_bits):
    """Move the active points that can be in no violating pair behind the active ones; returns
    the new number of active points."""
    m = a.shape[0]
    for b in range(m):
        hik, lok = _extremes(F, upf[b], lowf[b], na, low_bits)
        hi[b] = F[low_bits - (hik & low_bits)] if hik != _KMIN else -_BIG
        lo[b] = _value(lok)
    u = 0
    while u < na:
        out = True
        for b in range(m):
            up, low = upf[b, u], lowf[b, u]
            if not ((up and not low and F[u] < lo[b]) or (low and not up and F[u] > hi[b])):
                out = False
                break
        if out:
            na -= 1
            _swap(W, a, C, pos, F, kd, upf, lowf, u, na)
        else:
            u += 1
    return na


@njit(cache=True)
def _swap(W, a, C, pos, F, kd, upf, lowf, u, v):
    W[u], W[v] = W[v], W[u]
    pos[u], pos[v] = pos[v], pos[u]
    F[u], F[v] = F[v], F[u]
    kd[u], kd[v] = kd[v], kd[u]
    for b in range(a.shape[0]):
        a[b, u], a[b, v] = a[b, v], a[b, u]
        C[b, u], C[b, v] = C[b, v], C[b, u]
        upf[b, u], upf[b, v] = upf[b, v], upf[b, u]
        lowf[b, u], lowf[b, v] = lowf[b, v], lowf[b, u]


@njit(cache=True, inline="always")
def _member(at, ct, pos):
    """(t ∈ I_up(k), t ∈ I_low(k)) for α_tk = ``at``, C_tk = ``ct``, y_t > 0 when ``pos``."""
    return (at < ct, at > 0.0) if pos else (at > 0.0, at < ct)


@njit(cache=True)
def _flags(a, C, pos, upf, lowf, b, t):
    upf[b, t], lowf[b, t] = _member(a[b, t], C[b, t], pos[t])


@njit(cache=True)
def _top(v, k, mark):
    """Mark the (at most) k largest positive finite entries of v."""
    idx = np.argsort(-v)
    for u in range(min(k, v.size)):
        t = idx[u]
        if np.isfinite(v[t]) and v[t] > 0.0:
            mark[t] = True


@njit(cache=True)
def _solve(y, C, eta, tol, max_iter, q, alpha, F, mk, Mk, kdiag, X, code, gamma, degree, coef0,
           store, slot_of, owner, links, state, work):
    """The outer decomposition loop, in place on ``alpha`` (m, n), ``F`` (n,) and the block
    extremes ``mk``, ``Mk`` (m,) of the last iterate. Returns (status, outer iterations, pairs,
    gap); status 0 converged, 1 no progress, 2 max_iter reached."""
    m, n = C.shape
    pos = y > 0
    vu = np.empty(n)
    vl = np.empty(n)
    mark = np.zeros(n, dtype=np.bool_)
    whole = q >= n
    n_pairs = 0
    gap = np.inf
    outer = 0
    while outer < max_iter:
        outer += 1
        # block extremes m_k = max_{I_up(k)} F, M_k = min_{I_low(k)} F and the KKT gap
        for k in range(m):
            hi, lo = -np.inf, np.inf
            for t in range(n):
                up, low = _member(alpha[k, t], C[k, t], pos[t])
                if up and F[t] > hi:
                    hi = F[t]
                if low and F[t] < lo:
                    lo = F[t]
            mk[k], Mk[k] = hi, lo
        gap = np.max(mk - Mk)
        if gap <= tol:
            return 0, outer, n_pairs, gap
        if whole:
            W = np.arange(n)
        else:  # the q/2 points most violating from above and the q/2 most violating from below
            for t in range(n):
                vu[t], vl[t] = -np.inf, -np.inf
                for k in range(m):
                    up, low = _member(alpha[k, t], C[k, t], pos[t])
                    if up:
                        vu[t] = max(vu[t], F[t] - Mk[k])
                    if low:
                        vl[t] = max(vl[t], mk[k] - F[t])
            mark[:] = False
            _top(vu, q // 2, mark)
            _top(vl, q - q // 2, mark)
            W = np.flatnonzero(mark)
        aW = np.ascontiguousarray(alpha[:, W])
        FW = F[W].copy()
        pairs = _smo_subproblem(W, aW, np.ascontiguousarray(C[:, W]), pos[W], FW, kdiag[W], eta,
                                tol, 50 * W.size * m, whole, X, code, gamma, degree, coef0,
                                store, slot_of, owner, links, state, work)
        if pairs == 0:
            return 1, outer, n_pairs, gap
        n_pairs += pairs
        if whole:  # no shrinking, points in their order: F is exact on every point
            alpha[:, :] = aW
            F[:] = FW
            continue
        # F −= η Σ_{t ∈ W} y_t Δᾱ_t K[t, :], one cached row per point whose ᾱ moved
        for u in range(W.size):
            t = W[u]
            d = 0.0
            for k in range(m):
                d += aW[k, u] - alpha[k, t]
                alpha[k, t] = aW[k, u]
            if d != 0.0:
                s = fetch_row(t, X, code, gamma, degree, coef0, store, slot_of, owner, links,
                              state, work)
                row = store[s]
                c = eta * y[t] * d
                for v in range(n):
                    F[v] -= c * np.float64(row[v])
    return 2, outer, n_pairs, gap


def solve_dual(cache, y, C, eta, tol=1e-3, max_iter=100_000, working_set=None) -> DualSolution:
    """Solve (22) for labels ``y`` in {−1, +1} (n,), box bounds ``C`` (m, n), η > 0.

    ``cache`` is a :class:`~safeclf.methods.mcsvm.kernels.KernelCache` over the training points.
    ``working_set``: points per decomposition subproblem; None for the whole problem.
    ``max_iter`` bounds the outer iterations; reaching it warns (``ConvergenceWarning``) and
    keeps the last iterate, as scikit-learn's solvers do.
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    C = np.ascontiguousarray(C, dtype=np.float64)
    m, n = C.shape
    alpha = np.zeros((m, n))
    F = y.copy()  # at α = 0, w = 0 so F = y
    q = n if working_set is None else int(min(max(working_set, 2), n))
    mk, Mk = np.empty(m), np.empty(m)  # max over I_up(k), min over I_low(k) of F
    status, outer, n_pairs, gap = _solve(y, C, float(eta), float(tol), int(max_iter), q, alpha, F,
                                         mk, Mk, cache.diag, *cache.arrays())
    if status == 1:
        settle(SolverStatus.ERROR, "MC-SVM dual", detail=f"no progress at KKT gap {gap:.3g}")
    settled = settle(iteration_status(status == 0), "MC-SVM dual", detail=(
        f"reached max_iter={max_iter} with KKT gap {gap:.3g} > tol={tol}"))
    b = np.empty(m)
    for k in range(m):
        free = (alpha[k] > 0) & (alpha[k] < C[k])
        if free.any():
            b[k] = F[free].mean()
        else:
            lo, hi = mk[k], Mk[k]
            b[k] = (lo + hi) / 2 if np.isfinite(lo) and np.isfinite(hi) else (
                lo if np.isfinite(lo) else hi)
    return DualSolution(alpha=alpha, b=b, F=F, gap=gap, n_outer=outer, n_pairs=n_pairs,
                        status=settled)

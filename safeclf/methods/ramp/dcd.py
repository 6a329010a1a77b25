"""Dual coordinate descent for the weighted hinge SVM with a regularised bias column
(Hsieh et al., ICML 2008: the algorithm of LIBLINEAR's L1-loss SVC dual), compiled with numba.

Every training row x_i enters twice, once per side of the ramp majoriser (``svm.py``): as a row
with label −1 and cost C⁺_i (the hinge max{0, 1 + z}) and as a row with label +1 and cost C⁻_i
(max{0, 1 − z}); a side whose cost is 0 takes no part. With x̃_i = [x_i, s] (s the bias scaling,
0 for no bias) the primal and dual are

    P(ũ) = ½‖ũ‖² + Σ_i C⁺_i max{0, 1 + ⟨ũ, x̃_i⟩} + C⁻_i max{0, 1 − ⟨ũ, x̃_i⟩},
    D(α) = Σ α − ½‖ũ(α)‖²,  ũ(α) = Σ_i (α⁻_i − α⁺_i) x̃_i,  0 ≤ α^± ≤ C^±,

and D(α) ≤ min P ≤ P(ũ(α)) for every α in the box (weak duality): the returned gap
P(ũ(α)) − D(α) certifies the solution at no extra cost beyond one pass over the rows.

The duals α⁺, α⁻ (one per row and side) are kept by the caller between calls: a new call with
new costs projects them onto the new box [0, C] and rebuilds ũ(α) from them, so successive
problems that differ a little (cutting-plane and majorization steps) start close to their
solution. Each epoch visits the active rows in a random order (xorshift, seeded by the
caller) and takes the exact clipped Newton step on each live side of each, the two sides of a
row one after the other: one product ⟨ũ, x̃_i⟩ for both (a step on the first side moves the
score by step·‖x̃_i‖²) and one update of ũ with both steps. Shrinking is LIBLINEAR's (a
coordinate at a bound whose gradient points out of the box by more than the previous epoch's
largest violation leaves the active set; when the active set is optimal to the current
tolerance every coordinate is brought back and checked). The solve stops when the duality gap is at most
``gap_tol`` (checked at the start, when the projected-gradient tolerance is met on all
coordinates, which then tightens ten-fold, and every ``CHECK_EVERY`` epochs) or after
``max_epochs`` epochs. The rows are read in CSR form (data, indices, indptr): a dense X is
converted once per X and kept by the state (one code path for both; for a mostly-nonzero dense
X the copy costs 1.5× its memory); memory beyond X and that copy is O(n + d).
"""

from __future__ import annotations

import numpy as np
from numba import njit  # cache folder: set once in safeclf/__init__.py

from safeclf._utils.prefetch import prefetch

CHECK_EVERY = 8
#: rows ahead in the epoch's order whose memory is asked for early (see ``_prefetch_row``)
PREFETCH_AHEAD = 8


@njit(cache=True, inline="always")
def _dot(data, indices, indptr, i, u, s):
    """⟨ũ, x̃_i⟩ with x̃_i = [x_i, s]."""
    acc = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        acc += data[p] * u[indices[p]]
    return acc + s * u[u.shape[0] - 1]


@njit(cache=True, inline="always")
def _axpy(data, indices, indptr, i, step, u, s):
    """ũ += step · x̃_i."""
    for p in range(indptr[i], indptr[i + 1]):
        u[indices[p]] += step * data[p]
    u[u.shape[0] - 1] += step * s


@njit(cache=True)
def _sq_norms(data, indptr, n, s):
    out = np.empty(n)
    for i in range(n):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * data[p]
        out[i] = acc + s * s
    return out


@njit(cache=True)
def _gap(data, indices, indptr, n, s, u, c_pos, c_neg, a_pos, a_neg, z):
    """(P(ũ), D(α)); fills z with ⟨ũ, x̃_i⟩."""
    uu = 0.0
    for k in range(u.shape[0]):
        uu += u[k] * u[k]
    loss = 0.0
    asum = 0.0
    for i in range(n):
        zi = _dot(data, indices, indptr, i, u, s)
        z[i] = zi
        if c_pos[i] > 0.0 and zi > -1.0:
            loss += c_pos[i] * (1.0 + zi)
        if c_neg[i] > 0.0 and zi < 1.0:
            loss += c_neg[i] * (1.0 - zi)
        asum += a_pos[i] + a_neg[i]
    return 0.5 * uu + loss, asum - 0.5 * uu


@njit(cache=True)
def _gap_pair(data, indices, indptr, n, s, u, ubar, c_pos, c_neg, a_pos, a_neg, z, zbar):
    """:func:`_gap` at ũ and, in the same pass over the rows, P at a second point ū (the
    mean of the epochs' ũ since the last check; z and zbar filled): (P(ũ), P(ū), D(α))."""
    uu = 0.0
    bb = 0.0
    for k in range(u.shape[0]):
        uu += u[k] * u[k]
        bb += ubar[k] * ubar[k]
    loss = 0.0
    lbar = 0.0
    asum = 0.0
    for i in range(n):
        zi = 0.0
        zb = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            zi += data[p] * u[indices[p]]
            zb += data[p] * ubar[indices[p]]
        zi += s * u[u.shape[0] - 1]
        zb += s * ubar[u.shape[0] - 1]
        z[i] = zi
        zbar[i] = zb
        if c_pos[i] > 0.0:
            if zi > -1.0:
                loss += c_pos[i] * (1.0 + zi)
            if zb > -1.0:
                lbar += c_pos[i] * (1.0 + zb)
        if c_neg[i] > 0.0:
            if zi < 1.0:
                loss += c_neg[i] * (1.0 - zi)
            if zb < 1.0:
                lbar += c_neg[i] * (1.0 - zb)
        asum += a_pos[i] + a_neg[i]
    return 0.5 * uu + loss, 0.5 * bb + lbar, asum - 0.5 * uu


@njit(cache=True, inline="always")
def _prefetch_row(i, data, indices, indptr, c_pos, c_neg, a_pos, a_neg, qd, mask):
    """Ask for row i's memory ahead of its visit: the epoch's order is random, so each row
    is otherwise a cache miss (on Adult's rows about a sixth of an epoch's time); no value
    changes."""
    prefetch(data, indptr[i])
    prefetch(indices, indptr[i])
    prefetch(c_pos, i)
    prefetch(c_neg, i)
    prefetch(a_pos, i)
    prefetch(a_neg, i)
    prefetch(qd, i)
    prefetch(mask, i)


@njit(cache=True)
def _xorshift(state):
    x = state[0]
    x ^= (x << np.uint64(13)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    x ^= x >> np.uint64(7)
    x ^= (x << np.uint64(17)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    state[0] = x
    return x


@njit(cache=True, inline="always")
def _below(x, k):
    """An integer in [0, k) from the random 64-bit x, k < 2³²: the top 32 bits of x scaled by
    k (Lemire's multiply-shift; a 64-bit modulo costs a division, a fifth of an epoch's time
    on Adult's 12 nonzeros a row)."""
    return np.int64(((x >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _rescale(old_c, new_c, alpha, active):
    """α for a new cost: the same share of the box (a dual at its cap stays at its cap); a side
    that had no cost starts at its cap where its hinge was active at the last solution."""
    if old_c > 0.0:
        return min(alpha * (new_c / old_c), new_c)
    return new_c if active else 0.0


@njit(cache=True)
def _solve(data, indices, indptr, n, d, s, c_pos, c_neg, a_pos, a_neg, old_pos,
           old_neg, z_old, qd, gap_tol, max_epochs, rng, shrinking, pg_tol0):
    """In place on a_pos, a_neg, old_pos, old_neg (set to c_pos, c_neg) and z_old (set to z);
    ``qd`` holds ‖x̃_i‖²; returns (ũ, z, P, D, epochs, ũ(α)): ũ is ũ(α) or, where its P is
    lower, the mean ū of the epochs' ũ since the previous gap check (the coordinate steps
    make P(ũ(α)) jump from epoch to epoch around a falling trend while D(α) rises steadily;
    P is convex, so P(ū) is below the mean of those values, and the gap P − D certified at
    the better of the two reaches ``gap_tol`` epochs earlier)."""
    # carry the duals to the box of the new costs and rebuild ũ from them
    u = np.zeros(d + 1)
    for i in range(n):
        a_pos[i] = _rescale(old_pos[i], c_pos[i], a_pos[i], z_old[i] > -1.0)
        a_neg[i] = _rescale(old_neg[i], c_neg[i], a_neg[i], z_old[i] < 1.0)
        old_pos[i] = c_pos[i]
        old_neg[i] = c_neg[i]
        coef = a_neg[i] - a_pos[i]
        if coef != 0.0:
            _axpy(data, indices, indptr, i, coef, u, s)
    z = z_old
    primal, dual = _gap(data, indices, indptr, n, s, u, c_pos, c_neg, a_pos, a_neg, z)
    if primal - dual <= gap_tol or max_epochs == 0:
        return u, z, primal, dual, 0, u
    # the rows with a live side (cost > 0) in random order, each row's live sides one after the
    # other: bit 1 of ``mask`` the +1 side (cost C⁻), bit 2 the −1 side (C⁺); shrinking
    # clears a side's bit, and a row leaves the active set when none is left
    index = np.empty(n, dtype=np.int64)
    live = np.zeros(n, dtype=np.int64)
    mask = np.zeros(n, dtype=np.int64)
    full = 0
    for i in range(n):
        if qd[i] == 0.0:  # x̃_i = 0: its duals move no weight, optimal at their costs
            a_pos[i] = c_pos[i]
            a_neg[i] = c_neg[i]
            continue
        sides = (1 if c_neg[i] > 0.0 else 0) | (2 if c_pos[i] > 0.0 else 0)
        if sides:
            live[i] = sides
            mask[i] = sides
            index[full] = i
            full += 1
    active = full
    pg_tol = pg_tol0
    pg_max_old = np.inf
    pg_min_old = -np.inf
    epoch = 0
    since_check = 0
    ubar = np.zeros(d + 1)  # the sum of the epochs' ũ since the last check
    zbar = np.empty(n)
    while epoch < max_epochs:
        epoch += 1
        since_check += 1
        for t in range(active - 1):  # Fisher–Yates on the active rows
            j = t + _below(_xorshift(rng), active - t)
            tmp = index[t]
            index[t] = index[j]
            index[j] = tmp
        pg_max = -np.inf
        pg_min = np.inf
        t = 0
        while t < active:
            if t + PREFETCH_AHEAD < active:
                _prefetch_row(index[t + PREFETCH_AHEAD], data, indices, indptr, c_pos, c_neg,
                              a_pos, a_neg, qd, mask)
            i = index[t]
            # the row is read once: its score, carried across its two sides (a step on the
            # first moves it by step·‖x̃_i‖²), and one update of ũ with both sides' steps
            zi = _dot(data, indices, indptr, i, u, s)
            move = 0.0
            for side in (1, 2):
                if not (mask[i] & side):
                    continue
                if side == 1:
                    yi, cap, alpha = 1.0, c_neg[i], a_neg[i]
                else:
                    yi, cap, alpha = -1.0, c_pos[i], a_pos[i]
                g = yi * zi - 1.0
                pg = 0.0
                if alpha == 0.0:
                    if shrinking and g > pg_max_old:
                        mask[i] &= ~side
                        continue
                    if g < 0.0:
                        pg = g
                elif alpha == cap:
                    if shrinking and g < pg_min_old:
                        mask[i] &= ~side
                        continue
                    if g > 0.0:
                        pg = g
                else:
                    pg = g
                if pg > pg_max:
                    pg_max = pg
                if pg < pg_min:
                    pg_min = pg
                if abs(pg) > 1e-12:
                    new = min(max(alpha - g / qd[i], 0.0), cap)
                    if side == 1:
                        a_neg[i] = new
                    else:
                        a_pos[i] = new
                    step = (new - alpha) * yi
                    move += step
                    zi += step * qd[i]
            if move != 0.0:
                _axpy(data, indices, indptr, i, move, u, s)
            if mask[i] == 0:
                active -= 1
                index[t] = index[active]
                index[active] = i
                continue
            t += 1
        ubar += u
        if active == 0:
            pg_max, pg_min = 0.0, 0.0
        converged = pg_max - pg_min <= pg_tol
        shrunk = active < full  # a row or one of its sides left the active set
        if converged and not shrunk:
            for q in range(active):
                if mask[index[q]] != live[index[q]]:
                    shrunk = True
                    break
        if converged and shrunk:  # optimal on the active set: check every side
            active = full
            for q in range(full):
                mask[index[q]] = live[index[q]]
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        if converged or since_check >= CHECK_EVERY:
            ubar *= 1.0 / since_check
            since_check = 0
            primal, pbar, dual = _gap_pair(data, indices, indptr, n, s, u, ubar, c_pos, c_neg,
                                           a_pos, a_neg, z, zbar)
            if min(primal, pbar) - dual <= gap_tol:
                if pbar < primal:
                    z[:] = zbar
                    return ubar, z, pbar, dual, epoch, u
                return u, z, primal, dual, epoch, u
            ubar[:] = 0.0
            if converged:
                pg_tol *= 0.1
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    if since_check > 0:
        ubar *= 1.0 / since_check
        primal, pbar, dual = _gap_pair(data, indices, indptr, n, s, u, ubar, c_pos, c_neg,
                                       a_pos, a_neg, z, zbar)
        if pbar < primal:
            z[:] = zbar
            return ubar, z, pbar, dual, epoch, u
    else:
        primal, dual = _gap(data, indices, indptr, n, s, u, c_pos, c_neg, a_pos, a_neg, z)
    return u, z, primal, dual, epoch, u


def is_solver_rows(X) -> bool:
    """Whether X is already in :func:`solver_rows`'s form."""
    import scipy.sparse as sp

    return bool(sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
                and X.has_canonical_format)


def solver_rows(X):
    """X as the solver reads it: float64 CSR with sorted, distinct column indices in each row
    (the working-set polish relies on it); X itself when it is so already, else a copy (a
    dense X in two compiled passes: SciPy's conversion goes through COO, 5× slower)."""
    import scipy.sparse as sp

    if is_solver_rows(X):
        return X
    if not sp.issparse(X):
        A = np.ascontiguousarray(X, dtype=np.float64)
        if A.ndim == 2:
            data, indices, indptr = _dense_csr(A)
            return sp.csr_matrix((data, indices, indptr), shape=A.shape)
    view = sp.csr_matrix(X, dtype=np.float64, copy=True)
    view.sum_duplicates()  # also sorts the indices
    return view


@njit(cache=True)
def _dense_csr(A):
    """The CSR arrays of the nonzeros of a C-ordered 2-D array, column indices ascending."""
    n, d = A.shape
    indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        k = 0
        for j in range(d):
            if A[i, j] != 0.0:
                k += 1
        indptr[i + 1] = indptr[i] + k
    data = np.empty(indptr[n])
    indices = np.empty(indptr[n], dtype=np.int32)
    for i in range(n):
        p = indptr[i]
        for j in range(d):
            if A[i, j] != 0.0:
                data[p] = A[i, j]
                indices[p] = j
                p += 1
    return data, indices, indptr


class DualState:
    """What a solve leaves for the next: the duals α⁺, α⁻ (n,), the costs they were solved for,
    the scores ⟨ũ, x̃_i⟩ (n,) at the end, and the random stream of the epochs. When the costs
    change, each dual keeps its share of its box (α·C_new/C_old), and a side whose cost was 0
    starts at its cap where its hinge was active at the last scores (at 0 on a fresh state)."""

    def __init__(self, n: int, seed: int = 0):
        self.alpha_pos = np.zeros(n)
        self.alpha_neg = np.zeros(n)
        self.cost_pos = np.zeros(n)
        self.cost_neg = np.zeros(n)
        self.z = np.full(n, np.nan)  # nan: no solution yet, every side starts at 0
        self.rng = np.array([(int(seed) * 2654435761 + 1) % 2**64 or 1], dtype=np.uint64)
        self.u = None  # ũ(α) of the last solve (the returned ũ may be a mean of epochs')
        self._view = None  # (X, its CSR copy) for dense input
        self._norms = None  # (X as read, s, ‖x̃_i‖²)

    def rows(self, X):
        """X as the solver reads it (:func:`solver_rows`), any other X converted once and
        kept."""
        if is_solver_rows(X):
            return X
        if self._view is None or self._view[0] is not X:
            self._view = (X, solver_rows(X))
        return self._view[1]

    def sq_norms(self, X, s: float) -> np.ndarray:
        """‖x̃_i‖² = ‖x_i‖² + s² of the rows of X as :meth:`rows` reads it, computed once."""
        if self._norms is None or self._norms[0] is not X or self._norms[1] != s:
            self._norms = (X, s, _sq_norms(X.data, X.indptr, X.shape[0], s))
        return self._norms[2]


class DualPath:
    """Warm starts along one multiplier search (m = 1, one majoriser): the costs are affine in
    v there, C(v) = C₀ + v·C₁, so for v between two evaluated multipliers v₁ < v < v₂ the convex
    combination of their duals, with the weights that make v of v₁ and v₂, lies in the box of
    C(v), and ũ of it is the same combination of theirs; where the solution path of this
    parametric QP is affine (between its breakpoints) that is the solution itself. Outside
    the evaluated range the nearest point's duals are the start. :meth:`start` sets ``state``
    before a solve at v, :meth:`record` keeps the solve's duals; the latest point and its
    nearest neighbour on each side are kept (at most three copies of the duals)."""

    FIELDS = ("alpha_pos", "alpha_neg", "cost_pos", "cost_neg", "z")

    def __init__(self, state: DualState):
        self.state = state
        self.points: list[tuple[float, tuple[np.ndarray, ...]]] = []

    def _around(self, v: float, other: bool):
        """The kept points nearest v at or below it and at or above it (None where there is
        none); with ``other``, a point at v itself is not one of them."""
        points = [p for p in self.points if not (other and p[0] == v)]
        lo = max((p for p in points if p[0] <= v), key=lambda p: p[0], default=None)
        hi = min((p for p in points if p[0] >= v), key=lambda p: p[0], default=None)
        return lo, hi

    def start(self, v: float) -> None:
        lo, hi = self._around(v, other=False)
        if lo is None and hi is None:
            return
        if lo is None or hi is None or lo[0] == hi[0]:
            for name, arr in zip(self.FIELDS, (lo or hi)[1], strict=True):
                getattr(self.state, name)[:] = arr
            return
        t = (hi[0] - v) / (hi[0] - lo[0])  # v = t·v₁ + (1 − t)·v₂
        for name, a, b in zip(self.FIELDS, lo[1], hi[1], strict=True):
            np.add(t * a, (1.0 - t) * b, out=getattr(self.state, name))

    def record(self, v: float) -> None:
        arrays = tuple(getattr(self.state, name).copy() for name in self.FIELDS)
        lo, hi = self._around(v, other=True)
        self.points = [p for p in (lo, (v, arrays), hi) if p is not None]


def dcd_solve(X, c_pos, c_neg, s, state: DualState, gap_tol, max_epochs=1000, shrinking=True,
              pg_tol=0.1):
    """Solve the problem in the module docstring from ``state`` (updated in place).

    Parameters
    ----------
    X : (n, d) array or sparse matrix (read as float64 CSR, see :meth:`DualState.rows`).
    c_pos, c_neg : (n,) costs C⁺, C⁻ ≥ 0.
    s : float, the bias column's value (0: no bias).
    state : DualState of size n.
    gap_tol : float, stop when P(ũ) − D(α) ≤ gap_tol (absolute, in P's scale).
    max_epochs : int, limit on passes over the active coordinates.
    shrinking : bool.
    pg_tol : float, the first projected-gradient tolerance (tightened ten-fold while the gap
        is above ``gap_tol``).

    Returns
    -------
    u : (d + 1,) ũ (the last entry multiplies s; ũ(α), or the mean of the last epochs' ũ
        where its P is lower: see ``_solve``; ``state.u`` keeps ũ(α)), z : (n,) ⟨ũ, x̃_i⟩,
        primal : P(ũ), dual : D(α), epochs : int.
    """
    X = state.rows(X)
    n, d = X.shape
    *out, state.u = _solve(X.data, X.indices, X.indptr, n, d, float(s),
                           np.ascontiguousarray(c_pos, dtype=np.float64),
                           np.ascontiguousarray(c_neg, dtype=np.float64), state.alpha_pos,
                           state.alpha_neg, state.cost_pos, state.cost_neg, state.z,
                           state.sq_norms(X, float(s)), float(gap_tol), int(max_epochs),
                           state.rng, bool(shrinking), float(pg_tol))
    return tuple(out)

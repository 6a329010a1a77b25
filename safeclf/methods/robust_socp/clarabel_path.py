"""The fast path: each formulation as a conic problem handed to Clarabel directly.

Clarabel solves  min ½xᵀPx + qᵀx  s.t.  Ax + s = b, s ∈ K.  The paper's problems are rewritten
with two exact reductions so the matrix stays small:

- Σⱼ max(−yµ⁻ⱼwⱼ, −yµ⁺ⱼwⱼ) = −y m̄ᵀw + Σⱼ rⱼ|wⱼ| with m̄ = (µ⁻+µ⁺)/2, r = (µ⁺−µ⁻)/2 ≥ 0, and
  |wⱼ| ≤ vⱼ with one v ∈ Rⁿ shared by all points (r ≥ 0, so a larger v only tightens);
- in "-I", the two maxima of an entry, max(−l(yw + a), −u(yw + a)) + max(µ⁻a, µ⁺a), are one
  convex piecewise-linear function of (w, a): the largest of four linear pieces, bounded by
  one epigraph variable e per entry (a per-point block of 2n variables instead of 3n).

Each point's constraint is one second-order cone (−(affine part), Dᵢ ∘ w) (or Dᵢ ∘ aᵢ; Dᵢ w for
MM-MC with a full covariance matrix), or one linear inequality when no point has an ellipsoid
(SVM, MM-M, MM-S).

Every point's rows use w (and b, v), so those columns of A are dense, and a dense column makes
the fill-reducing ordering of Clarabel's KKT system slow (2.7 of 5 seconds at m = 2,000,
n = 20). :func:`_localise` gives each group of about √m points its own copy of them, tied to
the original by equality rows: the optimum is the same and no column is dense.

Most points end strictly inside the margin, where their constraint does not bind, so
:func:`solve_clarabel` solves on a working set of points and adds the ones the solution
violates (checked in closed form with the support function of each point's set) until none is:
at m = 2,000 the solves see about 500 points, and the time grows with the support vectors
rather than with m.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from safeclf.methods._solvers.conic import solve_conic
from safeclf.methods.robust_socp.cvxpy_model import Solution
from safeclf.methods.robust_socp.evaluation import set_support
from safeclf.methods.robust_socp.formulations import ProblemData

#: constraint generation (:func:`solve_clarabel`): the first working set's size, the band
#: around the margin whose points join it, and the constraint value above which a point's
#: constraint is violated (Clarabel's feasibility tolerance)
FIRST, BAND, VIOLATION = 400, 0.1, 1e-8


class _Rows:
    """Collects COO triplets of A, the right-hand side b and each row's point (−1: a row of
    no point), block by block."""

    def __init__(self):
        self.r, self.c, self.v, self.b, self.point = [], [], [], [], []
        self.n_rows = 0

    def add(self, rows, cols, vals):
        rows, cols, vals = np.broadcast_arrays(np.asarray(rows), np.asarray(cols),
                                               np.asarray(vals, float))
        keep = vals != 0
        self.r.append((rows[keep] + self.n_rows).ravel())
        self.c.append(cols[keep].ravel())
        self.v.append(vals[keep].ravel())

    def close(self, n_rows, rhs=None, point=None):
        self.b.append(np.zeros(n_rows) if rhs is None else np.asarray(rhs, float))
        self.point.append(np.full(n_rows, -1) if point is None else np.asarray(point))
        self.n_rows += n_rows

    def matrix(self, n_cols, shared, cones):
        """A and b in CSC form, with the columns ``shared`` localised (appends to ``cones``)."""
        import clarabel

        r, c, v = (np.concatenate(x) for x in (self.r, self.c, self.v))
        r, c, v, n_copies = _localise(r, c, v, np.concatenate(self.point), n_cols,
                                      self.n_rows, np.asarray(shared))
        if n_copies:
            cones.append(clarabel.ZeroConeT(n_copies))
        A = sp.csc_matrix((v, (r, c)), shape=(self.n_rows + n_copies, n_cols + n_copies))
        return A, np.concatenate(self.b + [np.zeros(n_copies)])


def _localise(r, c, v, point, n_cols, n_rows, shared):
    """Move the entries of the ``shared`` columns in the rows of points g·k … g·k + g − 1
    (g ≈ √m) to a copy of those columns for group k, and add the rows copy − original = 0.
    Returns the new triplets and the number of copies (= of new columns and rows)."""
    m = int(point.max()) + 1 if point.size else 0
    size = max(16, int(np.ceil(np.sqrt(max(m, 1)))))
    n_groups = -(-m // size)
    if n_groups < 2 or shared.size == 0:
        return r, c, v, 0
    slot = np.full(n_cols, -1)
    slot[shared] = np.arange(shared.size)
    move = (slot[c] >= 0) & (point[r] >= 0)
    c = c.copy()
    c[move] = n_cols + (point[r[move]] // size) * shared.size + slot[c[move]]
    n_copies = n_groups * shared.size
    k = np.arange(n_copies)
    rows = n_rows + np.concatenate([k, k])
    cols = np.concatenate([n_cols + k, shared[k % shared.size]])
    vals = np.concatenate([np.ones(n_copies), -np.ones(n_copies)])
    return (np.concatenate([r, rows]), np.concatenate([c, cols]), np.concatenate([v, vals]),
            n_copies)


def _abs_bound(rows, cones, iw: int, iv: int, n: int) -> None:
    """v ≥ w and v ≥ −w (so v ≥ |w|) as 2n non-negative rows."""
    import clarabel

    k = np.arange(n)
    rows.add(k, iw + k, 1.0), rows.add(k, iv + k, -1.0)
    rows.add(n + k, iw + k, -1.0), rows.add(n + k, iv + k, -1.0)
    rows.close(2 * n)
    cones.append(clarabel.NonnegativeConeT(2 * n))


def conic_problem(data: ProblemData, C: float):
    """Clarabel's (P, q, A, b, cones) for ``data``; w, b, ξ are the first n + 1 + m variables."""
    import clarabel

    m, n = data.shape
    y = data.y
    mbar = (data.mean_lo + data.mean_hi) / 2
    r = np.maximum(data.mean_hi - data.mean_lo, 0.0) / 2
    D = data.D
    full = D.ndim == 3  # MM-MC with a full covariance: point i's cone holds Dᵢ w (n×n)
    ellipsoid = bool(np.any(D != 0))
    J = np.arange(n)[None, :]
    iw, ib, ixi = 0, n, n + 1  # column offsets: w, b, ξ
    step = n + 1 if ellipsoid else 1  # rows per point of the last block, its cone
    head = np.arange(m) * step  # each point's first row there
    rows, cones = _Rows(), []

    # ξ ≥ 0
    rows.add(np.arange(m), ixi + np.arange(m), -1.0)
    rows.close(m, point=np.arange(m))
    cones.append(clarabel.NonnegativeConeT(m))

    if data.lower is None:
        use_v = bool(np.any(r > 0))
        iv = ixi + m
        n_var = iv + (n if use_v else 0)
        if use_v:
            _abs_bound(rows, cones, iw, iv, n)
        # point i: (−(1 − ξᵢ + yᵢb − yᵢm̄ᵢᵀw + rᵢᵀv), Dᵢ ∘ w) ∈ SOC, or the first entry ≥ 0
        rows.add(head[:, None], iw + J, -y[:, None] * mbar)
        if use_v:
            rows.add(head[:, None], iv + J, r)
        if ellipsoid and full:
            rows.add(head[:, None, None] + 1 + J[:, :, None], iw + J[:, None, :], -D)
        elif ellipsoid:
            rows.add(head[:, None] + 1 + J, iw + J, -D)
    else:
        if full:
            raise ValueError("a full covariance (MM-MC) has no support-box variant")
        # Entries whose ellipsoid-union extent stays inside their slab lⱼ ≤ xⱼ ≤ uⱼ
        # (µ⁺ + D ≤ u and µ⁻ − D ≥ l) do not need that slab: R ∩ U keeps only the binding
        # slabs, so such an entry has āᵢⱼ = 0, i.e. aᵢⱼ = −yᵢwⱼ, and enters as in (16).
        tol = 1e-12 * (1.0 + np.abs(data.upper) + np.abs(data.lower))
        bind = (data.mean_hi + D > data.upper + tol) | (data.mean_lo - D < data.lower - tol)
        free = ~bind
        bi, bj = np.nonzero(bind)
        nb = bi.size
        use_v = bool(np.any(r[free] > 0))
        iv = ixi + m
        ia = iv + (n if use_v else 0)
        ie = ia + nb
        n_var = ie + nb
        kb = np.arange(nb)
        # per binding entry one epigraph variable eᵢⱼ of the convex piecewise-linear
        #   max(−lᵢⱼ(yᵢwⱼ + aᵢⱼ), −uᵢⱼ(yᵢwⱼ + aᵢⱼ)) + max(µ⁻ᵢⱼaᵢⱼ, µ⁺ᵢⱼaᵢⱼ)
        # = the largest of the four −L(yᵢwⱼ + aᵢⱼ) + M aᵢⱼ, L ∈ {l, u}, M ∈ {µ⁻, µ⁺}
        if nb:
            yb = y[bi]
            for t, L in enumerate((data.lower[bind], data.upper[bind])):
                for u_, M in enumerate((data.mean_lo[bind], data.mean_hi[bind])):
                    off = (2 * t + u_) * nb  # eᵢⱼ + L yᵢ wⱼ + (L − M) aᵢⱼ ≥ 0
                    rows.add(off + kb, ie + kb, -1.0)
                    rows.add(off + kb, iw + bj, -L * yb)
                    rows.add(off + kb, ia + kb, -(L - M))
            rows.close(4 * nb, point=np.tile(bi, 4))
            cones.append(clarabel.NonnegativeConeT(4 * nb))
        if use_v:
            _abs_bound(rows, cones, iw, iv, n)
        # point i: (−(1 − ξᵢ + yᵢb + Σ_binding eᵢⱼ + Σ_free (−yᵢm̄ᵢⱼwⱼ + rᵢⱼvⱼ)), Dᵢ ∘ aᵢ)
        H = head[:, None]
        rows.add(head[bi], ie + kb, 1.0)
        rows.add(H, iw + J, np.where(free, -y[:, None] * mbar, 0.0))
        if use_v:
            rows.add(H, iv + J, np.where(free, r, 0.0))
        if ellipsoid:
            rows.add(head[bi] + 1 + bj, ia + kb, -D[bind])
            rows.add(H + 1 + J, iw + J, np.where(free, y[:, None] * D, 0.0))
    # both: the 1 − ξᵢ + yᵢb of each point's head row, and the block's cones
    rows.add(head, ib, y)
    rows.add(head, ixi + np.arange(m), -1.0)
    rhs = np.zeros(m * step)
    rhs[head] = -1.0
    rows.close(m * step, rhs, point=np.repeat(np.arange(m), step))
    cones += ([clarabel.SecondOrderConeT(n + 1)] * m if ellipsoid else [clarabel.NonnegativeConeT(m)])

    shared = np.r_[iw:iw + n, ib, iv:iv + (n if use_v else 0)]
    A, b = rows.matrix(n_var, shared, cones)
    n_var = A.shape[1]
    P = sp.csc_matrix((np.ones(n), (np.arange(n), np.arange(n))), shape=(n_var, n_var))
    q = np.zeros(n_var)
    q[ixi:ixi + m] = C
    return P, q, A, b, cones


def constraint_values(data: ProblemData, w, b: float) -> np.ndarray:
    """1 + yᵢb + σᵢ(−yᵢw), σᵢ the support function of point i's uncertainty set (Lemma 2,
    or Lemma 3 for "-I"): point i's constraint at ξᵢ = 0, satisfied when ≤ 0."""
    d = -data.y[:, None] * np.asarray(w, float)[None, :]
    return 1.0 + data.y * b + set_support(d, data.mean_lo, data.mean_hi, data.D,
                                          data.lower, data.upper)


def _rows_of(data: ProblemData, idx) -> ProblemData:
    box = {} if data.lower is None else {"lower": data.lower[idx], "upper": data.upper[idx]}
    return replace(data, y=data.y[idx], mean_lo=data.mean_lo[idx], mean_hi=data.mean_hi[idx],
                   D=data.D[idx], **box)


def solve_clarabel(data: ProblemData, C: float, settings: dict | None = None) -> Solution:
    """Constraint generation over points. Solve on a random working set of ``FIRST`` points;
    keep the points within ``BAND`` of the margin at that solution; then, round after round,
    add every point within ``BAND`` of the margin (the violators among them) and solve again.
    A point outside the working set costs nothing in the objective when its constraint holds
    at ξ = 0, so once none is violated the working set's optimum is the whole problem's."""
    m, n = data.shape
    if m <= 2 * FIRST:
        return _solve(data, C, settings)
    work = np.zeros(m, bool)
    work[np.random.default_rng(0).choice(m, FIRST, replace=False)] = True
    first, n_iter = True, 0
    while True:
        idx = np.flatnonzero(work)
        sol = _solve(_rows_of(data, idx), C, settings)
        n_iter += sol.n_iter
        g = constraint_values(data, sol.w, sol.b)
        if not np.any(~work & (g > VIOLATION)):
            xi = np.maximum(g, 0.0)
            xi[idx] = sol.xi
            w = sol.w
            return Solution(w, sol.b, xi, float(0.5 * w @ w + C * xi.sum()), sol.status,
                            n_iter)
        near = g > -BAND
        work = near if first else work | near
        first = False


def _solve(data: ProblemData, C: float, settings: dict | None = None) -> Solution:
    m, n = data.shape
    ib, ixi = n, n + 1
    name = data.formulation.name
    sol, status = solve_conic(*conic_problem(data, C), name, infeasible=(
        f"the chance constraints {data.formulation.equation} have no feasible point"),
        **(settings or {}))
    x = np.asarray(sol.x)
    w, bias, xi = x[:n], float(x[ib]), np.maximum(x[ixi:ixi + m], 0.0)
    return Solution(w, bias, xi, float(0.5 * w @ w + C * xi.sum()), status,
                    int(sol.iterations))

"""A box-constrained QP whose Hessian has low rank: the SVM dual over a working set.

    minimise  f(α) = ½‖a + Zᵀα‖² − Σ α   s.t.  0 ≤ α ≤ C,

with Z (m, k) sparse and k (the feature count + 1) much smaller than m. This is the dual of the
working-set SVM of ``svm._working_set_polish`` (row k of Z is y_k x̃_k, a the fixed duals'
part of ũ). A generic conic solver factors a KKT system of size about 3m at every iteration;
here each Newton system (D + ZZᵀ) Δα = r, D diagonal and positive, is solved through the
Sherman–Morrison–Woodbury identity with one k × k Cholesky factor, so an iteration costs
O(nnz(Z)·k + k³) (the interior-point method for massive SVMs of Ferris and Munson, SIAM J.
Optim. 13, 2002). The method is Mehrotra's predictor–corrector with one step length for α
and the bound multipliers λ (α ≥ 0) and μ (α ≤ C).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numba import njit  # cache folder: set once in safeclf/__init__.py


@dataclass
class BoxQPResult:
    alpha: np.ndarray
    objective: float
    gap: float  # λᵀα + μᵀ(C − α): the duality gap of the QP at its last iterate
    residual: float  # ‖∇f − λ + μ‖∞
    iterations: int
    converged: bool


@njit(cache=True)
def _gram(data, indices, indptr, weight, k):
    """I + Zᵀ diag(weight) Z for a CSR Z with k columns and sorted column indices (dense
    k × k)."""
    M = np.zeros((k, k))
    for i in range(indptr.size - 1):  # the upper triangle (indices sorted), then mirrored
        w = weight[i]
        end = indptr[i + 1]
        for p in range(indptr[i], end):
            zp = w * data[p]
            row = M[indices[p]]
            for q in range(p, end):
                row[indices[q]] += zp * data[q]
    for c in range(k):
        M[c, c] += 1.0
        for r in range(c):
            M[c, r] = M[r, c]
    return M


def _woodbury(Z, ZT, d):
    """A solver of (diag(d) + ZZᵀ) x = r: x = r/d − (Z/d) M⁻¹ Zᵀ(r/d), M = I + Zᵀ diag(1/d) Z
    (``ZT`` is Zᵀ, kept in CSR)."""
    dinv = 1.0 / d
    factor = la.cho_factor(_gram(Z.data, Z.indices, Z.indptr, dinv, Z.shape[1]),
                           check_finite=False)

    def solve(r):
        rd = r * dinv
        return rd - dinv * (Z @ la.cho_solve(factor, ZT @ rd, check_finite=False))

    return solve


def _direction(point, rl, ru):
    """The Newton direction (Δα, Δλ, Δμ) for the complementarity targets λΔα + αΔλ = rl and
    (C − α)Δμ − μΔα = ru: (H + D)Δα = −r_d + rl/α − ru/(C − α), then Δλ and Δμ from them."""
    solve, r_d, alpha, up, lam, mu = point
    da = solve(-r_d + rl / alpha - ru / up)
    return da, (rl - lam * da) / alpha, (ru + mu * da) / up


@njit(cache=True)
def _step(alpha, up, lam, mu, da, dl, dm):
    """The largest t ≤ 1 that keeps α + tΔα, (C − α) − tΔα, λ + tΔλ and μ + tΔμ ≥ 0."""
    t = 1.0
    for i in range(alpha.size):
        if da[i] < 0.0:
            t = min(t, -alpha[i] / da[i])
        elif da[i] > 0.0:
            t = min(t, up[i] / da[i])
        if dl[i] < 0.0:
            t = min(t, -lam[i] / dl[i])
        if dm[i] < 0.0:
            t = min(t, -mu[i] / dm[i])
    return t


def box_qp(Z, a, cap, alpha0=None, tol=1e-9, max_iter=60) -> BoxQPResult:
    """Minimise f above from ``alpha0`` (moved into the box's interior; default C/2).

    Stops when the gap λᵀα + μᵀ(C − α) and the stationarity residual are both within ``tol``
    relative to the scale of f (1 + |f|), or after ``max_iter`` iterations. Every C must be
    positive (a dual whose box is {0} is not a variable: leave it out of Z)."""
    cap = np.asarray(cap, float)
    if not np.all(cap > 0):
        raise ValueError("box_qp: every upper bound C must be > 0")
    Z = sp.csr_matrix(Z, dtype=np.float64, copy=True)
    Z.sum_duplicates()  # _gram reads each (row, column) once, in column order
    Z.sort_indices()
    return _interior_point(Z, Z.T.tocsr(), np.asarray(a, float), cap, alpha0, tol, max_iter)


def _interior_point(Z, ZT, a, cap, alpha0, tol, max_iter) -> BoxQPResult:
    m = cap.size
    alpha = 0.5 * cap if alpha0 is None else np.clip(alpha0, 0.05 * cap, 0.95 * cap)
    u = a + ZT @ alpha
    grad = Z @ u - 1.0
    # multipliers that satisfy stationarity where they can and centre the complementarity
    lam = np.maximum(grad, 0.0) + 1e-2 * (1.0 + np.abs(grad))
    mu = np.maximum(-grad, 0.0) + 1e-2 * (1.0 + np.abs(grad))
    it = 0
    converged = False
    while True:
        up = cap - alpha
        r_d = grad - lam + mu
        gap = float(lam @ alpha + mu @ up)
        f = 0.5 * float(u @ u) - float(alpha.sum())
        res = float(np.max(np.abs(r_d))) if m else 0.0
        if gap <= tol * (1.0 + abs(f)) and res <= tol * (1.0 + abs(f)):
            converged = True
            break
        if it >= max_iter:
            break
        it += 1
        point = (_woodbury(Z, ZT, lam / alpha + mu / up), r_d, alpha, up, lam, mu)
        # predictor (affine scaling), then Mehrotra's centred corrector
        da, dl, dm = _direction(point, -lam * alpha, -mu * up)
        t = _step(alpha, up, lam, mu, da, dl, dm)
        gap_aff = float((lam + t * dl) @ (alpha + t * da) + (mu + t * dm) @ (up - t * da))
        sigma = (gap_aff / gap) ** 3
        tau = sigma * gap / (2 * m)
        da, dl, dm = _direction(point, tau - lam * alpha - dl * da, tau - mu * up + dm * da)
        t = 0.99 * _step(alpha, up, lam, mu, da, dl, dm)
        # strictly inside the box, also after rounding
        alpha = np.clip(alpha + t * da, 1e-14 * cap, (1.0 - 1e-14) * cap)
        lam = lam + t * dl
        mu = mu + t * dm
        u = a + ZT @ alpha
        grad = Z @ u - 1.0
    return BoxQPResult(alpha, f, gap, res, it, converged)

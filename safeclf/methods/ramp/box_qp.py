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


@njit(cache=True)
def _cho_solve(L, b):
    """x with L Lᵀ x = b (L lower triangular)."""
    k = b.size
    x = b.copy()
    for i in range(k):
        acc = x[i]
        for j in range(i):
            acc -= L[i, j] * x[j]
        x[i] = acc / L[i, i]
    for i in range(k - 1, -1, -1):
        acc = x[i]
        for j in range(i + 1, k):
            acc -= L[j, i] * x[j]
        x[i] = acc / L[i, i]
    return x


@njit(cache=True)
def _zt(data, indices, indptr, v, k):
    """Zᵀ v."""
    out = np.zeros(k)
    for i in range(indptr.size - 1):
        vi = v[i]
        if vi != 0.0:
            for p in range(indptr[i], indptr[i + 1]):
                out[indices[p]] += data[p] * vi
    return out


@njit(cache=True)
def _z(data, indices, indptr, x):
    """Z x."""
    m = indptr.size - 1
    out = np.empty(m)
    for i in range(m):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * x[indices[p]]
        out[i] = acc
    return out


@njit(cache=True)
def _direction(data, indices, indptr, L, dinv, r_d, alpha, up, lam, mu, rl, ru):
    """The Newton direction (Δα, Δλ, Δμ) for the complementarity targets λΔα + αΔλ = rl and
    (C − α)Δμ − μΔα = ru: (H + D)Δα = −r_d + rl/α − ru/(C − α), solved through the
    Sherman–Morrison–Woodbury identity (x = r/D − (Z/D) M⁻¹ Zᵀ(r/D), M = I + Zᵀ D⁻¹ Z = L Lᵀ),
    then Δλ and Δμ from Δα."""
    rd = (-r_d + rl / alpha - ru / up) * dinv
    x = _cho_solve(L, _zt(data, indices, indptr, rd, L.shape[0]))
    da = rd - dinv * _z(data, indices, indptr, x)
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
    return solve_rows(Z.data, Z.indices, Z.indptr, Z.shape[1], np.asarray(a, float), cap,
                      alpha0, tol, max_iter)


def solve_rows(data, indices, indptr, k, a, cap, alpha0=None, tol=1e-9, max_iter=60):
    """:func:`box_qp` on Z given as CSR arrays whose rows have sorted, distinct column
    indices (no copy and no checks: the working-set polish builds them so)."""
    alpha = (0.5 * cap if alpha0 is None
             else np.clip(np.asarray(alpha0, float), 0.05 * cap, 0.95 * cap))
    return BoxQPResult(*_ipm(data, indices, indptr, k, a, cap, alpha, tol, max_iter))


@njit(cache=True)
def _ipm(data, indices, indptr, k, a, cap, alpha, tol, max_iter):
    """Mehrotra's predictor–corrector from ``alpha`` (inside the box); returns (α, f, gap,
    residual, iterations, converged)."""
    m = cap.size
    u = a + _zt(data, indices, indptr, alpha, k)
    grad = _z(data, indices, indptr, u) - 1.0
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
        dinv = 1.0 / (lam / alpha + mu / up)
        L = np.linalg.cholesky(_gram(data, indices, indptr, dinv, k))
        # predictor (affine scaling), then Mehrotra's centred corrector
        da, dl, dm = _direction(data, indices, indptr, L, dinv, r_d, alpha, up, lam, mu,
                                -lam * alpha, -mu * up)
        t = _step(alpha, up, lam, mu, da, dl, dm)
        gap_aff = float((lam + t * dl) @ (alpha + t * da) + (mu + t * dm) @ (up - t * da))
        sigma = (gap_aff / gap) ** 3
        tau = sigma * gap / (2 * m)
        da, dl, dm = _direction(data, indices, indptr, L, dinv, r_d, alpha, up, lam, mu,
                                tau - lam * alpha - dl * da, tau - mu * up + dm * da)
        t = 0.99 * _step(alpha, up, lam, mu, da, dl, dm)
        # strictly inside the box, also after rounding
        alpha = np.minimum(np.maximum(alpha + t * da, 1e-14 * cap), (1.0 - 1e-14) * cap)
        lam = lam + t * dl
        mu = mu + t * dm
        u = a + _zt(data, indices, indptr, alpha, k)
        grad = _z(data, indices, indptr, u) - 1.0
    return alpha, f, gap, res, it, converged

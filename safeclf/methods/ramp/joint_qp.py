"""The working-set dual with the multiplier as one more variable: Problem 3 with one constraint
solved over (α_W, v) at once.

    minimise  f(α, v) = ½‖a₀ + v a₁ + Zᵀα‖² − Σ α − q v
    s.t.      0 ≤ α ≤ c₀ + v c₁,   0 ≤ v ≤ v_max,

with Z (m, k) sparse (row k: y_k x̃_k of a side in the working set), k the feature count + 1,
and c₁ ≥ 0. The duals outside the set are fixed, those at their cap moving with it
(a₁ = Σ c₁_i y_i x̃_i over them, ``joint.py``). It is :mod:`box_qp`'s problem with the box's
upper side tied to v: the Hessian is ẐẐᵀ with Ẑ = [Z; a₁ᵀ] (rank ≤ k still), and the
constraints' part of each Newton system is an arrowhead matrix B = [[D, e], [eᵀ, δ]] (D
diagonal), whose inverse is diag(D⁻¹, 0) plus one rank-one term. So (B + ẐẐᵀ)Δ = r is solved,
as in box_qp, through one k × k Cholesky factor of I + ẐᵀB⁻¹Ẑ = I + ZᵀD⁻¹Z + ppᵀ/σ (Woodbury).
Mehrotra's predictor–corrector, one step length for primal and dual variables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit  # cache folder: set once in safeclf/__init__.py

from safeclf.methods.ramp.box_qp import _cho_solve, _gram, _z, _zt

#: the solve stops when max(gap, residual) exceeds this many times the best seen
DIVERGED = 1e3
#: steps of iterative refinement of each Newton direction taken once the gap is below
#: REFINE_BELOW relative to 1 + |f|
REFINE = 2
REFINE_BELOW = 1e-4


@dataclass
class JointQPResult:
    alpha: np.ndarray
    v: float
    objective: float
    gap: float  # the complementarity products' sum at the returned (best) iterate
    residual: float  # the largest stationarity or slack-equation residual there
    iterations: int
    converged: bool


def solve_joint(data, indices, indptr, k, a0, a1, q, c0, c1, v_max, alpha0, v0, tol=1e-9,
                max_iter=60, atol=0.0) -> JointQPResult:
    """Minimise f above from (``alpha0``, ``v0``), both moved inside (v into
    [1e-3, 1 − 1e-3]·v_max, α into [0.05, 0.95] of its cap there); Z as CSR arrays whose rows
    have sorted, distinct column indices. Every c₀ + v_max c₁ must be positive (a dual whose
    cap is 0 for every v is not a variable). Stops when the complementarity sum and the
    stationarity residual are both within ``tol`` relative to 1 + |f|, or within ``atol``."""
    c0 = np.asarray(c0, float)
    c1 = np.asarray(c1, float)
    if np.any(c1 < 0) or np.any(c0 < 0) or not np.all(c0 + v_max * c1 > 0):
        raise ValueError("solve_joint: caps c0 + v c1 need c0, c1 ≥ 0 and c0 + v_max c1 > 0")
    v = min(max(float(v0), 1e-3 * v_max), (1.0 - 1e-3) * v_max)
    cap = c0 + v * c1
    alpha = np.clip(np.asarray(alpha0, float), 0.05 * cap, 0.95 * cap)
    out = _ipm(data, indices, indptr, k, np.asarray(a0, float), np.asarray(a1, float),
               float(q), c0, c1, float(v_max), alpha, v, tol, max_iter, float(atol))
    v = min(max(out[1], 0.0), v_max)  # the slacks' equations hold to rounding: clip onto them
    return JointQPResult(np.clip(out[0], 0.0, c0 + v * c1), v, *out[2:])


@njit(cache=True)
def _solve_newton(data, indices, indptr, L, dinv, wa, sigma, a1, b_a, b_v):
    """(Δα, Δv) with (B + ẐẐᵀ)(Δα, Δv) = (b_a, b_v): B⁻¹ = diag(D⁻¹, 0) + wwᵀ/σ with
    w = (wa, 1), wa = −D⁻¹e; Woodbury with M = L Lᵀ = I + ẐᵀB⁻¹Ẑ."""
    k = L.shape[0]
    wb = (wa @ b_a + b_v) / sigma
    y_a = dinv * b_a + wa * wb
    y_v = wb
    t = _cho_solve(L, _zt(data, indices, indptr, y_a, k) + a1 * y_v)
    h_a = _z(data, indices, indptr, t)
    h_v = float(a1 @ t)
    wh = (wa @ h_a + h_v) / sigma
    return y_a - (dinv * h_a + wa * wh), y_v - wh


@njit(cache=True)
def _apply(data, indices, indptr, k, d, ce, delta, a1, xa, xv):
    """(B + ẐẐᵀ)(xa, xv) with B = [[diag(d), −ce], [−ceᵀ, δ]]."""
    u = _zt(data, indices, indptr, xa, k) + a1 * xv
    return (d * xa - ce * xv + _z(data, indices, indptr, u),
            -float(ce @ xa) + delta * xv + float(a1 @ u))


@njit(cache=True)
def _ipm(data, indices, indptr, k, a0, a1, q, c0, c1, v_max, alpha, v, tol, max_iter, atol):
    """Returns (α, v, f, gap, residual, iterations, converged). The slacks s = c₀ + v c₁ − α
    and v_max − v are variables of their own (their defining equations kept as residuals
    r_p, r_t that each Newton step removes): computed as differences, the slack of a dual
    at its cap loses its digits once it is ~1e-12 of the cap, and the steps with it."""
    m = alpha.size
    s = c0 + v * c1 - alpha
    top = v_max - v
    u = a0 + v * a1 + _zt(data, indices, indptr, alpha, k)
    g_a = _z(data, indices, indptr, u) - 1.0
    g_v = float(a1 @ u) - q
    lam = np.maximum(g_a, 0.0) + 1e-2 * (1.0 + np.abs(g_a))
    mu = np.maximum(-g_a, 0.0) + 1e-2 * (1.0 + np.abs(g_a))
    # v's multipliers from what stationarity in v leaves once the caps' share is counted
    rest = g_v - float(c1 @ mu)
    nu = max(rest, 0.0) + 1e-2 * (1.0 + abs(rest))
    rho = max(-rest, 0.0) + 1e-2 * (1.0 + abs(rest))
    it = 0
    # the best iterate by max(gap, residual): the solve returns the best point it saw, and
    # stops once that measure diverges (the Newton systems' accuracy runs out near the end)
    best = (alpha.copy(), v, np.inf, np.inf, np.inf)
    while True:
        r_a = g_a - lam + mu
        r_v = g_v - float(c1 @ mu) - nu + rho
        r_p = c0 + v * c1 - alpha - s
        r_t = v_max - v - top
        gap = float(lam @ alpha + mu @ s) + nu * v + rho * top
        f = 0.5 * float(u @ u) - float(alpha.sum()) - q * v
        res = max(np.max(np.abs(r_a)) if m else 0.0, abs(r_v),
                  np.max(np.abs(r_p)) if m else 0.0, abs(r_t))
        merit = max(gap, res)
        if merit < max(best[3], best[4]):
            best = (alpha.copy(), v, f, gap, res)
        if merit <= max(tol * (1.0 + abs(f)), atol) or it >= max_iter:
            break
        if merit > DIVERGED * max(best[3], best[4]):
            break
        it += 1
        # refine the step once the gap is small (where D's range, and the error, is large)
        refine = REFINE if gap <= REFINE_BELOW * (1.0 + abs(f)) else 0
        ms = mu / s
        la = lam / alpha
        dinv = 1.0 / (la + ms)
        wa = dinv * c1 * ms  # −D⁻¹e with e = −c₁ μ/s
        # σ = δ − eᵀD⁻¹e, each term c₁²(μ/s)(1 − (μ/s)/D) written without the difference
        sigma = float(c1 @ (c1 * ms * la * dinv)) + nu / v + rho / top
        delta = float(c1 @ (c1 * ms)) + nu / v + rho / top
        p = _zt(data, indices, indptr, wa, k) + a1
        M = _gram(data, indices, indptr, dinv, k)
        for i in range(k):
            for j in range(k):
                M[i, j] += p[i] * p[j] / sigma
        L = np.linalg.cholesky(M)
        # predictor (affine scaling), then Mehrotra's centred corrector; Δs = c₁Δv − Δα + r_p
        # and Δtop = −Δv + r_t, so r_p and r_t enter the right-hand sides through μ and ρ
        dl = np.zeros(m)
        dm = np.zeros(m)
        da = np.zeros(m)
        ds = np.zeros(m)
        dn = 0.0
        dr = 0.0
        dv = 0.0
        dtop = 0.0
        t = 1.0
        for corr in range(2):
            if corr == 0:
                rl = -lam * alpha
                ru = -mu * s
                rn = -nu * v
                rr = -rho * top
            else:
                gap_aff = float((lam + t * dl) @ (alpha + t * da) + (mu + t * dm) @ (s + t * ds))
                gap_aff += (nu + t * dn) * (v + t * dv) + (rho + t * dr) * (top + t * dtop)
                sig = (gap_aff / gap) ** 3
                tau = sig * gap / (2 * m + 2)
                rl = tau - lam * alpha - dl * da
                ru = tau - mu * s - dm * ds
                rn = tau - nu * v - dn * dv
                rr = tau - rho * top - dr * dtop
            ru_p = ru - mu * r_p
            rr_t = rr - rho * r_t
            b_a = -r_a + rl / alpha - ru_p / s
            b_v = -r_v + float(c1 @ (ru_p / s)) + rn / v - rr_t / top
            da, dv = _solve_newton(data, indices, indptr, L, dinv, wa, sigma, a1, b_a, b_v)
            for _ in range(refine if corr == 1 else 0):
                # the step taken, refined: the factor's system is ill-conditioned where
                # many duals approach a bound (D spans many orders of magnitude)
                e_a, e_v = _apply(data, indices, indptr, k, la + ms, c1 * ms, delta, a1, da, dv)
                fa, fv = _solve_newton(data, indices, indptr, L, dinv, wa, sigma, a1, b_a - e_a,
                                       b_v - e_v)
                da += fa
                dv += fv
            ds = c1 * dv - da + r_p
            dtop = -dv + r_t
            dl = (rl - lam * da) / alpha
            dm = (ru - mu * ds) / s
            dn = (rn - nu * dv) / v
            dr = (rr - rho * dtop) / top
            t = _step(alpha, s, lam, mu, da, ds, dl, dm, v, top, nu, rho, dv, dtop, dn, dr)
        t *= 0.99
        alpha = alpha + t * da
        s = s + t * ds
        v = v + t * dv
        top = top + t * dtop
        lam = lam + t * dl
        mu = mu + t * dm
        nu = nu + t * dn
        rho = rho + t * dr
        u = a0 + v * a1 + _zt(data, indices, indptr, alpha, k)
        g_a = _z(data, indices, indptr, u) - 1.0
        g_v = float(a1 @ u) - q
    alpha, v, f, gap, res = best
    return alpha, v, f, gap, res, it, max(gap, res) <= max(tol * (1.0 + abs(f)), atol)


@njit(cache=True)
def _step(alpha, s, lam, mu, da, ds, dl, dm, v, top, nu, rho, dv, dtop, dn, dr):
    """The largest t ≤ 1 keeping α, s, λ, μ, v, v_max − v, ν, ρ positive."""
    t = 1.0
    for i in range(alpha.size):
        if da[i] < 0.0:
            t = min(t, -alpha[i] / da[i])
        if ds[i] < 0.0:
            t = min(t, -s[i] / ds[i])
        if dl[i] < 0.0:
            t = min(t, -lam[i] / dl[i])
        if dm[i] < 0.0:
            t = min(t, -mu[i] / dm[i])
    if dv < 0.0:
        t = min(t, -v / dv)
    if dtop < 0.0:
        t = min(t, -top / dtop)
    if dn < 0.0:
        t = min(t, -nu / dn)
    if dr < 0.0:
        t = min(t, -rho / dr)
    return t

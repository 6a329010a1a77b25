"""The readable model: each formulation written in cvxpy exactly as in the paper.

Slower than :mod:`.clarabel_path` (cvxpy canonicalises m×n auxiliary variables), but it is the
reference the fast path is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from safeclf.errors import SolverError
from safeclf.methods._solvers.status import SolverStatus, settle
from safeclf.methods.robust_socp.formulations import ProblemData


@dataclass
class Solution:
    w: np.ndarray
    b: float
    xi: np.ndarray
    objective: float
    status: SolverStatus
    n_iter: int = 0


def solve_cvxpy(data: ProblemData, C: float) -> Solution:
    import cvxpy as cp

    m, n = data.shape
    y = data.y
    w, b, xi = cp.Variable(n), cp.Variable(), cp.Variable(m, nonneg=True)
    W = cp.reshape(w, (1, n), order="C")
    Y = y[:, None]
    objective = cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi))
    if data.lower is None:
        # (16)/(24)/(27)/(30)/(2)/(3)/(4)/(1):
        #   1 − ξᵢ + yᵢb + Σⱼ zᵢⱼ + ‖Dᵢ w‖ ≤ 0,  zᵢⱼ ≥ −yᵢµ⁻ᵢⱼwⱼ,  zᵢⱼ ≥ −yᵢµ⁺ᵢⱼwⱼ
        #   (4) with a full covariance: ‖Dᵢ w‖ with Dᵢ = κ_c Σᵢ^{1/2} an n×n matrix
        z = cp.Variable((m, n))
        if data.D.ndim == 3:
            Dw = cp.reshape(data.D.reshape(m * n, n) @ w, (m, n), order="C")
        else:
            Dw = cp.multiply(data.D, W)
        cons = [
            z >= cp.multiply(-Y * data.mean_lo, W),
            z >= cp.multiply(-Y * data.mean_hi, W),
            1 - xi + y * b + cp.sum(z, axis=1) + cp.norm(Dw, 2, axis=1) <= 0,
        ]
    else:
        if data.D.ndim == 3:
            raise ValueError("a full covariance (MM-MC) has no support-box variant")
        # (23)/(26)/(29)/(32):
        #   1 − ξᵢ + yᵢb + Σⱼ z̃ᵢⱼ + Σⱼ zᵢⱼ + ‖Dᵢ aᵢ‖ ≤ 0,  zᵢⱼ ≥ µ⁻ᵢⱼaᵢⱼ,  zᵢⱼ ≥ µ⁺ᵢⱼaᵢⱼ,
        #   z̃ᵢⱼ ≥ −lᵢⱼ(yᵢwⱼ + aᵢⱼ),  z̃ᵢⱼ ≥ −uᵢⱼ(yᵢwⱼ + aᵢⱼ)
        a, z, zt = cp.Variable((m, n)), cp.Variable((m, n)), cp.Variable((m, n))
        yw_a = cp.multiply(np.repeat(Y, n, axis=1), np.ones((m, 1)) @ W) + a
        cons = [
            z >= cp.multiply(data.mean_lo, a),
            z >= cp.multiply(data.mean_hi, a),
            zt >= cp.multiply(-data.lower, yw_a),
            zt >= cp.multiply(-data.upper, yw_a),
            1 - xi + y * b + cp.sum(zt, axis=1) + cp.sum(z, axis=1)
            + cp.norm(cp.multiply(data.D, a), 2, axis=1) <= 0,
        ]
    prob = cp.Problem(objective, cons)
    try:
        prob.solve(solver=cp.CLARABEL, direct_solve_method="qdldl")  # as the fast path
    except cp.error.SolverError as exc:
        raise SolverError(f"{data.formulation.name}: cvxpy/Clarabel failed ({exc})") from None
    status = settle(prob.status, f"{data.formulation.name} (cvxpy)", infeasible=(
        f"the chance constraints {data.formulation.equation} have no feasible point"))
    return Solution(np.asarray(w.value, float), float(b.value),
                    np.maximum(np.asarray(xi.value, float), 0.0), float(prob.value), status,
                    int(prob.solver_stats.num_iters or 0))

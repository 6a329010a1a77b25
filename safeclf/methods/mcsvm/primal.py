"""The MC-SVM primal for an explicit feature map φ (linear kernel, or a polynomial kernel through
its monomial features):

    min_{w, b ∈ ℝᵐ, ξ}  (1/2η) wᵀw + ½ Σ_k Σ_i ((1 − 2τ_k) y_i + 1) ξ_ik                  (MC-SVM)
    s.t.  y_i (wᵀφ(x_i) − b_k) ≤ ξ_ik − 1,   ξ_ik ≥ 0.

``solve_primal_cvxpy`` states it readably; ``solve_primal`` builds the same QP for Clarabel
directly (the fast path). Both return (w, b).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.sparse as sp

from safeclf.methods._solvers.conic import solve_conic
from safeclf.methods._solvers.status import settle


def poly_feature_map(X, degree: int, gamma: float, coef0: float) -> np.ndarray:
    """φ with φ(x)ᵀφ(z) = (γ xᵀz + coef0)^degree (needs coef0 ≥ 0): one column per monomial
    x^β, |β| ≤ degree, weighted by √(degree! / ((degree − |β|)! Π β_j!) · coef0^{degree−|β|} γ^{|β|})."""
    X = np.asarray(X, float)
    n, d = X.shape
    cols = []
    for total in range(degree + 1):
        c0 = coef0 ** (degree - total) if degree > total else 1.0
        if c0 == 0:
            continue
        for combo in itertools.combinations_with_replacement(range(d), total):
            counts = np.bincount(np.asarray(combo, int), minlength=d) if combo else np.zeros(d, int)
            mult = math.factorial(degree) / (
                math.factorial(degree - total) * math.prod(math.factorial(int(c)) for c in counts))
            col = np.ones(n)
            for j in combo:
                col = col * X[:, j]
            cols.append(math.sqrt(mult * c0 * gamma**total) * col)
    return np.column_stack(cols)


def poly_feature_count(d: int, degree: int, coef0: float) -> int:
    return math.comb(d + degree, degree) if coef0 > 0 else math.comb(d + degree - 1, degree)


def solve_primal(Phi, y, C, eta, return_status=False):
    """(MC-SVM) as a QP for Clarabel: z = [w (p), b (m), ξ (m·n, block k first)],
    rows y_i φ_iᵀw − y_i b_k − ξ_ik ≤ −1 and −ξ_ik ≤ 0. Returns (w, b) [, iterations, status]."""
    import clarabel

    Phi = np.asarray(Phi, float)
    n, p = Phi.shape
    m = C.shape[0]
    nx = p + m + m * n
    P = sp.diags(np.r_[np.full(p, 1.0 / eta), np.zeros(m + m * n)], format="csc")
    q = np.r_[np.zeros(p + m), C.ravel()]
    yPhi = sp.csr_matrix(y[:, None] * Phi)
    A_w = sp.vstack([yPhi] * m)
    A_b = sp.kron(sp.eye(m), sp.csr_matrix(-y[:, None]))
    A_xi = -sp.eye(m * n)
    A = sp.vstack([
        sp.hstack([A_w, A_b, A_xi]),
        sp.hstack([sp.csr_matrix((m * n, p + m)), -sp.eye(m * n)]),
    ]).tocsc()
    rhs = np.r_[-np.ones(m * n), np.zeros(m * n)]
    sol, status = solve_conic(P, q, A, rhs, [clarabel.NonnegativeConeT(2 * m * n)], "MC-SVM primal")
    x = np.asarray(sol.x)
    assert x.size == nx
    if return_status:
        return x[:p], x[p:p + m], int(sol.iterations), status
    return x[:p], x[p:p + m]


def solve_primal_cvxpy(Phi, y, C, eta) -> tuple[np.ndarray, np.ndarray]:
    """The readable model of (MC-SVM); slow for large n, used to check :func:`solve_primal`."""
    import cvxpy as cp

    n, p = Phi.shape
    m = C.shape[0]
    w, b = cp.Variable(p), cp.Variable(m)
    s = Phi @ w
    loss = sum(C[k] @ cp.pos(1 + cp.multiply(y, s - b[k])) for k in range(m))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(w) / (2 * eta) + loss))
    prob.solve(solver="CLARABEL")
    settle(prob.status, "MC-SVM primal (cvxpy)")
    return np.asarray(w.value), np.asarray(b.value)

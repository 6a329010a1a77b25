"""Algorithm 2: maximise the concave dual z(v) = min_{w,b} Ψ(w, b, v) (eq. 6) over
V = [0, v_max]^m by cutting planes with inexact inner solves.

``evaluate(v, gap)`` is the SVMOptimizer (``gap`` = U_t − L_t so far, inf at the start, so it
may solve inexactly while the gap is large): it returns (w, b), an upper value u = Ψ(w, b, v), the
supergradient g = ∇_v Ψ(w, b, v) (the constraint bounds minus γ) and a lower bound l ≤ z(v).
Since Ψ(w, b, ·) is linear in v, u_s + ⟨g_s, v − v_s⟩ upper-bounds z everywhere; h_t is the
minimum of those cuts, U_t = max_V h_t, L_t = max_s l_s, and the search stops when
U_t − L_t ≤ ε, returning the iterate with the largest l_s (lines 5–7).

CutChooser: for m = 1 a safeguarded one-dimensional search (bracket the sign change of g,
then the intersection of the two bracketing cuts, falling back to bisection); for m > 1 the
level method (Nemirovski's lecture notes, the paper's [20]): the projection of the best
point onto {v : h_t(v) ≥ L_t + ½(U_t − L_t)}.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Cut:
    v: np.ndarray
    upper: float
    lower: float
    grad: np.ndarray
    payload: object


@dataclass
class CPResult:
    best: Cut
    iterations: int
    U: float
    L: float
    cuts: list[Cut] = field(default_factory=list)

    @property
    def gap(self) -> float:
        return max(0.0, self.U - self.L)


def _max_model(cuts, v_max):
    """U_t = max_{v ∈ V} min_s (u_s + ⟨g_s, v − v_s⟩) and a maximiser (a small LP)."""
    m = cuts[0].v.size
    if m == 1:  # evaluate the concave piecewise-linear h at its breakpoints and the ends
        pts = [0.0, v_max]
        for i, a in enumerate(cuts):
            for b in cuts[i + 1:]:
                dg = a.grad[0] - b.grad[0]
                if abs(dg) > 1e-15:
                    x = ((b.upper - b.grad[0] * b.v[0]) - (a.upper - a.grad[0] * a.v[0])) / dg
                    if 0.0 <= x <= v_max:
                        pts.append(x)
        pts = np.array(pts)
        h = np.min([c.upper + c.grad[0] * (pts - c.v[0]) for c in cuts], axis=0)
        k = int(np.argmax(h))
        return float(h[k]), np.array([pts[k]])
    from scipy.optimize import linprog

    G = np.array([c.grad for c in cuts])
    rhs = np.array([c.upper - c.grad @ c.v for c in cuts])
    # maximise θ  s.t.  θ − ⟨g_s, v⟩ ≤ u_s − ⟨g_s, v_s⟩,  0 ≤ v ≤ v_max
    A = np.c_[-G, np.ones(len(cuts))]
    res = linprog(np.r_[np.zeros(m), -1.0], A_ub=A, b_ub=rhs,
                  bounds=[(0.0, v_max)] * m + [(None, None)], method="highs")
    if res.status != 0:
        from safeclf.solver_status import SolverStatus, settle

        settle(SolverStatus.ERROR, "ramp: the cutting-plane model LP",
               detail=f"linprog ended with '{res.message}'")
    return float(-res.fun), res.x[:m]


def _level_point(cuts, v_max, center, level):
    """argmin ‖v − center‖² s.t. u_s + ⟨g_s, v − v_s⟩ ≥ level for all s, v ∈ V."""
    from scipy.optimize import minimize

    G = np.array([c.grad for c in cuts])
    off = np.array([c.upper - c.grad @ c.v for c in cuts]) - level
    cons = {"type": "ineq", "fun": lambda v: G @ v + off, "jac": lambda v: G}
    res = minimize(lambda v: 0.5 * np.sum((v - center) ** 2), center, jac=lambda v: v - center,
                   bounds=[(0.0, v_max)] * center.size, constraints=[cons], method="SLSQP",
                   options={"maxiter": 200, "ftol": 1e-12})
    return np.clip(res.x, 0.0, v_max)


#: |g| at which the m = 1 search counts the constraint as tight (see :func:`cutting_plane`)
G_TOL = 1e-3


def cutting_plane(evaluate, m, v_max, eps, max_iter, v_start=None, g_tol=G_TOL) -> CPResult:
    """Run Algorithm 2; ``evaluate(v, gap) -> (upper, lower, grad, payload)``. For m = 1 the
    search also requires a point where the constraint is tight (|g| ≤ ``g_tol``), or v at
    an end of V with g of the right sign: z is flat near its maximum, so U_t − L_t ≤ ε alone
    leaves v, and with it the constraint's slack, loosely determined."""
    cuts: list[Cut] = []
    v = np.zeros(m) if v_start is None else np.clip(np.asarray(v_start, float), 0.0, v_max)
    U, L = np.inf, -np.inf
    t = 0
    while t < max_iter:
        t += 1
        upper, lower, grad, payload = evaluate(v, U - L)
        cuts.append(Cut(v.copy(), upper, lower, np.asarray(grad, float), payload))
        if m == 0:  # no constraints: z is the SVM's value, one evaluation
            U, L = upper, lower
            break
        L = max(c.lower for c in cuts)
        U, v_kelley = _max_model(cuts, v_max)
        if U - L <= eps and (m != 1 or _settled(cuts, v_max, g_tol)):
            break
        if m == 1:
            v = _one_d_next(cuts, v_max, v_kelley)
        else:
            best = max(cuts, key=lambda c: c.lower)
            v = _level_point(cuts, v_max, best.v, L + 0.5 * (U - L))
        if any(np.allclose(v, c.v, rtol=0, atol=1e-12 * max(1.0, v_max)) for c in cuts):
            break  # the model cannot move: the remaining gap is the inner solver's
    best = max(cuts, key=lambda c: c.lower)
    return CPResult(best, t, U, L, cuts)


def _settled(cuts, v_max, g_tol):
    for c in cuts:
        g, v = c.grad[0], c.v[0]
        if abs(g) <= g_tol or (v == 0.0 and g <= 0) or (v >= v_max and g >= 0):
            return True
    return False


def _one_d_next(cuts, v_max, v_kelley):
    """The 1-D search: keep the bracket [lo, hi] with g(lo) > 0 > g(hi). Until both ends are
    known, step from the nearest point towards the sign change of g by the secant through the
    two points nearest it (at most 4× away, at least 1.25×; a single point: 2×, or 1 from 0),
    so warm starts near the answer stay near it; a search that must go below its lowest point
    ends at v = 0 (is the constraint inactive?)."""
    pos = sorted((c for c in cuts if c.grad[0] > 0), key=lambda c: c.v[0])
    neg = sorted((c for c in cuts if c.grad[0] < 0), key=lambda c: c.v[0])
    if pos and neg:
        lo, hi = pos[-1].v[0], neg[0].v[0]
        x = float(v_kelley[0])
        width = hi - lo
        if not (lo + 0.05 * width <= x <= hi - 0.05 * width):
            x = 0.5 * (lo + hi)
        return np.array([x])
    if pos:  # g > 0 everywhere tried: grow
        lo = pos[-1].v[0]
        if lo <= 0.0:
            return np.array([min(v_max, 1.0)])
        x = _secant(pos[-2:]) if len(pos) >= 2 else 2.0 * lo
        return np.array([min(v_max, min(max(x, 1.25 * lo), 4.0 * lo))])
    hi = neg[0].v[0]  # g < 0 everywhere tried (a warm start): shrink
    if hi <= 0.0 or any(c.v[0] == 0.0 for c in cuts):
        return np.array([0.0])
    x = _secant(neg[:2]) if len(neg) >= 2 else 0.5 * hi
    return np.array([0.0 if x <= 0.25 * hi else min(x, 0.8 * hi)])


def _secant(two):
    """Where the line through (v, g) of two cuts crosses g = 0 (inf when it does not)."""
    (v1, g1), (v2, g2) = [(c.v[0], c.grad[0]) for c in two]
    if g1 == g2:
        return np.inf if g1 > 0 else -np.inf
    x = v1 - g1 * (v2 - v1) / (g2 - g1)
    if (g1 > 0 and x < max(v1, v2)) or (g1 < 0 and x > min(v1, v2)):  # g not decreasing
        return np.inf if g1 > 0 else -np.inf
    return x

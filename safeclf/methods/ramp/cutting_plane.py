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

    @property
    def slope(self):
        """m = 1: dg/dv between the two evaluated points nearest the tight point (None
        without two points of different v and decreasing g)."""
        if self.best.v.size != 1:
            return None
        cs = sorted(self.cuts, key=lambda c: abs(c.grad[0]))
        for c in cs[1:]:
            s = _slope((cs[0], c))
            if s is not None:
                return s
        return None


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
        from safeclf.methods._solvers.status import SolverStatus, settle

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


def cutting_plane(evaluate, m, v_max, eps, max_iter, v_start=None, g_tol=G_TOL,
                  slope=None, own_gap=False) -> CPResult:
    """Run Algorithm 2; ``evaluate(v, gap) -> (upper, lower, grad, payload)``. For m = 1 the
    search also requires a point where the constraint is tight from the feasible side
    (−``g_tol`` ≤ g ≤ 0), or v at an end of V with g of the right sign: z is flat near its
    maximum, so U_t − L_t ≤ ε alone leaves v, and with it the constraint's slack, loosely
    determined. ``slope`` (m = 1): an estimate of dg/dv < 0 (e.g. from the previous
    majorization step, :attr:`CPResult.slope`) for the first step from ``v_start``.
    ``own_gap`` (m = 1): a tight point whose own upper − lower is within ε also ends the
    search — the Lagrangian's gap at v then bounds Problem 3's by ε + v·g_tol, the
    certificate of :mod:`joint` — instead of evaluating further points (Kelley's, often
    v = 0 far from the warm duals) until the model's U_t − L_t closes."""
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
        last = cuts[-1]
        if (own_gap and m == 1 and last.upper - last.lower <= eps
                and _tight(last, v_max, g_tol)):
            break
        if m == 1:
            if _closed(cuts, g_tol):
                break
            v = _one_d_next(cuts, v_max, v_kelley, g_tol, slope)
            if v is None:  # the point is settled but its inner solve was not exact enough
                v = cuts[-1].v.copy()
                continue
        else:
            best = max(cuts, key=lambda c: c.lower)
            v = _level_point(cuts, v_max, best.v, L + 0.5 * (U - L))
        if any(np.allclose(v, c.v, rtol=0, atol=1e-12 * max(1.0, v_max)) for c in cuts):
            break  # the model cannot move: the remaining gap is the inner solver's
    best = max(cuts, key=lambda c: c.lower)
    return CPResult(best, t, U, L, cuts)


def _tight(c, v_max, g_tol):
    g, v = c.grad[0], c.v[0]
    return -g_tol <= g <= 0.0 or (v == 0.0 and g <= 0) or (v >= v_max and g >= 0)


#: relative width below which a bracket of v is closed (see :func:`_closed`)
BRACKET_WIDTH = 1e-3


def _closed(cuts, g_tol):
    """Whether points above the window [−g_tol, 0] and below it lie within ``BRACKET_WIDTH``
    (relative) of each other in v. Near the tight multiplier g is known only to the inner
    solves' accuracy (with a small λ a small duality gap still leaves w, and so which rows
    cross a hinge, loosely determined), and it may jump there (the inner solution is not
    unique at a kink of the dual): successive points then land on either side of the window
    without entering it. Over so narrow a bracket z(v) changes by at most max|g|·width, so
    the search stops; the caller takes the best evaluated point (a feasible one, with the
    slack it has)."""
    above = [c.v[0] for c in cuts if c.grad[0] > 0.0]
    below = [c.v[0] for c in cuts if c.grad[0] < -g_tol]
    if not above or not below:
        return False
    lo, hi = max(above), min(below)
    return 0.0 <= hi - lo <= BRACKET_WIDTH * max(hi, 1e-12)


def _settled(cuts, v_max, g_tol):
    return any(_tight(c, v_max, g_tol) for c in cuts)


def _one_d_next(cuts, v_max, v_kelley, g_tol, slope=None):
    """The 1-D search for g(v) in [−g_tol, 0] (g decreases in v): the next v, or None to
    evaluate the last point again (it is tight, and a second, warmer inner solve tied to the
    smaller U_t − L_t closes the gap); once a tight point is known, Kelley's point (the
    maximiser of the cutting-plane model, Algorithm 2's own choice). Otherwise each step
    aims at g = −g_tol/2, the middle of the window: within a bracket [lo, hi] with
    g(lo) > 0 > g(hi), by the secant of the two ends kept 5 % inside (Kelley's point while
    both ends are far from the window, and the midpoint after two steps landed on the same
    side, as the Illinois rule does: g is only known to the inner solves' accuracy, and a
    one-sided secant stalls); before a bracket, a Newton step from the point nearest the
    window with the slope of the secant through the two nearest points, or ``slope`` when
    that one does not decrease (at most 4× away; without any slope 2×, or 1 from 0). A
    search that must go below its lowest point ends at v = 0 (is the constraint inactive?)."""
    last = cuts[-1]
    if _tight(last, v_max, g_tol) and sum(c.v[0] == last.v[0] for c in cuts) == 1:
        return None
    if _settled(cuts, v_max, g_tol):  # a tight point is known: what is left is U_t − L_t,
        return np.asarray(v_kelley, float)  # closed by the cut at the model's maximiser
    aim = -0.5 * g_tol
    above = [c.grad[0] > 0.0 for c in cuts]  # no point is tight: above or below the window
    pos = sorted((c for c, a in zip(cuts, above) if a), key=lambda c: c.v[0])
    neg = sorted((c for c, a in zip(cuts, above) if not a), key=lambda c: c.v[0])
    if pos and neg:
        lo, hi = pos[-1], neg[0]
        width = hi.v[0] - lo.v[0]
        x = lo.v[0] + (lo.grad[0] - aim) / (lo.grad[0] - hi.grad[0]) * width
        if min(lo.grad[0] - aim, aim - hi.grad[0]) > 50 * g_tol:
            x = float(v_kelley[0])  # both ends far off: the cutting-plane model's point
        # the last two points were both placed inside a bracket and fell on one side
        stalled = (len(cuts) >= 4 and above[-1] == above[-2] and True in above[:-2]
                   and False in above[:-2])
        if stalled or not (lo.v[0] + 0.05 * width <= x <= hi.v[0] - 0.05 * width):
            x = 0.5 * (lo.v[0] + hi.v[0])
        return np.array([x])
    near = pos[::-1] if pos else neg  # nearest the window first
    s = _slope(near[:2]) if len(near) >= 2 else None
    s = s if s is not None else (slope if slope is not None and slope < 0 else None)
    v0, g0 = near[0].v[0], near[0].grad[0]
    if pos:  # g above the window everywhere tried: grow
        if s is not None:
            x = v0 + (aim - g0) / s
        else:
            x = 2.0 * v0 if v0 > 0 else 1.0
        if v0 <= 0.0:
            return np.array([min(v_max, x if x > 0 else 1.0)])
        return np.array([min(v_max, min(max(x, 1.01 * v0), 4.0 * v0))])
    if v0 <= 0.0 or any(c.v[0] == 0.0 for c in cuts):  # below the window: shrink
        return np.array([0.0])
    x = v0 + (aim - g0) / s if s is not None else 0.5 * v0
    return np.array([0.0 if x <= 0.25 * v0 else min(x, 0.99 * v0)])


def _slope(two):
    """dg/dv between two cuts of different v, None unless it is negative."""
    (v1, g1), (v2, g2) = [(c.v[0], c.grad[0]) for c in two]
    if v1 == v2 or (g2 - g1) / (v2 - v1) >= 0:
        return None
    return (g2 - g1) / (v2 - v1)

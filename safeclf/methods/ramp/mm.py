"""Algorithm 1: majorization–minimization of Problem 2 with Problem 3 as the majoriser.

Problem 2 (the ramp version of Problem 1):

    minimise  g₀(r(w, b)) + λ/2 ‖w‖²   s.t.  g_j(r(w, b)) ≤ γ_j,  j = 1..m,

where r_x = σ(z_x), σ(z) = max{0, min{1, ½ + z}} (eq. 2), z_x = ⟨w, x⟩ + b, and each g_j is
linear: g_j(p) = k_j + Σ_x c_jx p_x (see ``rates.py``). Problem 3 replaces, at the current
iterate z', each c σ(z) by its tight convex upper bound (eqs. 4–5): for c > 0,
c·max{0, ½ + z} where z' ≤ ½ and the constant c elsewhere; for c < 0, c σ(z) = |c| σ(−z) − |c|
is bounded by |c|·max{0, ½ − z} − |c| where z' ≥ −½ and by 0 elsewhere. The bound of each
function is convex and tight at z', so the Lagrangian Ψ (eq. 7) stays linear in v.

The multipliers live in V = [0, v_max]^m, so the saddle problem is the exact penalty
g₀ + v_max Σ_j [g_j − γ_j]₊: from an infeasible start the iterations first reduce the violation
(and a constraint that stays violated is reported as infeasible by the estimator).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from safeclf.methods.ramp.cutting_plane import G_TOL, cutting_plane
from safeclf.methods.ramp.dcd import DualPath, DualState
from safeclf.methods.ramp.joint import joint_step
from safeclf.methods.ramp.svm import polish_applies, weighted_hinge_svm


def ramp(z):
    """σ(z) = max{0, min{1, ½ + z}} (eq. 2): the probability of a positive prediction."""
    return np.clip(0.5 + np.asarray(z, dtype=float), 0.0, 1.0)


@dataclass
class Problem:
    """Problem 2's data: ``coef`` (m+1, n) signed coefficients of p_x (row 0 the objective),
    ``const`` (m+1,), ``gamma`` (m,), λ and the bias scaling s (0: no bias)."""

    X: object
    coef: np.ndarray
    const: np.ndarray
    gamma: np.ndarray
    lam: float
    s: float

    @property
    def m(self) -> int:
        return self.gamma.size

    def z(self, w, b):
        return np.asarray(self.X @ w).ravel() + b

    def reg(self, w, b):
        return 0.5 * self.lam * (float(w @ w) + ((b / self.s) ** 2 if self.s > 0 else 0.0))

    def values(self, p):
        """g_j(p) for j = 0..m."""
        return self.const + self.coef @ p

    def penalised(self, w, b, v_max):
        """g₀(σ) + λ/2‖w‖² + v_max Σ [g_j(σ) − γ_j]₊: the merit Algorithm 1 decreases."""
        g = self.values(ramp(self.z(w, b)))
        return float(g[0] + self.reg(w, b) + v_max * np.maximum(0.0, g[1:] - self.gamma).sum())


@dataclass
class Majoriser:
    """Problem 3 at z': hinge weights (m+1, n) for max{0, ½ + z} (``pos``) and
    max{0, ½ − z} (``neg``), and the constants K_j."""

    pos: np.ndarray
    neg: np.ndarray
    K: np.ndarray

    @classmethod
    def at(cls, prob: Problem, z_prime) -> Majoriser:
        hp = (z_prime <= 0.5).astype(float)   # σ̌_p is the hinge
        hn = (z_prime >= -0.5).astype(float)  # σ̌_n is the hinge
        P = np.maximum(prob.coef, 0.0)
        N = np.maximum(-prob.coef, 0.0)
        K = prob.const + P @ (1.0 - hp) - N @ hn
        return cls(P * hp, N * hn, K)

    def bounds(self, z):
        """The convex bounds of g_0..g_m at z (they equal g_j(σ(z)) at z = z')."""
        return self.K + self.pos @ np.maximum(0.0, 0.5 + z) + self.neg @ np.maximum(0.0, 0.5 - z)


@dataclass
class MMResult:
    w: np.ndarray
    b: float
    v: np.ndarray
    mm_iterations: int
    cp_iterations: list[int] = field(default_factory=list)
    duality_gaps: list[float] = field(default_factory=list)
    merits: list[float] = field(default_factory=list)
    svm_gaps: list[float] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    converged: bool = False  # False: stopped at max_mm_iter
    slope: float | None = None  # m = 1: the last step's dg/dv estimate (CPResult.slope)


def inner_gap_target(outer_gap, cp_tol, share=0.25, cap=10.0):
    """The duality gap each inner solve must reach: a ``share`` of the cutting plane's current
    U − L (loose while it is large, at most ``cap``·ε, never below ``share``·ε), so the lower
    bounds L_t lag the exact dual values by less than the gap still to close."""
    return share * cp_tol * min(max(outer_gap / cp_tol, 1.0), cap)


def step_tolerances(last_gain, v, cp_tol, share=0.25, cap=30.0):
    """(ε, g_tol) of one majorization step: the cutting plane's ε and the tight-constraint
    tolerance, each loosened up to ``cap`` times while the merit still falls fast, so that
    what a loose step can leave on the table (ε, or v·g_tol from the constraint's slack) stays
    below a ``share`` of the previous step's gain ``last_gain`` (inf at the first step); the
    base values once the gains are small."""
    eps = cp_tol * min(max(share * last_gain / cp_tol, 1.0), cap)
    scale = max(float(np.sum(np.abs(v))), 1e-12) * G_TOL
    return eps, G_TOL * min(max(share * last_gain / scale, 1.0), cap)


def solve(prob: Problem, *, v_max=100.0, max_mm_iter=10, mm_tol=1e-4, max_cp_iter=30,
          cp_tol=1e-4, svm_tol=1e-3, svm_max_iter=5000, w0=None, b0=0.0, callback=None,
          seed=0, inner_solver="auto", state=None, v0=None, slope0=None, start_only=False):
    """Algorithm 1 from (w0, b0) (default the zero vector, as in the paper's experiments);
    each step solves Problem 3 by Algorithm 2. The inner duals live in ``state`` (a
    :class:`~safeclf.methods.ramp.dcd.DualState`, new when None) across all cutting-plane and
    MM steps; each inner solve is as exact as :func:`inner_gap_target` asks. ``slope0``
    (m = 1): an estimate of dg/dv for the first step's multiplier search from ``v0`` (the
    :attr:`MMResult.slope` of a fit this one starts from). ``start_only``: the fit is only
    a starting point (a coarse level): the multiplier search may stop on a tight point's own
    gap (``own_gap`` of :func:`~safeclf.methods.ramp.cutting_plane.cutting_plane`), and a
    step that does not improve the merit ends the fit instead of being solved again ten
    times as exactly."""
    n, d = prob.X.shape
    if state is None:
        state = DualState(n, seed)
    w = np.zeros(d) if w0 is None else np.asarray(w0, float)
    b = float(b0)
    merit = prob.penalised(w, b, v_max)
    out = MMResult(w, b, np.zeros(prob.m), 0, merits=[merit])
    v_start = None if v0 is None else np.asarray(v0, float)
    gain, slope = np.inf, slope0
    joint = (prob.m == 1 and inner_solver in ("auto", "dcd")
             and polish_applies(state.rows(prob.X)))
    for t in range(1, max_mm_iter + 1):
        eps, g_tol = step_tolerances(gain, np.zeros(prob.m) if v_start is None else v_start,
                                     cp_tol)
        loose = eps > cp_tol or g_tol > G_TOL
        maj = Majoriser.at(prob, prob.z(w, b))
        # m = 1: each solve starts from the duals of the evaluated multipliers around it
        path = DualPath(state) if prob.m == 1 else None

        score = partial(lagrangian_cut, prob, maj)

        def evaluate(v, outer_gap, maj=maj, tol=cp_tol, path=path, score=score):
            weights = np.r_[1.0, v]
            a_pos, a_neg = weights @ maj.pos, weights @ maj.neg
            if path is not None:
                path.start(float(v[0]))
            res = weighted_hinge_svm(prob.X, a_pos, a_neg, prob.lam, prob.s, svm_tol,
                                     svm_max_iter, seed, inner_solver,
                                     gap_tol=inner_gap_target(outer_gap, tol), state=state)
            if path is not None:
                path.record(float(v[0]))
            return (*score(v, res), res)

        # Problem 3 by Algorithm 2; if no iterate improves the merit (the constraint bound a
        # little above γ costs v_max times as much in the exact penalty), once more ten times
        # as exact from where it ended: a step that improves exists, the current point
        # being feasible for Problem 3 at the current merit
        for retry in (False,) if start_only else (False, True):
            tol, gt = (cp_tol / 10, G_TOL / 10) if retry else (eps, g_tol)
            cp = None
            if joint:  # the multiplier solved with the duals (joint.py); else searched
                v_here = 0.0 if v_start is None else float(v_start[0])
                cp, v_end = joint_step(prob, maj, state, v_here, tol, gt, v_max, score)
                if cp is None:  # not settled, or at a near-zero v: the search goes on from there
                    v_start = np.array([v_end])
            if cp is None:
                cp = cutting_plane(partial(evaluate, tol=tol), prob.m, v_max, tol, max_cp_iter,
                                   v_start, g_tol=gt, slope=slope, own_gap=start_only)
            # Algorithm 2 returns the iterate with the best lower bound; with inexact inner
            # solves we take, among the evaluated iterates, the one with the smallest
            # exact-penalty value of Problem 3 (the two coincide once U_t − L_t ≤ ε)
            chosen = min(cp.cuts, key=lambda c: _penalised_bound(maj, prob, c.payload, v_max))
            res = chosen.payload
            new_merit = prob.penalised(res.w, res.b, v_max)
            accepted = new_merit <= merit + 1e-12 * max(1.0, abs(merit))
            if accepted or retry:
                break
            v_start = chosen.v
        slope = cp.slope if cp.slope is not None else slope
        out.slope = slope
        out.cp_iterations.append(cp.iterations)
        out.duality_gaps.append(cp.gap)
        out.svm_gaps.append(res.upper - res.lower)
        out.history.append({"iteration": t, "merit": new_merit, "v": chosen.v.tolist(),
                            "cp_iterations": cp.iterations, "duality_gap": float(cp.gap),
                            "accepted": bool(accepted), "retried": retry})
        if callback is not None:
            callback(t, res, cp)
        out.mm_iterations = t
        if not accepted:
            out.converged = True  # not even the exact retry (start_only: the step) improved
            break
        gain = merit - new_merit
        w, b, merit = res.w, res.b, new_merit
        out.w, out.b, out.v = w, b, chosen.v
        out.merits.append(merit)
        v_start = chosen.v
        if gain <= mm_tol * abs(merit):
            if not loose or retry:
                out.converged = True
                break
            gain = 0.0  # a loose step that gained little: the next one at the base tolerances
    return out


def lagrangian_cut(prob: Problem, maj: Majoriser, v, res):
    """Algorithm 2's (upper, lower, supergradient) of an inner solution ``res`` at
    multipliers v: Ψ(w, b, v) (eq. 7) at the solution, the certified lower bound on
    min_{w,b} Ψ(·, v), and ∇_v Ψ = the constraints' bounds minus γ."""
    bounds = maj.bounds(res.z)
    const = maj.K[0] + v @ (maj.K[1:] - prob.gamma)
    upper = bounds[0] + v @ (bounds[1:] - prob.gamma) + prob.reg(res.w, res.b)
    return upper, min(res.lower + const, upper), bounds[1:] - prob.gamma


def _penalised_bound(maj: Majoriser, prob: Problem, res, v_max):
    """Problem 3's objective plus v_max Σ_j [bound_j − γ_j]₊ at the inner solution ``res``."""
    bounds = maj.bounds(res.z)
    return float(bounds[0] + prob.reg(res.w, res.b)
                 + v_max * np.maximum(0.0, bounds[1:] - prob.gamma).sum())


"""Problem 3 with one constraint, solved with its multiplier instead of searched over it.

Algorithm 2 finds the multiplier v by evaluating the dual function z(v) at 3–4 points, each a
weighted-hinge solve. Problem 3's dual is one QP in (α, v):

    max  D(α) + (4/λ)·v·(K₁ − γ)   s.t.  0 ≤ α ≤ c₀ + v c₁,  v ∈ [0, v_max]

(D the weighted-hinge dual, the costs C(v) = c₀ + v c₁ affine in v, ``svm.py``). Coordinate
descent moves α at fixed v; v moves with the working-set polish, which solves the QP over the
free and near-margin duals and v together (:mod:`joint_qp`), the duals outside the set fixed
and those at their cap moving with v. Rounds of epochs and such polishes go on until the
Lagrangian's duality gap at v is within ε and the constraint is tight from the feasible side
(−g_tol ≤ g ≤ 0; or v = 0 and g ≤ 0; or v = v_max and g ≥ 0), the stopping rule of
Algorithm 2 with m = 1 (:func:`cutting_plane.cutting_plane`). The polish aims at
g = −AIM·g_tol, near the window's upper end: a binding constraint then ends tight, and a
constraint that does not bind at v = 0 (g(0) ≤ 0) is pushed to v > 0 only when g(0) lies in
the thin band (−AIM·g_tol, 0]; a step that settles at a v that small (``NEAR_ZERO``) is handed
to the search from v = 0. Problem 3's optimum is the same; what changes is the work: one
solve per majorization step instead of one per multiplier tried. Used where the polish is
(``svm.polish_applies``); a step not settled in ``MAX_ROUNDS`` rounds returns None and the
caller searches from where it ended.
"""

from __future__ import annotations

import numpy as np

from safeclf.methods.ramp.cutting_plane import CPResult, Cut, _tight
from safeclf.methods.ramp.dcd import dcd_solve
from safeclf.methods.ramp.joint_qp import solve_joint
from safeclf.methods.ramp.svm import POLISH_TOL, _set_rows, dcd_result, working_set

#: epochs at the step's start multiplier before the first polish, and between later polishes
FIRST_EPOCHS = 16
LATER_EPOCHS = 8
#: rounds (epochs, then a polish) before the step is handed back unsettled
MAX_ROUNDS = 8
#: the epochs' duality gap target, as a share of the step's ε
GAP_SHARE = 0.5
#: the polish's own gap may reach this share of the epochs' gap target (it need not be
#: more exact than the check after it asks)
IPM_SHARE = 0.05
#: the least share of the live sides in the polish's set
SET_SHARE = 0.1
#: the polish aims the constraint at −AIM·g_tol, inside the tight window [−g_tol, 0]. At the
#: window's middle (0.5), a step whose v = 0 solution had g in (−g_tol/2, 0] was pushed to
#: v > 0: on a9a without a bias term at κ 0.25, where the constraint does not bind, v went
#: 0, 0.03, 0, 0.03, ... over the majorization steps and three fits of 100 ended "active"
#: with the training ratio 0.057 above κ. At 0.1 those fits end at v = 0; nine Adult fits
#: took 904 epochs and 61 polishes against 1,016 and 63 (0.01: 82 polishes, g landing
#: above 0 after the polish more often)
AIM = 0.1
#: a step settled at 0 < v ≤ NEAR_ZERO·ε/g_tol goes to the search from v = 0 instead: on a9a
#: without a bias term at κ 0.25 (a constraint that does not bind there), the polish aimed
#: at −0.1·g_tol still ended some steps at v ≈ 1e-4, the majorized constraint just binding,
#: and 7 of 51 fits returned v ≈ 1e-4 with the training ratio 0.03 above κ ("active" but
#: slack); the search from 0 takes v = 0 where its solve there holds the constraint
NEAR_ZERO = 0.5
#: v this close (relative to v_max) to an end of [0, v_max] is taken as that end
END_SNAP = 1e-6


def joint_step(prob, maj, state, v, eps, g_tol, v_max, score):
    """One majorization step's Problem 3 from multiplier ``v`` (m = 1) with the duals in
    ``state`` (updated in place). ``score(v, res) -> (upper, lower, grad)`` is Algorithm 2's
    evaluation of an inner solution. Returns (a :class:`CPResult` whose cuts are the rounds'
    solutions, the last one settled, or None when ``MAX_ROUNDS`` did not settle it or a
    polish failed or the step settled at a near-zero v (then 0); the last multiplier)."""
    X = state.rows(prob.X)
    lam, s = prob.lam, prob.s
    c0 = (2.0 / lam) * np.r_[maj.pos[0], maj.neg[0]]
    c1 = (2.0 / lam) * np.r_[maj.pos[1], maj.neg[1]]
    # the linear term of v aimed at γ − AIM·g_tol
    q0 = (4.0 / lam) * (maj.K[1] - prob.gamma[0] + AIM * g_tol)
    target = (4.0 / lam) * GAP_SHARE * eps
    n = X.shape[0]
    v = float(np.clip(v, 0.0, v_max))
    cuts: list[Cut] = []
    epochs = FIRST_EPOCHS
    for _ in range(MAX_ROUNDS):
        for polished in (False, True):
            if polished:
                new_v = _polish(X, state, c0, c1, q0, v, v_max, s, IPM_SHARE * target)
                if new_v is None:
                    return None, v
                v = new_v
            cap = c0 + v * c1
            u, z, _, dual, ep = dcd_solve(X, cap[:n], cap[n:], s, state, target,
                                          0 if polished else epochs)
            res = dcd_result(u, z, dual, ep, maj.pos[0] + v * maj.pos[1],
                             maj.neg[0] + v * maj.neg[1], lam, s)
            upper, lower, grad = score(np.array([v]), res)
            cuts.append(Cut(np.array([v]), upper, lower, np.asarray(grad, float), res))
            if upper - lower <= eps and _tight(cuts[-1], v_max, g_tol):
                if 0.0 < v <= NEAR_ZERO * eps / g_tol:
                    # the multiplier's term over the window is within the step's tolerance:
                    # whether the constraint binds at all is the search's to decide, from 0
                    return None, 0.0
                return CPResult(cuts[-1], len(cuts), upper, lower, cuts), v
        epochs = LATER_EPOCHS
    return None, v


def _polish(X, state, c0, c1, q0, v, v_max, s, atol):
    """The QP over the working set and v (module docstring), solved to ``POLISH_TOL`` or to
    the absolute ``atol``; sets the state's duals and costs to its solution and returns the
    new v (None when the solve failed: the state is left as it was)."""
    n, d = X.shape
    alpha = np.r_[state.alpha_pos, state.alpha_neg]
    cap = c0 + v * c1
    live = c0 + v_max * c1 > 0
    # moving v moves the margins of every row, not only of the free duals: the set holds at
    # least a share of the live sides
    W = working_set(alpha, cap, live, state.z, d, least=SET_SHARE * np.count_nonzero(live))
    if W.size == 0:
        return None
    zd, zi, zp, a = _set_rows(X.data, X.indices, X.indptr, n, s, W, alpha, state.u)
    outside = np.ones(2 * n, dtype=bool)
    outside[W] = False
    # outside the set and at its cap (a cap of 0 counts where the side's hinge is active,
    # y z < 1, as the epochs would put it at any positive cap): moves with v
    y_z = np.r_[-state.z, state.z]
    at_cap = np.where(cap > 0, alpha >= cap, y_z < 1.0)
    moving = outside & at_cap & (c1 > 0)
    coef = np.where(moving, c1, 0.0)
    coef = coef[n:] - coef[:n]  # y = +1 for the second half
    a1 = np.r_[X.T @ coef, s * coef.sum()]
    q = float(c1[moving].sum()) + q0
    try:
        res = solve_joint(zd, zi, zp, d + 1, a - v * a1, a1, q, c0[W], c1[W], v_max, alpha[W], v,
                          tol=POLISH_TOL, atol=atol)
    except np.linalg.LinAlgError:
        return None
    if not (np.isfinite(res.v) and np.all(np.isfinite(res.alpha))):
        return None
    new_v = float(res.v)
    if new_v <= END_SNAP * v_max:
        new_v = 0.0
    elif new_v >= (1.0 - END_SNAP) * v_max:
        new_v = v_max
    new_cap = c0 + new_v * c1
    alpha = np.where(moving, new_cap, np.minimum(alpha, new_cap))
    alpha[W] = np.clip(res.alpha, 0.0, new_cap[W])
    state.alpha_pos[:], state.alpha_neg[:] = alpha[:n], alpha[n:]
    state.cost_pos[:], state.cost_neg[:] = new_cap[:n], new_cap[n:]
    return new_v


def warm_joint(seed: int = 0) -> None:
    """One solve of :mod:`joint_qp` on a small set with the types the polish passes (CSR
    arrays with int32 columns and int64 row pointers), so that its compiled code is in
    numba's cache (``python -m safeclf.cli.warm``): only fits of ``POLISH_MIN_NNZ`` nonzeros
    and one constraint reach it."""
    rng = np.random.default_rng(seed)
    m, k = 40, 4
    data = rng.uniform(0.2, 1.0, m * k) * np.repeat(rng.choice([-1.0, 1.0], m), k)
    indices = np.tile(np.arange(k, dtype=np.int32), m)
    indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
    c0, c1 = rng.uniform(0.1, 1.0, m), rng.uniform(0.0, 1.0, m)
    solve_joint(data, indices, indptr, k, rng.normal(size=k), rng.normal(size=k),
                -float(c1.sum()), c0, c1, 10.0, 0.5 * c0, 1.0)

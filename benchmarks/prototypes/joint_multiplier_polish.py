"""Prototype, not part of the package or of ``make bench``: Problem 3's constraint solved
inside the working-set polish (v as one more variable) instead of by a search over v.

    .venv/bin/python benchmarks/prototypes/joint_multiplier_polish.py [K0 K]

1. Fits ramp on Adult (κ 0.8, random_state 0, the benchmark's data) with the multiplier
   search of ``mm.cutting_plane`` spied on: for each majorization step on all rows it keeps
   the majoriser, the duals' state at the step's start, the search's start, tolerances, and
   the solves and epochs the search spent.
2. Solves each captured step again from its state: K0 epochs of the package's kernel
   (``dcd.dcd_solve``) at the current v, then one polish — the free and near-kink sides
   (at most 3,000) with v as a variable, the duals at their cap outside the set moving with
   v, solved by Clarabel through CVXPY, aimed at the middle of the tight window — then K
   epochs and a polish again, until the duality gap and the window both hold.

Prints, per step, today's solves and epochs against the joint method's epochs and polishes,
with the multiplier, the constraint's value and Problem 3's objective reached. Counts, not
times (the polish here is a generic conic solve). benchmarks/NOTES.md has the figures.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ramp as R  # noqa: E402  (benchmarks/ramp.py: the benchmark's Adult rows)

from safeclf.methods.ramp import mm  # noqa: E402
from safeclf.methods.ramp.dcd import DualState, dcd_solve  # noqa: E402
from safeclf.methods.ramp.mm import inner_gap_target  # noqa: E402

BAND, WMAX = 0.3, 3000
STATE = ("alpha_pos", "alpha_neg", "cost_pos", "cost_neg", "z", "rng")


def capture(X, y, g):
    """The majorization steps on all rows of one fit, with what today's search spent."""
    steps, spent = [], {"epochs": 0, "solves": 0}
    cutting_plane, svm = mm.cutting_plane, mm.weighted_hinge_svm

    def svm_spy(*a, **kw):
        res = svm(*a, **kw)
        spent["epochs"] += res.n_iter
        spent["solves"] += 1
        return res

    def cp_spy(evaluate, m, v_max, eps, max_iter, v_start=None, g_tol=mm.G_TOL, slope=None):
        fn = evaluate.func
        env = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__),
                       strict=True))
        prob, state = env["prob"], env["state"]
        full = prob.X.shape[0] == X.shape[0]
        snap = copy.deepcopy({k: getattr(state, k) for k in STATE}) if full else None
        e0, s0 = spent["epochs"], spent["solves"]
        out = cutting_plane(evaluate, m, v_max, eps, max_iter, v_start, g_tol, slope)
        if full:
            maj = fn.__defaults__[0]
            steps.append(dict(pos=maj.pos, neg=maj.neg, K=maj.K, gamma=prob.gamma,
                              lam=prob.lam, s=prob.s, v_start=v_start, eps=eps, g_tol=g_tol,
                              snap=snap, epochs=spent["epochs"] - e0,
                              solves=spent["solves"] - s0, v=float(out.best.v[0]),
                              g=float(out.best.grad[0]), U=out.U))
        return out

    mm.cutting_plane, mm.weighted_hinge_svm = cp_spy, svm_spy
    try:
        R.run_ramp(X, y, g, 0.8)
    finally:
        mm.cutting_plane, mm.weighted_hinge_svm = cutting_plane, svm
    return steps


def joint(X, step, k0, k):
    """(epochs, polishes, v, constraint value, Problem 3's objective) of the joint method."""
    n, d = X.shape
    lam, s, gamma = step["lam"], float(step["s"]), float(step["gamma"][0])
    pos, neg, kc = step["pos"], step["neg"], step["K"]
    st = DualState(n)
    for key, val in step["snap"].items():
        setattr(st, key, copy.deepcopy(val))
    Xr = st.rows(X)
    Xt = sp.hstack([Xr, sp.csr_matrix(np.full((n, 1), s))], format="csr")  # x̃ = [x, s]
    kappa = (4.0 / lam) * (gamma - 0.5 * step["g_tol"] - kc[1])  # the window's middle
    c0p, c1p, c0n, c1n = (2 / lam) * pos[0], (2 / lam) * pos[1], (2 / lam) * neg[0], (2 / lam) * neg[1]
    v = 0.0 if step["v_start"] is None else float(np.asarray(step["v_start"])[0])
    target = 4.0 * inner_gap_target(step["eps"], step["eps"]) / lam
    epochs, polishes, epochs_now, cons = 0, 0, k0, np.nan
    for _ in range(30):
        cpos, cneg = c0p + v * c1p, c0n + v * c1n
        _, _, primal, dual, ep = dcd_solve(Xr, cpos, cneg, s, st, target, epochs_now)
        epochs += ep
        za = Xt @ st.u
        zw = 0.5 * za
        cons = kc[1] + pos[1] @ np.maximum(0, 0.5 + zw) + neg[1] @ np.maximum(0, 0.5 - zw) - gamma
        if primal - dual <= target and ((-step["g_tol"] <= cons <= 0) or (v == 0 and cons <= 0)):
            w, b = 0.5 * st.u[:d], 0.5 * s * st.u[d]
            obj = (kc[0] + pos[0] @ np.maximum(0, 0.5 + zw) + neg[0] @ np.maximum(0, 0.5 - zw)
                   + 0.5 * lam * (w @ w + (b / s) ** 2))
            return epochs, polishes, v, cons, obj
        v = _polish(Xt, st, za, v, kappa, c0p, c1p, c0n, c1n)
        polishes += 1
        epochs_now = k
    return epochs, polishes, v, cons, np.nan


def _polish(Xt, st, za, v, kappa, c0p, c1p, c0n, c1n):
    """The working set's QP in (α_W, v); the state's duals and costs set to its solution."""
    n = Xt.shape[0]
    ap, an = st.alpha_pos, st.alpha_neg
    cpos, cneg = c0p + v * c1p, c0n + v * c1n
    dp, dn = np.abs(1 + za), np.abs(1 - za)
    candp = np.flatnonzero(((dp < BAND) | ((ap > 0) & (ap < cpos))) & ((cpos > 0) | (c1p > 0)))
    candn = np.flatnonzero(((dn < BAND) | ((an > 0) & (an < cneg))) & ((cneg > 0) | (c1n > 0)))
    keep = np.argsort(np.r_[dp[candp], dn[candn]], kind="stable")[:WMAX]
    wp, wn = candp[keep[keep < candp.size]], candn[keep[keep >= candp.size] - candp.size]
    in_p, in_n = np.zeros(n, bool), np.zeros(n, bool)
    in_p[wp], in_n[wn] = True, True
    cap_p = ~in_p & (ap >= cpos - 1e-12) & (cpos > 0)  # outside the set at the cap: move with v
    cap_n = ~in_n & (an >= cneg - 1e-12) & (cneg > 0)
    fix_p, fix_n = np.where(~in_p & ~cap_p, ap, 0.0), np.where(~in_n & ~cap_n, an, 0.0)
    u0 = Xt.T @ ((fix_n - fix_p) + np.where(cap_n, c0n, 0) - np.where(cap_p, c0p, 0))
    u1 = Xt.T @ (np.where(cap_n, c1n, 0) - np.where(cap_p, c1p, 0))
    lin0 = fix_p.sum() + fix_n.sum() + c0p[cap_p].sum() + c0n[cap_n].sum()
    lin1 = c1p[cap_p].sum() + c1n[cap_n].sum()
    xp, xn, vv = cp.Variable(wp.size), cp.Variable(wn.size), cp.Variable()
    u = u0 + vv * u1 - Xt[wp].T.toarray() @ xp + Xt[wn].T.toarray() @ xn
    cp.Problem(cp.Maximize(cp.sum(xp) + cp.sum(xn) + lin0 + vv * lin1
                           - 0.5 * cp.sum_squares(u) - kappa * vv),
               [xp >= 0, xn >= 0, xp <= c0p[wp] + vv * c1p[wp], xn <= c0n[wn] + vv * c1n[wn],
                vv >= 0]).solve(solver="CLARABEL")
    v = float(vv.value)
    ap[:] = np.where(cap_p, c0p + v * c1p, np.where(in_p, 0.0, ap))
    an[:] = np.where(cap_n, c0n + v * c1n, np.where(in_n, 0.0, an))
    ap[wp] = np.clip(xp.value, 0, c0p[wp] + v * c1p[wp])
    an[wn] = np.clip(xn.value, 0, c0n[wn] + v * c1n[wn])
    st.cost_pos[:], st.cost_neg[:] = c0p + v * c1p, c0n + v * c1n
    return v


def main(argv):
    k0, k = (int(a) for a in (argv + ["16", "8"])[:2])
    X, y, g, *_ = R._adult(sparse=False)
    for i, step in enumerate(capture(X, y, g)):
        e, p, v, c, obj = joint(X, step, k0, k)
        print(f"step {i}: today {step['solves']} solves, {step['epochs']} epochs, v {step['v']:.5f}, "
              f"g {step['g']:+.5f}, U {step['U']:.6f} | joint: {e} epochs, {p} polishes, "
              f"v {v:.5f}, g {c:+.5f}, objective {obj:.6f}")


if __name__ == "__main__":
    main(sys.argv[1:])

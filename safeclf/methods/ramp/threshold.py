"""The returned rule's threshold: the deterministic classifier 1[f(x) > t] chosen on the
training scores so that it meets the constraints Problem 2 only imposes on the randomised rule.

Algorithm 1 solves Problem 2, whose constraints bind the *randomised* rule (positive with
probability σ(f(x))): its training rates are means of σ(f(x)), not of 1[f(x) > 0]. Where many
training scores lie inside the ramp's linear part (|f(x)| < ½, the usual case with a large λ)
the two rules differ, and the thresholded one can miss a constraint by far (a fairness ratio
of 0.63 against κ = 0.8). Every constraint g_j(p) = k_j + Σ_x c_jx p_x ≤ γ_j is linear in the
predictions p, so the value of 1[f(x) > t] is known for every t at once: sort the training
scores once (O(n log n)), and the prefix sums of the coefficients in that order give every
constraint and the objective at each of the n + 1 distinct rules (O(m n)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Threshold:
    """The chosen t (predict 1[f(x) > t]), the returned rule's worst violation
    max_j g_j − γ_j (≤ 0: every constraint met; −inf without constraints), its objective g₀,
    and whether t moved from 0."""

    t: float
    violation: float
    objective: float
    moved: bool


def choose(z, coef, const, gamma) -> Threshold:
    """The threshold of the deterministic rule on training scores ``z`` (n,), for the linear
    forms ``const + coef @ p`` (row 0 the objective, rows 1..m the constraints, each ≤
    ``gamma``; :class:`~safeclf.methods.ramp.mm.Problem`'s data).

    t is the rule with the smallest objective among those meeting every constraint
    (g_j ≤ γ_j exactly, so the margin ``feasibility_tol`` is not spent; ties go to the rule
    nearest the solution's own sign, t = 0, which is kept exactly when it is among them), and
    when no threshold meets them all, the one with the smallest worst violation (ties: the
    smaller objective); the caller reports that violation. A moved t is placed halfway
    between the two neighbouring distinct scores, so no training row sits on it."""
    z = np.asarray(z, dtype=float)
    n = z.shape[0]
    gamma = np.asarray(gamma, dtype=float)
    now = const + coef @ (z > 0).astype(float)
    if n == 0:
        return Threshold(0.0, -np.inf, float(now[0]), False)
    order = np.argsort(-z, kind="stable")
    zs = z[order]
    # values[:, k]: the forms with the k highest-scored rows positive, k = 0..n
    values = np.empty((coef.shape[0], n + 1))
    values[:, 0] = const
    np.cumsum(coef[:, order], axis=1, out=values[:, 1:])
    values[:, 1:] += const[:, None]
    # a rule exists only between distinct scores: k = 0, n, and where zs[k-1] > zs[k]
    ks = np.r_[0, np.flatnonzero(zs[:-1] > zs[1:]) + 1, n]
    viol = (np.max(values[1:, ks] - gamma[:, None], axis=0) if gamma.size
            else np.full(ks.size, -np.inf))
    obj = values[0, ks]
    k0 = int(np.sum(z > 0))  # the rule at t = 0 has the k0 highest scores positive
    feasible = viol <= 0.0
    if feasible.any():
        cand = np.flatnonzero(feasible)
        cand = cand[obj[cand] <= obj[cand].min() + 1e-12]
        i = cand[np.argmin(np.abs(ks[cand] - k0))]
    else:
        i = np.lexsort((obj, viol))[0]
    k = ks[i]
    if k == k0:
        return Threshold(0.0, float(viol[i]), float(now[0]), False)
    if k == 0:
        t = zs[0] + max(1.0, abs(zs[0]))
    elif k == n:
        t = zs[-1] - max(1.0, abs(zs[-1]))
    else:
        t = 0.5 * (zs[k - 1] + zs[k])
    return Threshold(float(t), float(viol[i]), float(obj[i]), True)

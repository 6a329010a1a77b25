"""Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei, 2021): which decision rules of
an ordered family can be certified on held-back rows, with family-wise error at most δ.

For each candidate rule λ and the promises P₁ … P_m it should keep, the null hypothesis H_λ is
"some P_i is violated on the population". :func:`promise_p_value` gives a p-value for one
promise from the rule's counts on the held-back rows (super-uniform under that promise's
violation, whatever the other promises do); :func:`joint_p_value` takes the largest over the
promises, which is super-uniform under H_λ (H_λ true means some P_i is violated, and the
maximum is at least that P_i's p-value). Testing the rules in a fixed order chosen without the
held-back rows and stopping at the first non-rejection (:func:`fixed_sequence`) rejects a true
null with probability ≤ δ in all (each rejection before the first true null is of a false
null; the first true null tested is rejected with probability ≤ δ); :func:`holm` is the
step-down alternative for an unordered grid. So, with probability ≥ 1 − δ over the held-back
rows, every certified rule keeps every promise on the population, and so does any one chosen
among them afterwards, by any criterion.

P-values from the counts (a :class:`~safeclf.guarantees.bounds.Bound` gives each one-sided one):

* a rate r ≤ b: ``bound.p_above(k, n, b)``; r ≥ b: ``bound.p_below(k, n, b)``;
* a ratio s_A / s_B ≥ κ or ≤ κ, or a difference s_B − s_A ≤ ε or ≥ ε (privileged minus
  protected), of two group rates (:func:`pair_test` says which test):

  - ``exact`` (with the exact binomial bound, ``clopper_pearson``, the default): an exact
    unconditional test of the two independent binomial counts (:mod:`safeclf.guarantees.pairtest`, whose
    docstring proves it valid): about half the margin of the union below;
  - ``union`` (Hoeffding's, Bentkus's and the t-test's bounds): p = inf{α : L_A(α/2) ≥
    κ · U_B(α/2)} for a ratio ≥ κ. Under the null s_A < κ s_B a rejection at α needs
    L_A > s_A or U_B < s_B (else L_A ≤ s_A < κ s_B ≤ κ U_B), each with probability ≤ α/2;
    likewise for ≤ κ with U_A and L_B, and for a difference by U_B(α/2) − L_A(α/2) ≤ ε.

Counts are conditional on the group sizes of the held-back rows, which does not change the
validity (the bound holds for every size).
"""

from __future__ import annotations

import numpy as np

from safeclf.guarantees.bounds import Bound
from safeclf.guarantees.promises import Evidence, Promise

#: Quantity kinds that compare two groups' rates (counts k, n protected; k2, n2 privileged).
GROUP_KINDS = ("ratio", "difference")


def _pair_certified(kind: str, sense: str, b: float, k, n: int, k2, n2: int, alpha,
                    bound: Bound) -> np.ndarray:
    """Whether the two groups' one-sided bounds at α/2 certify the comparison: a ratio
    s_A / s_B ≥ b by L_A ≥ b·U_B (≤ b by U_A ≤ b·L_B); a difference s_B − s_A ≤ b (privileged
    minus protected) by U_B − L_A ≤ b (≥ b by L_B − U_A ≥ b). Under the null a rejection
    needs one of the two bounds to miss its rate, each with probability ≤ α/2."""
    a = alpha / 2
    low, up = (lambda kk, nn: np.asarray(bound.lower(kk, nn, a))), \
        (lambda kk, nn: np.asarray(bound.upper(kk, nn, a)))
    if kind == "ratio":
        return low(k, n) >= b * up(k2, n2) if sense == ">=" else up(k, n) <= b * low(k2, n2)
    return up(k2, n2) - low(k, n) <= b if sense == "<=" else low(k2, n2) - up(k, n) >= b


def pair_test(bound: Bound) -> str:
    """The test of a comparison of two groups' rates with ``bound``'s p-values: ``exact``
    (:mod:`safeclf.guarantees.pairtest`, an exact unconditional test) for the exact binomial bound,
    ``union`` (two one-sided bounds at α/2, :func:`_pair_certified`) for the others, whose
    own form (Hoeffding's, the t-test's) the comparison keeps."""
    return "exact" if bound.name == "clopper_pearson" else "union"


def pair_p_values(kind: str, k, n: int, k2, n2: int, sense: str, b: float,
                  bound: Bound, test: str | None = None, predict: bool = False,
                  alpha: float | None = None) -> np.ndarray:
    """A p-value for "the comparison of the two groups is violated", for arrays of counts
    ``k`` (protected) and ``k2`` (privileged) at sizes ``n``, ``n2``: the test
    :func:`pair_test` names for ``bound`` (or ``test``). ``predict``: a normal approximation
    of the exact test, for ranking rules and predicting pass probabilities only (never for a
    certificate). ``alpha``: the exact test's sup is refined only as far as deciding p ≤ α
    needs (every value is still a valid p-value, :func:`safeclf.guarantees.pairtest.p_values`)."""
    k, k2 = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(k2, dtype=float))
    if not n or not n2:
        return np.ones(k.shape)
    if (test or pair_test(bound)) == "exact":
        from safeclf.guarantees import pairtest

        ka, na, kb, nb, kappa, c = pairtest.canonical(kind, sense, b, k, int(round(n)), k2,
                                                      int(round(n2)))
        if predict:
            return pairtest.approx_p_values(ka, na, kb, nb, kappa, c)
        return pairtest.p_values(ka, na, kb, nb, kappa, c, alpha=alpha)
    return union_p_values(kind, k, n, k2, n2, sense, b, bound)


def union_p_values(kind: str, k, n: int, k2, n2: int, sense: str, b: float,
                   bound: Bound) -> np.ndarray:
    """inf{α: the two halves' bounds certify the comparison} (:func:`_pair_certified`), for
    arrays of counts ``k`` (protected) and ``k2`` (privileged) at sizes ``n``, ``n2``: a
    bisection on α (the certificate is monotone in α), run on all counts at once."""
    k, k2 = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(k2, dtype=float))
    if not n or not n2:
        return np.ones(k.shape)

    def passes(alpha):
        return _pair_certified(kind, sense, b, k, n, k2, n2, alpha, bound)

    ok = passes(np.ones(k.shape))
    lo, hi = np.zeros(k.shape), np.ones(k.shape)  # passes(hi) where ok
    for _ in range(32):  # to 2⁻³² in α
        mid = (lo + hi) / 2
        p = passes(mid)
        hi, lo = np.where(p, mid, hi), np.where(p, lo, mid)
    return np.where(ok, hi, 1.0)


def rejects(p: Promise, k, n: int, k2, n2, alpha: float, bound: Bound,
            predict: bool = False) -> np.ndarray:
    """Whether the p-value of ``p`` at counts ``k`` (arrays) is ≤ ``alpha``; for the union
    test without computing it (whether the two halves' bounds at α/2 certify it: the
    p-value is the infimum of such α, and the certificate is monotone in α)."""
    if p.quantity.kind in GROUP_KINDS and pair_test(bound) == "union":
        k, k2 = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(k2, dtype=float))
        if not n or not n2:
            return np.zeros(k.shape, bool)
        return _pair_certified(p.quantity.kind, p.sense, p.bound, k, n, k2, n2, alpha, bound)
    return p_values(p, k, n, k2, n2, bound, predict=predict, alpha=alpha) <= alpha


def p_values(p: Promise, k, n: int, k2, n2, bound: Bound, predict: bool = False,
             alpha: float | None = None) -> np.ndarray:
    """:func:`promise_p_value` for arrays of counts (one entry per rule or per draw);
    ``predict`` and ``alpha``: see :func:`pair_p_values`."""
    kind = p.quantity.kind
    if kind == "rate":
        k = np.asarray(k, dtype=float)
        if not n:
            return np.ones(k.shape)
        f = bound.p_above if p.sense == "<=" else bound.p_below
        return np.asarray(f(k, n, p.bound), dtype=float) * np.ones(k.shape)
    if kind in GROUP_KINDS:
        return pair_p_values(kind, k, n, k2, n2, p.sense, p.bound, bound, predict=predict,
                             alpha=alpha)
    raise ValueError(f"promise {p.name}: a {kind} quantity cannot be certified from counts")


def promise_p_value(p: Promise, ev: Evidence, bound: Bound) -> float:
    """A p-value for "``p`` is violated on the population" from its counts ``ev``."""
    if p.quantity.kind in GROUP_KINDS and (ev.k2 is None or ev.n2 is None):
        return 1.0
    return float(p_values(p, ev.k, ev.n, ev.k2, ev.n2 or 0, bound))


def joint_p_value(promises, evidence, bound: Bound) -> float:
    """The largest of the promises' p-values (valid for "some promise is violated")."""
    return max(promise_p_value(p, ev, bound) for p, ev in zip(promises, evidence, strict=True))


def fixed_sequence(p_values, delta: float) -> int:
    """How many leading hypotheses fixed-sequence testing rejects at level ``delta``."""
    for i, p in enumerate(p_values):
        if not p <= delta:
            return i
    return len(p_values)


def holm(p_values, delta: float) -> np.ndarray:
    """The hypotheses Holm's step-down procedure rejects at level ``delta`` (boolean mask)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    rejected = np.zeros(p.size, bool)
    for j, i in enumerate(order):
        if not p[i] <= delta / (p.size - j):
            break
        rejected[i] = True
    return rejected

"""The tests Learn-then-Test uses to compare two groups' rates (safeclf/guarantees/ltt.py,
safeclf/guarantees/pairtest.py): the exact unconditional test is valid, checked by summing the binomial
law exactly over every pair of counts (no simulation), at least as powerful as the union of two
one-sided bounds over a grid of alternatives, and its decisions monotone in the counts."""

import numpy as np
import pytest
from scipy.stats import binom

from safeclf.guarantees import ltt, pairtest
from safeclf.guarantees.bounds import BOUNDS

CP = BOUNDS["clopper_pearson"]
#: (kind, sense, bound) of a comparison: ratio ≥ κ and ≤ u (a band's two sides), a difference
#: s_B − s_A ≤ ε and ≥ ε.
COMPARISONS = [("ratio", ">=", 0.8), ("ratio", "<=", 1.25), ("difference", "<=", 0.1),
               ("difference", ">=", -0.1)]


def _lattice(n, n2):
    return np.meshgrid(np.arange(n + 1), np.arange(n2 + 1), indexing="ij")


def _law(n, n2, s, s2):
    """P(k, k2) of independent binomial counts on the lattice."""
    return np.outer(binom.pmf(np.arange(n + 1), n, s), binom.pmf(np.arange(n2 + 1), n2, s2))


def _on_boundary(kind, sense, b, s2):
    """The protected group's rate s at which the comparison holds with equality, or None."""
    s = b * s2 if kind == "ratio" else s2 - b
    return s if 0.0 <= s <= 1.0 else None


@pytest.mark.parametrize("kind,sense,b", COMPARISONS)
@pytest.mark.parametrize("n,n2", [(12, 20), (30, 18), (40, 40)])
def test_exact_pair_test_is_super_uniform_on_the_null_boundary(kind, sense, b, n, n2):
    """P(p ≤ α) ≤ α at every point of a grid on the null boundary (the null's hardest
    points, the tail being monotone), summed exactly over all (n+1)(n2+1) count pairs; the
    p-value refined for α (what fixed-sequence testing uses) and refined fully."""
    k, k2 = _lattice(n, n2)
    checked = 0
    for alpha in (0.01, 0.05, 0.1):
        for refine in (alpha, None):
            p = ltt.pair_p_values(kind, k, n, k2, n2, sense, b, CP, test="exact", alpha=refine)
            for s2 in np.linspace(0.02, 0.98, 13):
                s = _on_boundary(kind, sense, b, s2)
                if s is None:
                    continue
                size = float(np.sum(_law(n, n2, s, s2)[p <= alpha]))
                assert size <= alpha + 1e-12, (alpha, s, s2, size)
                checked += 1
    assert checked > 30


@pytest.mark.parametrize("kind,sense,b", COMPARISONS)
def test_exact_pair_test_is_at_least_as_powerful_as_the_union(kind, sense, b):
    """Over a grid of alternatives (sizes, the privileged rate, the distance from the
    bound), the exact test rejects at least as often as the union of two one-sided
    Clopper–Pearson bounds at α/2, and clearly more often on average."""
    alpha, gains = 0.05, []
    for n, n2 in [(30, 60), (60, 40), (100, 200)]:
        k, k2 = _lattice(n, n2)
        exact = ltt.pair_p_values(kind, k, n, k2, n2, sense, b, CP, test="exact", alpha=alpha)
        union = ltt.pair_p_values(kind, k, n, k2, n2, sense, b, CP, test="union")
        for s2 in (0.2, 0.4, 0.6):
            for shift in (0.05, 0.1, 0.2):
                # a population on the promised side of the bound, by ``shift`` in rate
                s = _on_boundary(kind, sense, b, s2)
                if s is None:
                    continue
                s = s + shift if sense == ">=" else s - shift
                if kind == "difference":
                    s = s2 - b + (shift if sense == "<=" else -shift)
                if not 0.0 <= s <= 1.0:
                    continue
                law = _law(n, n2, s, s2)
                pe, pu = float(law[exact <= alpha].sum()), float(law[union <= alpha].sum())
                assert pe >= pu - 1e-12, (n, n2, s, s2, pe, pu)
                gains.append(pe - pu)
    assert len(gains) >= 12 and np.mean(gains) > 0.05


@pytest.mark.parametrize("kind,sense,b", COMPARISONS)
def test_exact_pair_test_decisions_are_monotone_in_the_counts(kind, sense, b):
    """More of the group the promise needs high (fewer of the other) never turns a
    certification into a failure, as for the union test."""
    n, n2 = 25, 35
    k, k2 = _lattice(n, n2)
    for test in ("exact", "union"):
        ok = ltt.pair_p_values(kind, k, n, k2, n2, sense, b, CP, test=test, alpha=0.05) <= 0.05
        up = (kind == "ratio") == (sense == ">=")  # the protected group must be high
        ok = ok if up else ok[::-1, ::-1]
        assert not np.any(ok[:-1, :] & ~ok[1:, :]), test  # rising in the protected count
        assert not np.any(~ok[:, :-1] & ok[:, 1:]), test  # falling in the privileged count
        assert ok.any() and not ok.all()


def test_the_exact_test_is_the_default_only_for_the_exact_bound():
    assert ltt.pair_test(CP) == "exact"
    for name in ("hoeffding", "bentkus", "ttest"):
        assert ltt.pair_test(BOUNDS[name]) == "union"


def test_refining_for_alpha_keeps_the_decision_and_bounds_the_p_value():
    """The p-value refined only as far as α needs decides p ≤ α as the fully refined one
    does (within the refinement's tolerance) and is never below it."""
    rng = np.random.default_rng(3)
    n, n2 = 100, 200
    k, k2 = rng.binomial(n, 0.35, 200), rng.binomial(n2, 0.4, 200)
    full = pairtest.p_values(k, n, k2, n2, 0.8)
    fast = pairtest.p_values(k, n, k2, n2, 0.8, alpha=0.05)
    assert np.all(fast >= full - 1e-12)
    clear = (full < 0.05 / (1 + 2 * pairtest.RTOL)) | (full > 0.05 * (1 + pairtest.RTOL))
    assert np.array_equal((fast <= 0.05)[clear], (full <= 0.05)[clear])


def test_the_envelope_bounds_the_tail_on_the_null_segment():
    """The p-value (less γ) is at least the tail at every point of the null boundary inside
    the confidence set: the sup is bounded from above, not approximated by a grid."""
    n, n2, kappa = 60, 90, 0.8
    k, k2 = 30, 40
    p = float(pairtest.p_values(k, n, k2, n2, kappa)) - pairtest.GAMMA
    d = k / n - kappa * k2 / n2
    cp = BOUNDS["clopper_pearson"]
    u_a = float(cp.upper(k, n, pairtest.GAMMA / 2))
    l_b = float(cp.lower(k2, n2, pairtest.GAMMA / 2))
    s2 = np.linspace(l_b, min(1.0, u_a / kappa), 2001)
    t = pairtest.tail(np.full(1, d), n, n2, kappa, np.minimum(u_a, kappa * s2)[None, :],
                      s2[None, :])
    exact = np.array([float(np.sum(_law(n, n2, a, b)[(_lattice(n, n2)[0] / n - kappa
                                                       * _lattice(n, n2)[1] / n2) >= d - 1e-12]))
                      for a, b in zip(np.minimum(u_a, kappa * s2)[::100], s2[::100])])
    assert np.allclose(t[0, ::100], exact, atol=1e-9)  # the tail is the binomial sum
    assert p >= t.max() - 1e-12
    assert p <= t.max() * (1 + 2 * pairtest.RTOL) + 1e-9  # and close to the sup


def _exact_tail(d, n, n2, kappa, a, b):
    """P(k/n − κ k2/n2 ≥ d) summed over the whole lattice with scipy's binomial law."""
    k, k2 = _lattice(n, n2)
    return float(np.sum(_law(n, n2, a, b)[k / n - kappa * k2 / n2 >= d - 1e-12]))


@pytest.mark.parametrize("n,n2", [(3000, 800), (500, 5000)])
def test_the_tail_on_truncated_windows_is_an_upper_bound_tight_to_1e_9(n, n2):
    """At sizes where the windows cut the supports, on rows whose laws differ (the window's
    width is the widest law's, so a narrow law's mode can sit at the window's edge), rates of
    exactly 0 and 1 and rates near them, and statistics across the range: each tail is at
    least the exact binomial sum and within 1e-9 of it."""
    rng = np.random.default_rng(5)
    pa = np.r_[0.0, 1.0, 1e-4, 1 - 1e-4, 0.5, rng.uniform(0, 1, 7)]
    pb = np.r_[0.3, 1.0, 0.0, 1e-5, 0.999, rng.uniform(0, 1, 7)]
    kappa = 0.8
    d = pa - kappa * pb + rng.uniform(-0.05, 0.05, pa.size)
    t = pairtest.tail(d, n, n2, kappa, pa[:, None], pb[:, None])[:, 0]
    exact = np.array([_exact_tail(x, n, n2, kappa, a, b) for x, a, b in zip(d, pa, pb)])
    assert np.all(t >= exact - 1e-12), t - exact
    assert np.all(t <= exact + 1e-9), t - exact
    assert 0.01 < np.mean((exact > 1e-6) & (exact < 1 - 1e-6))  # not only the trivial 0 and 1


@pytest.mark.parametrize("kind,sense,b", COMPARISONS)
def test_shortfall_limit_inverts_the_test_used(kind, sense, b):
    """A no-solution's certified limit is on the promised side of the bound exactly when the
    exact test certifies the promise, and the test certifies at that limit."""
    from safeclf.guarantees import shortfall
    from safeclf.guarantees.promises import Evidence, Promise, Quantity

    q = Quantity(kind=kind, event="predicted_positive", groups="groups", privileged="M")
    p = Promise(name="x", quantity=q, sense=sense, bound=b, kind="declared", statement="x",
                source="test")
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(12):
        k, k2 = int(rng.integers(10, 70)), int(rng.integers(20, 120))
        ev = Evidence(k, 80, k2, 150)
        limit = shortfall.certified_limit(p, ev, 0.05, CP)
        certified = bool(ltt.pair_p_values(kind, k, 80, k2, 150, sense, b, CP, alpha=0.05)
                         <= 0.05)
        kept = limit >= b if sense == ">=" else limit <= b
        assert kept == certified, (k, k2, limit)
        seen.add(certified)
        if 1e-5 < abs(limit) < 1e5:
            assert ltt.pair_p_values(kind, k, 80, k2, 150, sense, limit, CP, alpha=0.05) <= 0.05
    assert seen == {True, False}

"""Coverage of every bound over its domain, computed exactly from the binomial law (no
simulation noise): n from 10 to 10⁵, rates from 0 to 1 with the edges, several δ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from safeclf.guarantees import bounds

NS = [10, 11, 25, 60, 150, 400, 1_000, 3_000, 10_000, 30_000, 100_000]
DELTAS = [0.01, 0.05, 0.2]
RATES = np.unique(np.concatenate([np.linspace(0, 1, 201), [1e-5, 1e-4, 1e-3, 0.999, 0.9999]]))
EXACT = [b for b in bounds.BOUNDS.values() if not b.approximate]


def _coverage_of_upper(bound, n, delta):
    """P(p ≤ U(K, n, δ)) for K ~ Bin(n, p), at every p of RATES: U increases with k, so the
    covering counts are k ≥ k*(p), and the coverage is a binomial tail."""
    k = np.arange(n + 1)
    U = np.asarray(bound.upper(k, n, delta))
    assert np.all(np.diff(U) >= -1e-12), "U must increase with the count"
    first = np.searchsorted(U, RATES - 1e-12, side="left")  # first k with U[k] ≥ p
    return binom.sf(first - 1, n, RATES)


@pytest.mark.parametrize("bound", EXACT, ids=lambda b: b.name)
@pytest.mark.parametrize("n", NS)
def test_upper_bound_covers_every_rate(bound, n):
    for delta in DELTAS:
        cover = _coverage_of_upper(bound, n, delta)
        worst = int(np.argmin(cover))
        assert cover[worst] >= 1 - delta - 1e-9, (bound.name, n, delta, RATES[worst], cover[worst])


@pytest.mark.parametrize("bound", EXACT, ids=lambda b: b.name)
@pytest.mark.parametrize("n", [10, 150, 3_000, 100_000])
def test_lower_bound_covers_every_rate(bound, n):
    """L(k) = 1 − U(n − k): the covering counts are k ≤ k*(p)."""
    k = np.arange(n + 1)
    for delta in DELTAS:
        L = np.asarray(bound.lower(k, n, delta))
        assert np.all(np.diff(L) >= -1e-12)
        last = np.searchsorted(L, RATES + 1e-12, side="right") - 1  # last k with L[k] ≤ p
        cover = binom.cdf(last, n, RATES)
        assert cover.min() >= 1 - delta - 1e-9, (bound.name, n, delta, RATES[np.argmin(cover)])


@pytest.mark.parametrize("bound", list(bounds.BOUNDS.values()), ids=lambda b: b.name)
@pytest.mark.parametrize("n", [10, 400, 30_000])
def test_p_value_is_dual_to_the_bound(bound, n):
    """U(k, n, α) ≤ b exactly when p_above(k, n, b) ≤ α (away from ties at the boundary)."""
    rng = np.random.default_rng(n)
    for _ in range(200):
        k, alpha = int(rng.integers(0, n + 1)), float(rng.uniform(0.005, 0.5))
        U = bound.upper(k, n, alpha)
        for b in (U - 1e-6, U + 1e-6):
            if 0 < b < 1:
                assert (U <= b) == (bound.p_above(k, n, b) <= alpha), (k, n, alpha, b)


@pytest.mark.parametrize("bound", EXACT, ids=lambda b: b.name)
@pytest.mark.parametrize("n", [10, 150, 10_000])
def test_p_values_are_super_uniform_at_the_null(bound, n):
    """At a true rate equal to b, P(p_above ≤ α) ≤ α for every α (exactly computed)."""
    k = np.arange(n + 1)
    for b in (0.001, 0.05, 0.3, 0.5, 0.9):
        p = np.asarray(bound.p_above(k, n, b))
        for alpha in (0.001, 0.01, 0.05, 0.1, 0.5):
            assert binom.pmf(k, n, b)[p <= alpha].sum() <= alpha + 1e-9, (n, b, alpha)


def test_the_t_test_bound_is_labelled_approximate_and_is_so():
    """At small n and a rate near 0, k = 0 is likely and the t bound is then 0: coverage far
    below 1 − δ. The exact bounds are not approximate."""
    ttest = bounds.get("ttest")
    assert ttest.approximate and not any(b.approximate for b in EXACT)
    cover = _coverage_of_upper(ttest, 10, 0.05)
    assert cover[RATES == 0.01].item() < 0.2


def test_hoeffding_is_looser_and_clopper_pearson_tightest_for_counts():
    k = np.arange(0, 1001, 50)
    cp, hoeff, bent = (np.asarray(bounds.get(n).upper(k, 1000, 0.05))
                       for n in ("clopper_pearson", "hoeffding", "bentkus"))
    assert np.all(cp <= hoeff + 1e-12) and np.all(cp <= bent + 1e-12)


def test_unknown_bound_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown bound 'wilson'; known: clopper_pearson"):
        bounds.get("wilson")

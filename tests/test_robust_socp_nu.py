"""The ν function (Ben-Tal et al. 2011, eqs. 12–14, section 2.1.1)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from safeclf.methods.robust_socp.nu import nu


def h_direct(t, mu, s):
    """log of eq. (12), written out independently of the module (t scalar or array)."""
    t = np.asarray(t, float)
    out = np.empty_like(t)
    for sign, mask in ((1.0, t >= 0), (-1.0, t < 0)):
        m, tt = sign * mu, sign * t[mask]
        den = 1 - 2 * m + s * s
        g = ((1 - m) ** 2 * np.exp(tt * (m - s * s) / (1 - m)) + (s * s - m * m) * np.exp(tt)) / den
        out[mask] = np.log(g)
    return out


def random_triples(k, seed):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.02, 0.98, k)
    a, b = (rng.uniform(-1, 1, (2, k)) * s)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    hi[: k // 3] = lo[: k // 3]  # exact means too
    return lo, hi, s


# |t| ≤ 300 keeps e^t finite in the direct formula; the maximisers here lie below t ≈ 20
T = np.concatenate([-np.logspace(-5, 2.45, 1500)[::-1], np.logspace(-5, 2.45, 1500)])


def worst_gap(lo, hi, s, k):
    """max over the t-grid and 41 means in [lo, hi] of h(t) − max(lo t, hi t) − k² t²/2,
    relative to 1 + t² (the scale of the right-hand side)."""
    worst = -np.inf
    for mu in np.linspace(lo, hi, 41):
        gap = h_direct(T, mu, s) - np.maximum(lo * T, hi * T) - k * k * T * T / 2
        worst = max(worst, float(np.max(gap / (1 + T * T))))
    return worst


@pytest.mark.parametrize("sigma, expected", [
    (0.02, 0.253), (0.05, 0.289), (0.1, 0.329), (0.2, 0.394), (1 / np.sqrt(3), 0.636), (1.0, 1.0),
])
def test_independent_values_at_zero_mean(sigma, expected):
    # the independent figures (3 decimals), ν = 1 at µ̂ = 0, σ̂ = 1 among them
    assert abs(nu(0.0, 0.0, sigma) - expected) < 5e-4


def test_claim_bounds():
    lo, hi, s = random_triples(3000, 0)
    v = nu(lo, hi, s)
    mu_min = np.minimum(np.abs(lo), np.abs(hi))
    assert np.all(v <= 1.0)
    assert np.all(v >= np.sqrt(np.maximum(s * s - mu_min**2, 0)) - 1e-12)


def test_defining_inequality_and_minimality():
    lo, hi, s = random_triples(12, 1)
    v = nu(lo, hi, s)
    for i in range(lo.size):
        assert worst_gap(lo[i], hi[i], s[i], v[i]) <= 1e-10, i
        assert worst_gap(lo[i], hi[i], s[i], v[i] - 1e-4) > 0, i


def _reference(lo, hi, s):
    """Brute force: a dense (µ̂, log t) grid over the whole mean interval, polished by
    Nelder–Mead, on both sides of t = 0."""
    best = 0.0
    for a, b in ((lo, hi), (-hi, -lo)):  # t > 0, and t < 0 as t > 0 of −X̂
        def F(x, a=a, b=b):
            mu, lt = np.clip(x[0], a, b), np.clip(x[1], -9, 5.7)
            t = np.exp(lt)
            return 2 * (h_direct(np.array([t]), mu, s)[0] - b * t) / t**2
        mus = np.linspace(a, b, 61)
        lts = np.linspace(-6, 5.7, 400)
        t = np.exp(lts)
        vals = np.array([2 * (h_direct(t, m, s) - b * t) / t**2 for m in mus])
        i, j = np.unravel_index(np.argmax(vals), vals.shape)
        r = minimize(lambda x: -F(x), [mus[i], lts[j]], method="Nelder-Mead",
                     options={"xatol": 1e-10, "fatol": 1e-15, "maxiter": 4000})
        best = max(best, vals.max(), -r.fun, s * s - b * b)
    return np.sqrt(min(best, 1.0))


def test_accuracy_against_brute_force():
    lo, hi, s = random_triples(9, 2)
    v = nu(lo, hi, s)
    for i in range(lo.size):
        assert abs(v[i] - _reference(lo[i], hi[i], s[i])) < 1e-6, i


def test_vectorised_shapes_and_duplicates():
    lo, hi, s = random_triples(50, 3)
    grid = nu(lo[:, None], hi[:, None], np.broadcast_to(s[:, None], (50, 4)))
    assert grid.shape == (50, 4)
    assert np.allclose(grid, nu(lo, hi, s)[:, None], rtol=0, atol=0)
    assert nu(0.1, 0.1, 0.5).shape == ()


def test_rejects_inconsistent_triples():
    with pytest.raises(ValueError, match="entry 1"):
        nu([0.0, 0.3], [0.1, 0.2], [0.5, 0.5])  # µ̂⁻ > µ̂⁺
    with pytest.raises(ValueError):
        nu(0.6, 0.6, 0.5)  # |µ̂| > σ̂

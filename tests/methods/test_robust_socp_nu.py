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
    # the issue's independent figures (3 decimals), ν = 1 at µ̂ = 0, σ̂ = 1 among them
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


# -- property: ν is never below the definition (14), and tight ---------------------------------
#
# An independent brute force of (14): ν² = sup over µ̂ ∈ [µ̂⁻, µ̂⁺] and t ≠ 0 of
# 2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t². g (eq. 12) is written, for each sign of t, as the paper's
# two-point law (atoms and masses), and log g − µ̂t = log1p(Σ mass · expm1(t(atom − µ̂))) for
# |t| ≤ 50 (log-sum-exp above), so small t keep their accuracy. A coarse (µ̂, log|t|) grid,
# then five zooms around each of its three best nodes; the limit t → 0⁺ (σ̂² − (µ̂⁺)², the
# Claim) is added. Every value is attained, so the brute force is a lower bound of the truth.

def _two_point(mu, s, sign):
    """Atoms and masses of the extremal law of (12) for t of the given sign (σ̂² − µ̂² is
    written (σ̂ − µ̂)(σ̂ + µ̂): exact as σ̂ → |µ̂|)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # no variance: masked by the caller
        if sign > 0:
            den = 1 - 2 * mu + s * s
            return ((mu - s * s) / (1 - mu), 1.0), ((1 - mu) ** 2 / den, (s - mu) * (s + mu) / den)
        den = 1 + 2 * mu + s * s
        return ((mu + s * s) / (1 + mu), -1.0), ((1 + mu) ** 2 / den, (s - mu) * (s + mu) / den)


def _k2(mu, tau, lo, hi, s, sign):
    """2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t² at t = sign · tau, tau > 0 (elementwise)."""
    t = sign * tau
    var = np.maximum((s - mu) * (s + mu), 0.0)
    (x1, x2), (p1, p2) = _two_point(mu, s, sign)
    p1, p2, x1 = np.where(var > 0, p1, 1.0), np.where(var > 0, p2, 0.0), np.where(var > 0, x1, mu)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        near = np.log1p(p1 * np.expm1(t * (x1 - mu)) + p2 * np.expm1(t * (x2 - mu)))
        far = np.logaddexp(np.log(p1) + t * x1, np.log(p2) + t * x2) - mu * t
    centred = np.where(tau <= 50, near, far)  # log g − µ̂t
    return 2 * (centred + mu * t - np.maximum(lo * t, hi * t)) / (t * t)


# fractions of [µ̂⁻, µ̂⁺]: uniform, and geometric towards both ends (where σ̂² − µ̂² → 0 when a
# bound touches ±σ̂ and the maximiser can sit very close to it)
_F = np.unique(np.concatenate([np.linspace(0, 1, 41), 0.5 ** np.arange(2, 22),
                               1 - 0.5 ** np.arange(2, 22)]))
_LT = np.linspace(np.log(1e-4), np.log(1e6), 101)


def _zoom(lo, hi, s, sign, cf, cl, wf, wl, best, rounds=6, n=9):
    """Refine around (fraction cf, log t cl) on n × n grids shrinking fourfold each round."""
    k = lo.size
    g = np.linspace(-1, 1, n)
    L, Hh, S = lo[:, None, None], hi[:, None, None], s[:, None, None]
    for _ in range(rounds):
        ff = np.clip(cf[:, None, None] + wf[:, None, None] * g[:, None], 0, 1)
        ll = cl[:, None, None] + wl[:, None, None] * g[None, :]
        ff, ll = np.broadcast_arrays(ff, ll)
        V = _k2(L + (Hh - L) * ff, np.exp(ll), L, Hh, S, sign).reshape(k, -1)
        i = np.argmax(V, axis=1)
        best = np.maximum(best, V[np.arange(k), i])
        cf, cl = ff.reshape(k, -1)[np.arange(k), i], ll.reshape(k, -1)[np.arange(k), i]
        wf, wl = wf / 4, wl / 4
    return best


def brute_force_nu2(lo, hi, s, chunk=500):
    """ν² by brute force for 1-D arrays of triples (slow)."""
    if lo.size > chunk:
        return np.concatenate([brute_force_nu2(lo[i:i + chunk], hi[i:i + chunk], s[i:i + chunk])
                               for i in range(0, lo.size, chunk)])
    k = lo.size
    best = np.maximum(s * s - hi * hi, s * s - lo * lo)  # t → 0±
    F, LT = np.meshgrid(_F, _LT, indexing="ij")
    L, Hh, S = lo[:, None, None], hi[:, None, None], s[:, None, None]
    for sign in (1.0, -1.0):
        V = _k2(L + (Hh - L) * F, np.exp(LT), L, Hh, S, sign).reshape(k, -1)
        best = np.maximum(best, V.max(axis=1))
        for i in np.argsort(V, axis=1)[:, -3:].T:  # zoom around the three best nodes
            fi, li = np.unravel_index(i, F.shape)
            wf = np.maximum.reduce([_F[np.minimum(fi + 1, _F.size - 1)] - _F[fi],
                                    _F[fi] - _F[np.maximum(fi - 1, 0)], np.full(k, 1 / 40)])
            best = _zoom(lo, hi, s, sign, _F[fi], _LT[li], wf,
                         np.full(k, _LT[1] - _LT[0]), best)
    return np.minimum(best, 1.0)


def edge_triples():
    """The edges of the domain: µ̂± = ±σ̂, σ̂ → |µ̂|, σ̂ = 1, µ̂⁻ = µ̂⁺, tiny σ̂."""
    rows = []
    for s in (1e-4, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999999, 1.0):
        for u in np.linspace(-1, 1, 9):
            m = u * s
            rows += [(-s, s, s), (m, s, s), (-s, m, s), (m, m, s), (s, s, s), (-s, -s, s)]
            for gap in (1e-12, 1e-8, 1e-4):  # σ̂ just above |µ̂|
                sg = min(abs(m) + gap, 1.0)
                rows += [(m, m, sg), (min(m, 0.3 * m), max(m, 0.3 * m), sg)]
    lo, hi, s = np.array(rows).T
    return lo, np.maximum(lo, hi), s


ISSUE_CASES = [((-0.3, 0.3, 0.3), 0.3197), ((-0.752667, 0.760870, 0.796159), 0.26623)]


@pytest.mark.parametrize("triple, needed", ISSUE_CASES)
def test_issue_cases_reach_the_definition(triple, needed):
    # the values (14) needs at the issue's triples; the brute force finds them independently
    assert np.sqrt(brute_force_nu2(*(np.array([v]) for v in triple)))[0] > needed - 1e-4
    assert nu(*triple) >= needed - 1e-4


# Observed on these sets: nu² − brute force in [−7e-14, 2.2e-8] (the upper end is the brute
# force falling short: polishing its point by Nelder–Mead reaches nu to 5e-15), so the floor is
# float rounding and the slack the brute force's own resolution; both are on ν², not ν.
UNDER_TOL, OVER_SLACK = 1e-12, 1e-7


@pytest.mark.parametrize("which", ["random", "edges"])
def test_nu_never_below_the_definition_and_tight(which):
    if which == "random":
        rng = np.random.default_rng(11)
        k = 3000
        s = rng.uniform(0, 1, k) ** rng.choice([0.3, 1, 3], k)  # σ̂ near 0, spread, near 1
        a, b = rng.uniform(-1, 1, (2, k)) * s
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        # a third of the triples touch ±σ̂ or have an exact mean
        lo[:300], hi[300:600], hi[600:900] = -s[:300], s[300:600], lo[600:900]
    else:
        lo, hi, s = edge_triples()
    ref = brute_force_nu2(lo, hi, s)
    got = nu(lo, hi, s) ** 2
    diff = got - ref
    assert diff.min() >= -UNDER_TOL, (diff.min(), lo[diff.argmin()], hi[diff.argmin()],
                                      s[diff.argmin()])
    assert diff.max() <= OVER_SLACK, (diff.max(), lo[diff.argmax()], hi[diff.argmax()],
                                      s[diff.argmax()])

"""The ν function of Ben-Tal et al. (2011), eqs. (12)–(14) and section 2.1.1.

All arguments are *normalised* (X̂ = (X − c)/s ∈ [−1, 1]): mean bounds µ̂⁻ ≤ µ̂⁺ and a bound σ̂
on the root second moment, with |µ̂±| ≤ σ̂ ≤ 1.

g (eq. 12) is the largest moment generating function E exp(t X̂) of a variable on [−1, 1] with
mean µ̂ and second moment σ̂² (attained by a two-point distribution), h = log g (eq. 13) and

    ν(µ̂⁻, µ̂⁺, σ̂) = min{k ≥ 0 : h_µ̂(t) ≤ max(µ̂⁻t, µ̂⁺t) + k²t²/2  ∀t, ∀µ̂ ∈ [µ̂⁻, µ̂⁺]}   (14)

The paper finds ν by a binary search on k with a 1-D minimisation inside. Here the same
condition is solved for k directly: for t ≠ 0 it reads k² ≥ 2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t², so

    ν² = max(0, sup over t ≠ 0 and µ̂ ∈ [µ̂⁻, µ̂⁺] of 2(h_µ̂(t) − max(µ̂⁻t, µ̂⁺t))/t²),

the smallest k the binary search converges to, without its bisection error. The side t < 0
is the side t > 0 of the mirrored variable −X̂ (bounds −µ̂⁺, −µ̂⁻), and the limit t → 0⁺ at
µ̂ = µ̂⁺ is σ̂² − (µ̂⁺)², the Claim's lower bound. For a fixed µ̂ the supremum over t is found
by a coarse grid in log t and safeguarded Newton steps on its stationarity condition; over an
interval of means, by false position on the envelope derivative. Everything is vectorised
over the triples, and identical triples are solved once. Accuracy ~1e-9 (tests: 1e-6).
"""

from __future__ import annotations

import numpy as np

_T_LO, _T_HI = -2.0, 3.0  # log10 range of t for the coarse grid
_N_T = 11  # coarse grid points in t, half a decade apart
_N_NEWTON = 10
_N_WARM = 6  # Newton steps from a warm start
_N_ROOT = 8  # false-position steps on V′(µ̂) = 0


def h(t, mu, sigma):
    """h_{µ̂,σ̂}(t) = log g_{µ̂,σ̂}(t), eqs. (12)–(13), broadcasting over all arguments."""
    t, mu, sigma = np.broadcast_arrays(*(np.asarray(v, float) for v in (t, mu, sigma)))
    pos = t >= 0
    # t < 0 is t > 0 for −X̂ (mean −µ̂, same second moment)
    m = np.where(pos, mu, -mu)
    return _h_pos(np.abs(t), m, sigma)


def _h_pos(t, mu, sigma):
    """h for t ≥ 0: log((1−µ̂)² e^{t(µ̂−σ̂²)/(1−µ̂)} + (σ̂²−µ̂²) e^t) − log(1 − 2µ̂ + σ̂²)."""
    return _h_from(_parts(mu, sigma), t)


def _parts(mu, sigma):
    """The µ̂-dependent pieces of h for t ≥ 0: the two-point law's lower atom x₁ and the log
    masses of x₁ and 1 (eq. 12 and the remark after it)."""
    mu, sigma = np.broadcast_arrays(np.asarray(mu, float), np.asarray(sigma, float))
    s2 = sigma * sigma
    var = np.maximum(s2 - mu * mu, 0.0)
    one = 1.0 - mu
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = one > 1e-300
        one_s = np.where(safe, one, 1.0)
        x1 = np.where(safe, (mu - s2) / one_s, -1.0)
        logden = np.log(one * one + var)  # log(1 − 2µ̂ + σ̂²) when var = σ̂² − µ̂²
        logp = np.where(safe, 2.0 * np.log(one_s), -np.inf) - logden
        logq = np.log(var) - logden
    # a variable with no variance is its mean: one atom at µ̂ with mass 1 (covers µ̂ = 1 = σ̂)
    det = var <= 0
    return np.where(det, mu, x1), np.where(det, 0.0, logp), np.where(det, -np.inf, logq)


def _h_from(parts, t):
    x1, logp, logq = parts
    return logp + t * x1 + _softplus(logq - logp + t * (1.0 - x1))


def _softplus(z):
    """log(1 + e^z), stable (numpy's logaddexp is many times slower)."""
    with np.errstate(invalid="ignore"):
        out = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.where(np.isneginf(z), 0.0, out)


def _side(a, b, sigma):
    """sup over t > 0 and µ̂ ∈ [a, b] of 2(h_µ̂(t) − b t)/t², with the limit t → 0⁺; 1-D arrays.

    For t > 0, h_µ̂(t) does not decrease in µ̂ on [−σ̂, σ̂²] (σ̂² is where the two-point law
    puts the most mass on its upper atom), so the supremum over µ̂ lies in
    [max(a, min(σ̂², b)), b]; the tests check this against a search over the whole interval.
    """
    out = np.empty(a.size)
    a = np.maximum(a, np.minimum(sigma * sigma, b))
    flat = b - a <= 1e-12
    if flat.any():
        out[flat] = _sup_t(b[flat], b[flat], sigma[flat])[0]
    wide = ~flat
    if wide.any():
        out[wide] = _sup_mu(a[wide], b[wide], sigma[wide])
    return np.maximum(sigma * sigma - b * b, out)  # first term: t → 0⁺ at µ̂ = b


def _sup_t(mu, b, sigma, t0=None):
    """sup over t > 0 of R(t) = 2(h_µ̂(t) − b t)/t² (elementwise arrays of one shape).

    A coarse grid in log t brackets the maximiser; safeguarded Newton steps on the
    stationarity condition φ(t) = (h′(t) − b) t − 2(h(t) − b t) = 0 then locate it, with
    h′ = x₁ + (1 − x₁)π and h″ = (1 − x₁)²π(1 − π), π the tilted mass of the upper atom.
    """
    x1, logp, logq = _parts(mu, sigma)

    c, d = logq - logp, 1.0 - x1
    c = np.where(np.isneginf(c), -1e300, c)  # no upper atom: π = 0

    def ratio(t):
        return 2.0 * (logp + t * (x1 - b) + _softplus(c + t * d)) / (t * t)

    def ev(t):
        z = c + t * d
        sp = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
        hb = logp + t * (x1 - b) + sp  # h(t) − b t
        pi = np.exp(z - sp)
        d1b = x1 - b + d * pi  # h′(t) − b
        return 2.0 * hb / (t * t), d1b * t - 2.0 * hb, d * d * pi * (1.0 - pi) * t - d1b

    t_min, t_max = 10.0**_T_LO, 10.0**_T_HI
    if t0 is None:
        lt = np.linspace(_T_LO, _T_HI, _N_T) * np.log(10.0)
        grid = np.exp(lt).reshape((-1,) + (1,) * mu.ndim)
        R = ratio(grid)
        j = np.argmax(R, axis=0)
        best = np.take_along_axis(R, j[None], axis=0)[0]
        lo = np.exp(lt[np.maximum(j - 1, 0)])
        hi = np.exp(lt[np.minimum(j + 1, lt.size - 1)])
        t = np.exp(lt[j])
        n_iter = _N_NEWTON
    else:  # warm start near a known maximiser
        t = np.clip(t0, t_min, t_max)
        lo, hi = np.maximum(t / 8.0, t_min), np.minimum(t * 8.0, t_max)
        best = ratio(t)
        n_iter = _N_WARM
    t_best = t
    for _ in range(n_iter):
        r, phi, dphi = ev(t)
        t_best = np.where(r > best, t, t_best)
        best = np.maximum(best, r)
        up = phi > 0  # R still increasing: the maximiser lies above t
        lo, hi = np.where(up, t, lo), np.where(up, hi, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = t - phi / dphi
        ok = (dphi < 0) & (step > lo) & (step < hi)
        t = np.where(ok, step, np.sqrt(lo * hi))
    r = ratio(t)
    return np.maximum(best, r), np.where(r > best, t, t_best)


def _sup_mu(a, b, sigma):
    """sup over µ̂ ∈ [a, b] of V(µ̂) = sup_t R. By the envelope theorem V′(µ̂) = ∂R/∂µ̂ at the
    inner maximiser; V′(b) ≥ 0 puts the maximum at b, otherwise V′ = 0 is solved by the
    Illinois variant of false position inside [a, b], warm-starting each inner search."""
    vb, tb = _sup_t(b, b, sigma)
    gb = _dV(b, b, sigma, tb)
    best = vb
    go = gb < 0
    if not go.any():
        return best
    a, b, sigma, gb, tb = a[go], b[go], sigma[go], gb[go], tb[go]
    va, ta = _sup_t(a, b, sigma)
    ga = _dV(a, b, sigma, ta)
    sub = np.maximum(vb[go], va)
    # bracket [x0, x1] with V′(x0) > 0 > V′(x1) where ga > 0 (else the maximum is at a)
    x0, g0, x1, g1 = a.copy(), ga, b.copy(), gb
    tx = np.sqrt(ta * tb)
    live = ga > 0
    for _ in range(_N_ROOT):
        with np.errstate(divide="ignore", invalid="ignore"):
            x = x0 - g0 * (x1 - x0) / (g1 - g0)
        x = np.where(np.isfinite(x) & (x > x0) & (x < x1), x, 0.5 * (x0 + x1))
        v, tx = _sup_t(x, b, sigma, tx)
        g = _dV(x, b, sigma, tx)
        sub = np.where(live, np.maximum(sub, v), sub)
        pos = g > 0
        # Illinois: halve the retained end's derivative when the same end is kept twice
        g1 = np.where(pos, g1 * 0.5, g)
        x1 = np.where(pos, x1, x)
        g0 = np.where(pos, g, g0 * 0.5)
        x0 = np.where(pos, x, x0)
    best[go] = sub
    return best


def _dV(mu, b, sigma, t, delta=1e-6):
    """∂R/∂µ̂ at fixed t by a central difference (µ̂ ± δ kept inside [−σ̂, σ̂])."""
    up = np.minimum(mu + delta, sigma)
    dn = np.maximum(mu - delta, -sigma)
    r = [2.0 * (_h_pos(t, m, sigma) - b * t) / (t * t) for m in (up, dn)]
    return (r[0] - r[1]) / np.maximum(up - dn, 1e-300)


def nu(mu_lo, mu_hi, sigma, chunk: int = 4096):
    """ν(µ̂⁻, µ̂⁺, σ̂) of eq. (14) for arrays of normalised triples (broadcast together).

    Requires µ̂⁻ ≤ µ̂⁺, |µ̂±| ≤ σ̂ ≤ 1 (checked; a ValueError names the first bad entry).
    Returns an array of the broadcast shape with 0 ≤ ν ≤ 1.
    """
    lo, hi, sg = np.broadcast_arrays(*(np.asarray(v, float) for v in (mu_lo, mu_hi, sigma)))
    shape = lo.shape
    lo, hi, sg = lo.ravel(), hi.ravel(), sg.ravel()
    tol = 1e-12
    bad = (~np.isfinite(lo) | ~np.isfinite(hi) | ~np.isfinite(sg) | (lo > hi + tol)
           | (sg > 1 + tol) | (np.abs(lo) > sg + tol) | (np.abs(hi) > sg + tol))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"nu needs mu_lo <= mu_hi and |mu| <= sigma <= 1; entry {i} has "
            f"mu_lo={lo[i]!r}, mu_hi={hi[i]!r}, sigma={sg[i]!r}"
        )
    sg = np.minimum(sg, 1.0)
    lo, hi = np.clip(lo, -sg, sg), np.clip(hi, -sg, sg)
    hi = np.maximum(hi, lo)
    # identical triples are common (one per feature and noise level): solve each once
    trip, inv = np.unique(np.stack([lo, hi, sg], axis=1), axis=0, return_inverse=True)
    out = np.empty(trip.shape[0])
    for s in range(0, trip.shape[0], chunk):
        a, b, c = trip[s:s + chunk].T
        k2 = np.maximum(_side(a, b, c), _side(-b, -a, c))
        out[s:s + chunk] = np.sqrt(np.clip(k2, 0.0, 1.0))
    return out[inv.ravel()].reshape(shape)

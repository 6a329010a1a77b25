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
µ̂ = µ̂⁺ is σ̂² − (µ̂⁺)², the Claim's lower bound. The supremum is found by a coarse grid over
(µ̂, log t) followed by a shrinking 3×3 pattern search, vectorised over all triples.
"""

from __future__ import annotations

import numpy as np

_T_LO, _T_HI = -2.0, 3.0  # log10 range of t for the coarse grid
_N_MU, _N_T = 5, 21
_N_REFINE = 40


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
    return np.logaddexp(logp + t * x1, logq + t)


def _side(a, b, sigma):
    """sup over t > 0 and µ̂ ∈ [a, b] of 2(h_µ̂(t) − b t)/t², with the limit t → 0⁺; 1-D arrays.

    For t > 0, h_µ̂(t) does not decrease in µ̂ on [−σ̂, σ̂²] (at σ̂² the mass at the upper atom
    is largest), so the supremum over µ̂ lies in [max(a, min(σ̂², b)), b]; the tests check the
    result against a search over the whole interval.
    """
    out = np.empty(a.size)
    a = np.maximum(a, np.minimum(sigma * sigma, b))
    flat = b - a <= 0
    for mask, n_mu in ((flat, 1), (~flat, _N_MU)):
        if mask.any():
            out[mask] = _search(a[mask], b[mask], sigma[mask], n_mu)
    return np.maximum(sigma * sigma - b * b, out)  # first term: t → 0⁺ at µ̂ = b


def _search(a, b, sigma, n_mu):
    """Coarse grid over (µ̂, log t), then a compass search (the best of the ±step neighbours
    along each axis, halving the steps when none is better) kept inside the grid's range."""
    k = a.size
    rows = np.arange(k)
    width = (b - a)[:, None]
    sig = sigma[:, None]
    bb = b[:, None]
    lt_lo, lt_hi = _T_LO * np.log(10.0), _T_HI * np.log(10.0)

    def F(u, lt):  # u, lt (k, p): µ̂ = a + u (b − a), t = e^lt → (k, p)
        x1, logp, logq = _parts(a[:, None] + u * width, sig)
        t = np.exp(lt)
        h = np.logaddexp(logp + t * x1, logq + t)
        return 2.0 * (h - bb * t) / (t * t)

    u_grid = np.linspace(0.0, 1.0, n_mu) if n_mu > 1 else np.ones(1)
    lt_grid = np.linspace(lt_lo, lt_hi, _N_T)
    U, L = (g.ravel() for g in np.meshgrid(u_grid, lt_grid, indexing="ij"))
    vals = F(np.broadcast_to(U, (k, U.size)), np.broadcast_to(L, (k, L.size)))
    j = np.argmax(vals, axis=1)
    cur_v, cur_u, cur_l = vals[rows, j], U[j], L[j]
    du = np.full(k, 1.0 / max(n_mu - 1, 1))
    dl = np.full(k, lt_grid[1] - lt_grid[0])
    if n_mu > 1:
        su, sl = np.array([-1.0, 1.0, 0.0, 0.0]), np.array([0.0, 0.0, -1.0, 1.0])
    else:
        su, sl = np.zeros(2), np.array([-1.0, 1.0])
    for _ in range(_N_REFINE):
        cu = np.clip(cur_u[:, None] + su * du[:, None], 0.0, 1.0)
        cl = np.clip(cur_l[:, None] + sl * dl[:, None], lt_lo, lt_hi)
        v = F(cu, cl)
        j = np.argmax(v, axis=1)
        vj = v[rows, j]
        better = vj > cur_v
        cur_v = np.where(better, vj, cur_v)
        cur_u = np.where(better, cu[rows, j], cur_u)
        cur_l = np.where(better, cl[rows, j], cur_l)
        shrink = ~better
        du = np.where(shrink, du / 2.0, du)
        dl = np.where(shrink, dl / 2.0, dl)
    return cur_v


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

"""Uncertain test points (Lemmas 2 and 3), error measures, and the Monte-Carlo check of the
chance constraints (5).

A test point's uncertainty set, at the classifier's ε (κ = √(2 log(1/ε)), Σ₁ = diag(s ν)):

- ``ellipsoids``   U = ∪ over µ ∈ [µ⁻, µ⁺] of E(µ, κΣ₁)  (Lemma 2), support function
                   σ_U(d) = Σⱼ max(µ⁻ⱼdⱼ, µ⁺ⱼdⱼ) + κ‖Σ₁d‖;
- ``intersection`` U ∩ R with R the support box (Lemma 3). Its support function, the infimal
                   convolution of σ_U and σ_R, is max dᵀx over x ∈ R with
                   Σⱼ (dist(xⱼ, [µ⁻ⱼ, µ⁺ⱼ]) / (κΣ₁ⱼⱼ))² ≤ 1; for a multiplier λ > 0 each
                   coordinate has a closed form, and λ is the root of one monotone equation
                   (bisection, vectorised over points);
- ``box``          R alone: σ_R(d) = Σⱼ max(lⱼdⱼ, uⱼdⱼ).

The same set family is used for every formulation, so robust errors are comparable.
"""

from __future__ import annotations

import numpy as np

from safeclf.methods.robust_socp.formulations import bernstein_diag, kappa
from safeclf.methods.robust_socp.uncertainty import Uncertainty

TEST_SETS = ("intersection", "ellipsoids", "box")


def radii(unc: Uncertainty, epsilon: float) -> np.ndarray:
    """κΣ₁'s diagonal κ s ν(µ̂⁻, µ̂⁺, σ̂) of every entry, (m, n)."""
    return kappa(epsilon) * bernstein_diag(unc, exact_mean=False, second_moment=True)


def support_function(unc: Uncertainty, d, epsilon: float, kind: str = "intersection",
                     rho=None):
    """σ(dᵢ) = max of dᵢᵀx over point i's uncertainty set, for each point (d: (m, n) or (n,));
    ``rho`` = :func:`radii` when already computed."""
    if kind == "box":
        return set_support(d, unc.lower, unc.upper, np.zeros(unc.shape))
    rho = radii(unc, epsilon) if rho is None else rho
    box = (unc.lower, unc.upper) if kind == "intersection" else (None, None)
    return set_support(d, unc.mean_lo, unc.mean_hi, rho, *box)


def set_support(d, lo, hi, rho, lower=None, upper=None):
    """max of dᵢᵀx over the union of the ellipsoids {µ + ρᵢ ∘ u : ‖u‖ ≤ 1}, µ ∈ [loᵢ, hiᵢ],
    intersected with the box [lowerᵢ, upperᵢ] when one is given; one value per row."""
    d = np.broadcast_to(np.asarray(d, float), np.shape(lo))
    union = np.maximum(lo * d, hi * d).sum(axis=1) + np.linalg.norm(rho * d, axis=1)
    if lower is None:
        return union
    l, u = lower, upper
    box = np.maximum(l * d, u * d).sum(axis=1)
    # intersection: per coordinate, move from the adverse mean bound towards the box edge
    start = np.where(d >= 0, hi, lo)
    gap = np.where(d >= 0, u - hi, lo - l)  # room to the box edge, ≥ 0
    ad = np.abs(d)
    gap = np.maximum(gap, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # constraint value when every coordinate reaches the box edge
        full = np.where(gap > 0, np.where(rho > 0, (gap / rho) ** 2, np.inf), 0.0)
        full = np.where(ad > 0, full, 0.0)  # coordinates with dⱼ = 0 stay at the mean bound
    corner = full.sum(axis=1) <= 1.0

    def step(lam):  # coordinate moves at multiplier λ: min(gap, |d| ρ²/(2λ))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return np.minimum(gap, np.nan_to_num(ad * rho**2 / (2.0 * lam[:, None]), posinf=np.inf))

    def g(lam):
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(rho > 0, step(lam) / rho, 0.0)
        return (t * t).sum(axis=1)

    # g decreases in λ; bracket in log λ and bisect
    lam_lo = np.full(d.shape[0], 1e-300)
    lam_hi = np.maximum((ad * rho).max(axis=1, initial=0.0), 1e-300) * 1e3 + 1e-300
    for _ in range(200):
        mid = np.sqrt(lam_lo * lam_hi)
        big = g(mid) > 1.0
        lam_lo, lam_hi = np.where(big, mid, lam_lo), np.where(big, lam_hi, mid)
        if np.all(lam_hi / lam_lo < 1.0 + 1e-14):
            break
    moved = np.where(corner[:, None], np.where(ad > 0, gap, 0.0), step(lam_hi))
    x = start + np.sign(d) * moved
    return np.minimum(np.minimum((d * x).sum(axis=1), box), union)


def score_ranges(unc: Uncertainty, w, b, epsilon, kind="intersection"):
    """[min, max] of wᵀx − b over each point's uncertainty set."""
    rho = None if kind == "box" else radii(unc, epsilon)
    hi = support_function(unc, w, epsilon, kind, rho) - b
    lo = -support_function(unc, -np.asarray(w, float), epsilon, kind, rho) - b
    return lo, hi


def test_errors(unc: Uncertainty, y_pm, w, b, epsilon, kind="intersection") -> dict:
    """Nominal error (the means classified), robust error (share whose whole set is not
    strictly on the correct side), undecided rate (share whose set straddles the plane)."""
    nominal = np.where(unc.mean @ w - b >= 0, 1.0, -1.0)
    lo, hi = score_ranges(unc, w, b, epsilon, kind)
    correct = np.where(y_pm > 0, lo > 0, hi < 0)
    return {
        "nominal_error": float(np.mean(nominal != y_pm)),
        "robust_error": float(np.mean(~correct)),
        "undecided_rate": float(np.mean((lo < 0) & (hi > 0))),
    }


# -- Monte-Carlo check of the chance constraints (5) ----------------------------------------
DISTRIBUTIONS = ("uniform", "two_point", "truncnorm")


def consistent_sample(unc: Uncertainty, adverse, kind: str, size: int, rng):
    """``size`` realisations (size, m, n) from a law consistent with each entry's partial
    information, pushed towards ``adverse`` (m, n) (the direction that hurts the constraint):
    mean at the adverse mean bound m̂, second moment ≤ the bound at that mean, inside the box.

    - ``uniform``:   uniform on [m̂ − r, m̂ + r], r = min(1 − |m̂|, √(3(σ̂² − m̂²)));
    - ``two_point``: the extreme law of eq. (12) at (m̂, σ̂), its far atom on the adverse side;
    - ``truncnorm``: a normal N(m̂, (r/2)²) truncated symmetrically to [m̂ − r, m̂ + r].
    """
    nm = unc.normalised()
    pos = np.asarray(adverse) >= 0
    mhat = np.where(pos, nm.mu_hi, nm.mu_lo)
    c, s = nm.c, nm.s
    mu_raw = c + s * mhat
    sm = unc.second_moment
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(np.isfinite(sm), (np.where(np.isfinite(sm), sm, 0) - 2 * c * mu_raw + c * c)
                      / np.where(s > 0, s * s, 1.0), 1.0)
    s2 = np.clip(s2, mhat**2, 1.0)
    var = np.maximum(s2 - mhat**2, 0.0)
    r = np.minimum(1.0 - np.abs(mhat), np.sqrt(3.0 * var))
    shape = (size,) + unc.shape
    if kind == "uniform":
        xh = mhat + r * rng.uniform(-1.0, 1.0, shape)
    elif kind == "truncnorm":
        xh = mhat + (r / 2.0) * truncated_normal(2.0, shape, rng)
    elif kind == "two_point":
        m = np.where(pos, mhat, -mhat)  # work on the side where the far atom is +1
        with np.errstate(divide="ignore", invalid="ignore"):
            den = 1.0 - 2.0 * m + s2
            p_far = np.where(den > 0, var / np.where(den > 0, den, 1.0), 0.0)
            near = np.where(m < 1.0, (m - s2) / np.where(m < 1.0, 1.0 - m, 1.0), 1.0)
        near = np.where(var > 0, near, m)
        far = rng.uniform(size=shape) < p_far
        xp = np.where(far, 1.0, near)
        xh = np.where(pos, xp, -xp)
    else:
        raise ValueError(f"unknown distribution {kind!r}")
    return c + s * xh


def truncated_normal(a: float, shape, rng):
    """Standard normal draws conditioned on |z| ≤ a, by rejection (acceptance ≥ 38% for
    a ≥ 0.5; scipy's truncnorm.rvs is many times slower)."""
    z = rng.standard_normal(shape)
    bad = np.abs(z) > a
    while bad.any():
        z[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(z) > a
    return z


def chance_violations(unc: Uncertainty, y_pm, w, b, xi, n_samples: int, rng,
                      distributions=DISTRIBUTIONS, chunk: int = 200_000) -> dict:
    """For each law, the largest share over training points of realisations with
    yᵢ(wᵀXᵢ − b) < 1 − ξᵢ − 1e-6 (1e-6: the solver's accuracy on the unit margin), the
    violation probability of (5)."""
    m, n = unc.shape
    adverse = -(y_pm[:, None] * np.asarray(w)[None, :])
    out = {}
    per = max(1, chunk // max(m * n, 1))
    for kind in distributions:
        hits = np.zeros(m)
        done = 0
        while done < n_samples:
            k = min(per, n_samples - done)
            X = consistent_sample(unc, adverse, kind, k, rng)
            margin = y_pm[None, :] * (X @ w - b)
            hits += (margin < 1.0 - xi[None, :] - 1e-6).sum(axis=0)
            done += k
        out[kind] = float(hits.max() / n_samples) if m else 0.0
    return out

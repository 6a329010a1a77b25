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

from safeclf.data.uncertainty import Uncertainty, truncated_normal
from safeclf.methods.robust_socp.formulations import bernstein_diag, kappa

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
    intersected with the box [lowerᵢ, upperᵢ] when one is given; one value per row. ``rho``
    of shape (m, n, n) (MM-MC with a full covariance, no box) is the ellipsoid
    {µ + ρᵢᵀu : ‖u‖ ≤ 1}, whose support adds ‖ρᵢ dᵢ‖."""
    d = np.broadcast_to(np.asarray(d, float), np.shape(lo))
    rho = np.asarray(rho, float)
    spread = np.einsum("irc,ic->ir", rho, d) if rho.ndim == 3 else rho * d
    union = np.maximum(lo * d, hi * d).sum(axis=1) + np.linalg.norm(spread, axis=1)
    if lower is None:
        return union
    if rho.ndim == 3:
        raise ValueError("a full covariance (MM-MC) has no support-box variant")
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
DISTRIBUTIONS = ("uniform", "two_point", "truncnorm", "searched")


def second_moment_bound(unc: Uncertainty, nm, mhat):
    """The largest E X̂² the information allows at the normalised mean ``mhat`` (m, n):
    (σ² − 2cµ + c²)/s² at µ = c + s m̂, within [m̂², 1] (1 where σ² is unknown)."""
    c, s = nm.c, nm.s
    mu_raw = c + s * mhat
    sm = unc.second_moment
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(np.isfinite(sm), (np.where(np.isfinite(sm), sm, 0) - 2 * c * mu_raw + c * c)
                      / np.where(s > 0, s * s, 1.0), 1.0)
    return np.clip(s2, mhat**2, 1.0)


# the searched laws, in the oriented coordinate z = ±X̂ whose +1 end hurts the constraint:
# the mean at these fractions of its interval (1: the adverse bound), the variance at these
# fractions of the largest the second-moment bound allows at that mean, and four shapes
SEARCH_MEANS = (0.0, 0.25, 0.5, 0.75, 1.0)
SEARCH_VARIANCES = (0.5, 1.0)
SEARCH_SHAPES = ("two_point_end", "two_point_half", "three_point_mean", "three_point_low")


def consistent_sample(unc: Uncertainty, adverse, kind: str, size: int, rng):
    """``size`` realisations (size, m, n) from a law consistent with each entry's partial
    information, pushed towards ``adverse`` (m, n) (the direction that hurts the constraint):
    mean at the adverse mean bound m̂, second moment ≤ the bound at that mean, inside the box.

    - ``uniform``:   uniform on [m̂ − r, m̂ + r], r = min(1 − |m̂|, √(3(σ̂² − m̂²)));
    - ``two_point``: the extreme law of eq. (12) at (m̂, σ̂), its far atom on the adverse side;
    - ``truncnorm``: a normal N(m̂, (r/2)²) truncated symmetrically to [m̂ − r, m̂ + r].

    The adverse mean is not always the worst: :func:`searched_laws` searches means and
    variances inside the information.
    """
    return consistent_sampler(unc, adverse, kind, rng)(size)


def consistent_sampler(unc: Uncertainty, adverse, kind: str, rng):
    """``draw(k)``: k realisations (k, m, n) of :func:`consistent_sample`'s law, the law's
    constants computed once (the same draws as ``consistent_sample(..., k, rng)``)."""
    nm = unc.normalised()
    pos = np.asarray(adverse) >= 0
    mhat = np.where(pos, nm.mu_hi, nm.mu_lo)
    c, s = nm.c, nm.s
    s2 = second_moment_bound(unc, nm, mhat)
    var = np.maximum(s2 - mhat**2, 0.0)
    r = np.minimum(1.0 - np.abs(mhat), np.sqrt(3.0 * var))
    # rng.random(shape) draws the doubles rng.uniform(low, high, shape) scales by
    # low + (high − low) u, several times faster than rng.uniform's broadcasting path
    if kind == "uniform":
        def draw(k):
            return c + s * (mhat + r * (2.0 * rng.random((k,) + unc.shape) - 1.0))
    elif kind == "truncnorm":
        half = r / 2.0

        def draw(k):
            return c + s * (mhat + half * truncated_normal(2.0, (k,) + unc.shape, rng))
    elif kind == "two_point":
        m = np.where(pos, mhat, -mhat)  # work on the side where the far atom is +1
        with np.errstate(divide="ignore", invalid="ignore"):
            den = 1.0 - 2.0 * m + s2
            p_far = np.where(den > 0, var / np.where(den > 0, den, 1.0), 0.0)
            near = np.where(m < 1.0, (m - s2) / np.where(m < 1.0, 1.0 - m, 1.0), 1.0)
        near = np.where(var > 0, near, m)
        # X = c + s·(±1) where the far atom is drawn, c + s·(±near) elsewhere
        x_far, x_near = c + s * np.where(pos, 1.0, -1.0), c + s * np.where(pos, near, -near)

        def draw(k):
            return np.where(rng.random((k,) + unc.shape) < p_far, x_far, x_near)
    else:
        raise ValueError(f"unknown distribution {kind!r}")
    return draw


def searched_law(unc: Uncertainty, adverse, mean_frac: float, var_frac: float, shape: str):
    """One law per entry consistent with its information (support, mean bounds, E X² bound):
    atoms (3, m, n) in raw units and their masses (3, m, n).

    In z = ±X̂ (+1 the adverse end of the box), with mean m and variance v:
    - ``two_point_end`` / ``two_point_half``: a far atom at 1 (or half way from m to 1) and a
      near atom at m − v/(far − m), moved out to the far atom that puts the near one at −1
      where it would leave the box (the law of eq. 12 is ``two_point_end``);
    - ``three_point_mean`` / ``three_point_low``: atoms at −1, c and 1 with c = m (or
      (m − 1)/2), masses fixed by the two moments (a two-point law where they are negative).
    """
    nm = unc.normalised()
    o = np.where(np.asarray(adverse) >= 0, 1.0, -1.0)
    lo_z = np.where(o > 0, nm.mu_lo, -nm.mu_hi)
    hi_z = np.where(o > 0, nm.mu_hi, -nm.mu_lo)
    m = lo_z + mean_frac * (hi_z - lo_z)
    s2_max = second_moment_bound(unc, nm, o * m)
    v = var_frac * np.maximum(s2_max - m * m, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = 1.0 if shape != "two_point_half" else m + 0.5 * (1.0 - m)
        d = np.maximum(far - m, 1e-300)
        d = np.where(m - v / d < -1.0, v / np.maximum(m + 1.0, 1e-300), d)
        p_far = np.where(v > 0, v / (v + d * d), 0.0)
        atoms = [m + d, m - v / d, np.zeros_like(m)]
        probs = [p_far, 1.0 - p_far, np.zeros_like(m)]
        if shape.startswith("three_point"):
            c = m if shape == "three_point_mean" else 0.5 * (m - 1.0)
            s2 = m * m + v
            p_c = (1.0 - s2) / np.maximum(1.0 - c * c, 1e-300)
            p_hi = 0.5 * (1.0 - p_c + m - c * p_c)
            p_lo = 0.5 * (1.0 - p_c - m + c * p_c)
            ok = (np.abs(c) < 1.0) & (p_c >= 0) & (p_hi >= 0) & (p_lo >= 0)
            atoms = [np.where(ok, x, a) for x, a in zip((1.0 + 0 * m, -1.0 + 0 * m, c), atoms)]
            probs = [np.where(ok, x, p) for x, p in zip((p_hi, p_lo, p_c), probs)]
    z = np.stack(np.broadcast_arrays(*atoms))
    z = np.where(v[None] > 0, z, m[None])  # no variance: the mean itself
    P = np.clip(np.stack(np.broadcast_arrays(*probs)), 0.0, 1.0)
    P = np.where(v[None] > 0, P, np.array([1.0, 0.0, 0.0])[:, None, None])
    return nm.c + nm.s * o * np.clip(z, -1.0, 1.0), P / P.sum(axis=0)


def _violation_rate(unc, y_pm, w, b, xi, draw, n_samples, chunk):
    """Per point, the share of ``n_samples`` realisations X = draw(k) (k, m, n) breaking (5)."""
    m, n = unc.shape
    per = max(1, chunk // max(m * n, 1))
    hits = np.zeros(m)
    done = 0
    while done < n_samples:
        k = min(per, n_samples - done)
        X = draw(k)
        margin = y_pm[None, :] * (X @ w - b)
        hits += (margin < 1.0 - xi[None, :] - 1e-6).sum(axis=0)
        done += k
    return hits / n_samples


def _discrete_draw(atoms, probs, rng):
    """A sampler of the three-atom laws ``atoms`` (3, m, n) with masses ``probs``."""
    c0, c1 = probs[0], probs[0] + probs[1]

    def draw(k):
        u = rng.random((k,) + atoms.shape[1:])  # the doubles of rng.uniform(size=...)
        return np.where(u < c0, atoms[0], np.where(u < c1, atoms[1], atoms[2]))
    return draw


def searched_laws(unc: Uncertainty, y_pm, w, b, xi, n_samples: int, rng,
                  chunk: int = 200_000, n_confirm: int = 3) -> tuple[float, dict]:
    """Search the two- and three-point laws of :func:`searched_law` over the grid of means
    and variances (every entry of a point takes the same grid position, oriented against the
    constraint). Each law is screened on max(50, n_samples/20) draws; the ``n_confirm`` worst
    (law, point) pairs are re-drawn with fresh ``n_samples`` (the maximum of many noisy
    screens is biased upwards; a fresh draw is not), and the largest re-drawn rate is
    returned with its law."""
    w = np.asarray(w, float)
    # a point whose whole box meets (5) breaks it under no law: search the others only
    centre, half = (unc.lower + unc.upper) / 2, (unc.upper - unc.lower) / 2
    worst_case = y_pm * (centre @ w - b) - half @ np.abs(w)
    risky = np.flatnonzero(worst_case < 1.0 - xi - 1e-6)
    if risky.size == 0:
        return 0.0, {}
    unc, y_pm, xi = unc.take(risky), y_pm[risky], xi[risky]
    adverse = -(y_pm[:, None] * w[None, :])
    n_screen = max(50, n_samples // 20)
    screened = []
    for shape in SEARCH_SHAPES:
        for mf in SEARCH_MEANS:
            for vf in SEARCH_VARIANCES:
                atoms, probs = searched_law(unc, adverse, mf, vf, shape)
                rate = _violation_rate(unc, y_pm, w, b, xi, _discrete_draw(atoms, probs, rng),
                                       n_screen, chunk)
                i = int(np.argmax(rate))
                screened.append((rate[i], shape, mf, vf, i))
    screened.sort(key=lambda r: -r[0])
    worst, law = 0.0, {}
    for _, shape, mf, vf, i in screened[:n_confirm]:
        atoms, probs = searched_law(unc.take([i]), adverse[[i]], mf, vf, shape)
        rate = _violation_rate(unc.take([i]), y_pm[[i]], w, b, xi[[i]],
                               _discrete_draw(atoms, probs, rng), n_samples, chunk)[0]
        if rate >= worst:
            worst, law = float(rate), {"shape": shape, "mean_fraction": mf,
                                       "variance_fraction": vf, "point": int(risky[i])}
    return worst, law


def chance_violations(unc: Uncertainty, y_pm, w, b, xi, n_samples: int, rng,
                      distributions=DISTRIBUTIONS, chunk: int = 200_000) -> dict:
    """For each law, the largest share over training points of realisations with
    yᵢ(wᵀXᵢ − b) < 1 − ξᵢ − 1e-6 (1e-6: the solver's accuracy on the unit margin), the
    violation probability of (5). ``searched``: the worst of :func:`searched_laws`."""
    m, n = unc.shape
    adverse = -(y_pm[:, None] * np.asarray(w)[None, :])
    out = {}
    for kind in distributions:
        if kind == "searched":
            out[kind] = searched_laws(unc, y_pm, w, b, xi, n_samples, rng, chunk)[0]
            continue
        rate = _violation_rate(unc, y_pm, w, b, xi, consistent_sampler(unc, adverse, kind, rng),
                               n_samples, chunk)
        out[kind] = float(rate.max()) if m else 0.0
    return out

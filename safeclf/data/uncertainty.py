"""The partial information about each uncertain entry X_ij (Ben-Tal et al. 2011, section 2).

Per point i and feature j (features independent):

- support        l_ij ≤ X_ij ≤ u_ij
- mean bounds    µ⁻_ij ≤ E X_ij ≤ µ⁺_ij        (µ⁻ = µ⁺: the exact mean)
- second moment  E X_ij² ≤ σ²_ij               (NaN: unknown, the "natural bound" of §2.2)

It travels through the runner as ``rows["uncertainty"]``: a dict of (m, n) float arrays with
the keys ``lower``, ``upper``, ``mean_lo``, ``mean_hi`` and ``second_moment`` (the last may be
absent or NaN where unknown). :meth:`Uncertainty.to_rows` and :meth:`Uncertainty.from_rows`
convert; the constructors build it from exact moments, bounds, intervals only, or replicate
measurements, and every constructor checks consistency (a :class:`~safeclf.errors.DataError`
names the first bad point and feature).

Normalised quantities (Lemma 1): c = (l+u)/2, s = (u−l)/2, X̂ = (X − c)/s ∈ [−1, 1],
µ̂± = (µ± − c)/s, and σ̂² the largest E X̂² the bounds allow, worst case over the mean interval:
σ̂² = max over µ ∈ [µ⁻, µ⁺] of (σ² − 2cµ + c²)/s², capped at 1 (an unknown σ² gives σ̂ = 1).
The mean interval is first narrowed to [−σ, σ] (Jensen: (E X)² ≤ E X²), so |µ̂±| ≤ σ̂. An
entry with s = 0 is exact: µ̂ = σ̂ = 0 and it adds no uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from safeclf.errors import DataError

KEYS = ("lower", "upper", "mean_lo", "mean_hi", "second_moment")


@dataclass(frozen=True)
class Normalised:
    """c, s and the normalised moments µ̂⁻ ≤ µ̂⁺, σ̂ of every entry, all (m, n)."""

    c: np.ndarray
    s: np.ndarray
    mu_lo: np.ndarray
    mu_hi: np.ndarray
    sigma: np.ndarray


@dataclass(frozen=True)
class Uncertainty:
    """Support, mean bounds and second-moment bounds of m uncertain points in R^n."""

    lower: np.ndarray
    upper: np.ndarray
    mean_lo: np.ndarray
    mean_hi: np.ndarray
    second_moment: np.ndarray  # NaN where unknown

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_bounds(cls, lower, upper, mean_lo, mean_hi, second_moment=None, where="uncertainty"):
        """Support, mean bounds and (optionally) upper bounds on E X²."""
        lower = _arr(lower)
        sm = np.full(lower.shape, np.nan) if second_moment is None else _arr(second_moment)
        out = cls(lower, _arr(upper), _arr(mean_lo), _arr(mean_hi), sm)
        out.check(where)
        return out

    @classmethod
    def from_moments(cls, lower, upper, mean, second_moment, where="uncertainty"):
        """Support with the exact mean and second moment of every entry."""
        mean = _arr(mean)
        return cls.from_bounds(lower, upper, mean, mean, second_moment, where)

    @classmethod
    def from_intervals(cls, lower, upper, where="uncertainty"):
        """Support only: the mean may be anywhere in the box and σ̂ = 1 (the natural bound)."""
        lower, upper = _arr(lower), _arr(upper)
        return cls.from_bounds(lower, upper, lower, upper, None, where)

    @classmethod
    def exact(cls, X):
        """Points known exactly (zero-width support): every formulation becomes the SVM."""
        X = _arr(X)
        return cls(X, X, X, X, X * X)

    @classmethod
    def from_replicates(cls, R, confidence: float = 0.95, where="uncertainty"):
        """From k ≥ 2 replicate measurements ``R`` of shape (m, k, n): support [min, max] of
        the replicates, mean bounds the two-sided Student-t confidence interval of the
        replicate mean (clipped to the support), and E X² bounded by the upper one-sided
        confidence bound of the mean of the squared replicates (at least the largest squared
        mean bound, so the bounds stay consistent)."""
        from scipy import stats

        R = np.asarray(R, float)
        if R.ndim != 3 or R.shape[1] < 2:
            raise DataError(f"{where}: replicates must have shape (points, k >= 2, features), "
                            f"got {R.shape}")
        k = R.shape[1]
        lower, upper = R.min(axis=1), R.max(axis=1)
        mean, sd = R.mean(axis=1), R.std(axis=1, ddof=1)
        half = stats.t.ppf(0.5 + confidence / 2, k - 1) * sd / np.sqrt(k)
        mean_lo = np.clip(mean - half, lower, upper)
        mean_hi = np.clip(mean + half, lower, upper)
        sq = R * R
        sq_hi = sq.mean(axis=1) + stats.t.ppf(confidence, k - 1) * sq.std(axis=1, ddof=1) / np.sqrt(k)
        bound = np.maximum(sq_hi, np.maximum(mean_lo**2, mean_hi**2))
        return cls.from_bounds(lower, upper, mean_lo, mean_hi, np.minimum(bound, np.maximum(
            lower**2, upper**2)), where)

    # -- runner rows -----------------------------------------------------------------------
    def to_rows(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in KEYS}

    @classmethod
    def from_rows(cls, rows, n_features: int | None = None, where="uncertainty"):
        """From a ``rows["uncertainty"]`` dict (or an :class:`Uncertainty`), checked."""
        if isinstance(rows, Uncertainty):
            rows.check(where)
            return rows
        if not isinstance(rows, dict):
            raise DataError(f"{where} must be a dict of arrays with keys {', '.join(KEYS[:4])} "
                            f"(and optionally second_moment), got {type(rows).__name__}")
        missing = [k for k in KEYS[:4] if k not in rows]
        if missing:
            raise DataError(f"{where} lacks '{missing[0]}' (needs {', '.join(KEYS[:4])})")
        lower = _arr(rows["lower"])
        sm = rows.get("second_moment")
        out = cls(lower, _arr(rows["upper"]), _arr(rows["mean_lo"]), _arr(rows["mean_hi"]),
                  np.full(lower.shape, np.nan) if sm is None else _arr(sm))
        out.check(where, n_features)
        return out

    # -- checks ----------------------------------------------------------------------------
    @property
    def shape(self):
        return self.lower.shape

    def check(self, where="uncertainty", n_features: int | None = None) -> None:
        """Raise a one-line :class:`DataError` naming the first inconsistent point/feature."""
        for k in KEYS:
            a = getattr(self, k)
            if a.ndim != 2 or a.shape != self.lower.shape:
                raise DataError(f"{where}.{k} has shape {a.shape}, expected {self.lower.shape}")
        if n_features is not None and self.shape[1] != n_features:
            raise DataError(f"{where} describes {self.shape[1]} features but X has {n_features}")
        for k in KEYS[:4]:
            _first(~np.isfinite(getattr(self, k)), where, f"has a non-finite {k}", self, k)
        l, u, lo, hi, sm = self.lower, self.upper, self.mean_lo, self.mean_hi, self.second_moment
        tol = 1e-9 * np.maximum(1.0, np.maximum(np.abs(l), np.abs(u)))
        _first(l > u + tol, where, "has lower > upper", self, "lower", "upper")
        _first(lo > hi + tol, where, "has mean_lo > mean_hi", self, "mean_lo", "mean_hi")
        _first((lo < l - tol) | (lo > u + tol), where, "has mean_lo outside its support", self,
               "mean_lo", "lower", "upper")
        _first((hi < l - tol) | (hi > u + tol), where, "has mean_hi outside its support", self,
               "mean_hi", "lower", "upper")
        _first(np.isinf(sm) | (sm < 0), where, "has a negative or infinite second_moment", self,
               "second_moment")
        # some mean in [µ⁻, µ⁺] must satisfy µ² ≤ σ²
        min_sq = np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(lo * lo, hi * hi))
        bad = np.isfinite(sm) & (sm < min_sq - 1e-9 * np.maximum(1.0, min_sq))
        _first(bad, where, "has a second_moment below the squared mean", self, "second_moment",
               "mean_lo", "mean_hi")

    # -- derived quantities ----------------------------------------------------------------
    @property
    def center(self):
        return (self.lower + self.upper) / 2

    @property
    def half_width(self):
        return np.maximum(self.upper - self.lower, 0.0) / 2

    @property
    def mean(self):
        """The point's mean when exact; the midpoint of the mean bounds otherwise (used by the
        formulations that need exact means: MM-SMV, MM-SM, MM-M, MM-MC)."""
        return (self.mean_lo + self.mean_hi) / 2

    def normalised(self, exact_mean: bool = False, use_second_moment: bool = True) -> Normalised:
        """Lemma 1's normalisation. ``exact_mean`` takes the mean as :attr:`mean`;
        ``use_second_moment=False`` ignores σ² (σ̂ = 1, the bound the support alone implies)."""
        c, s = self.center, self.half_width
        lo, hi = (self.mean, self.mean) if exact_mean else (self.mean_lo, self.mean_hi)
        sm = self.second_moment if use_second_moment else np.full(c.shape, np.nan)
        known = np.isfinite(sm)
        root = np.sqrt(np.where(known, sm, np.inf))
        lo = np.where(known, np.clip(lo, -root, root), lo)  # Jensen: |E X| ≤ √(E X²)
        hi = np.where(known, np.clip(hi, -root, root), hi)
        hi = np.maximum(hi, lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = s > 0
            ss = np.where(pos, s, 1.0)
            mlo = np.where(pos, np.clip((lo - c) / ss, -1.0, 1.0), 0.0)
            mhi = np.where(pos, np.clip((hi - c) / ss, -1.0, 1.0), 0.0)
            # E X̂² = (E X² − 2c E X + c²)/s², worst case at an end of the mean interval
            worst = np.maximum(-2 * c * lo, -2 * c * hi)
            s2 = np.where(known, (np.where(known, sm, 0.0) + worst + c * c) / (ss * ss), 1.0)
        s2 = np.where(pos, np.clip(s2, 0.0, 1.0), 0.0)
        sigma = np.maximum(np.sqrt(s2), np.maximum(np.abs(mlo), np.abs(mhi)))
        return Normalised(c, s, mlo, mhi, np.minimum(sigma, 1.0))

    def variance(self) -> np.ndarray:
        """Largest variance of each entry consistent with the information at the exact mean
        :attr:`mean` (s² (σ̂² − µ̂²)); MM-MC's Σᵢ is its diagonal."""
        nm = self.normalised(exact_mean=True)
        return nm.s**2 * np.maximum(nm.sigma**2 - nm.mu_lo**2, 0.0)

    def take(self, index) -> Uncertainty:
        return Uncertainty(*(getattr(self, k)[index] for k in KEYS))


def _arr(a):
    a = np.asarray(a, dtype=float)
    return a.reshape(-1, 1) if a.ndim == 1 else a


def _first(bad, where, what, unc, *keys):
    if np.any(bad):
        i, j = (int(v) for v in np.argwhere(bad)[0])
        vals = ", ".join(f"{k}={getattr(unc, k)[i, j]:.6g}" for k in keys)
        raise DataError(f"{where}: point {i}, feature {j} {what} ({vals})")


def truncated_normal(a: float, shape, rng):
    """Standard normal draws conditioned on |z| ≤ a, by rejection (acceptance ≥ 38% for
    a ≥ 0.5; scipy's truncnorm.rvs is many times slower): the rejected entries, in order, are
    drawn again until none is left; each round looks at the entries still rejected only."""
    z = rng.standard_normal(shape)
    flat = z.reshape(-1)  # a view: z is new and contiguous
    bad = np.flatnonzero(np.abs(flat) > a)
    while bad.size:
        flat[bad] = rng.standard_normal(bad.size)
        bad = bad[np.abs(flat[bad]) > a]
    return z

"""Exact ε-safe decision regions for two Gaussian classes (Prop. 3, Example 1, Appendix A).

    Φ_ε = {x : p(S | x) ≥ 1 − ε} = {x : Γ(x) ≤ ρ(p_S, ε)}                               (2), (5)
    ρ(p_S, ε) = ln(p_S / (1 − p_S)) + ln(ε / (1 − ε))                                       (7)
    Γ(x) = ½(x − µ_S)ᵀΣ_S⁻¹(x − µ_S) + ½ ln det Σ_S − ½(x − µ_U)ᵀΣ_U⁻¹(x − µ_U) − ½ ln det Σ_U  (6)

Expanded, Γ(x) = ½ xᵀA x + aᵀx + c with A = Σ_S⁻¹ − Σ_U⁻¹, a = −(Σ_S⁻¹µ_S − Σ_U⁻¹µ_U) and
c = ½(µ_SᵀΣ_S⁻¹µ_S − µ_UᵀΣ_U⁻¹µ_U) + ½ ln(det Σ_S / det Σ_U); the boundary Γ = ρ is classified
from A as in Appendix A.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from safeclf.errors import DataError


def rho(p_safe: float, epsilon: float) -> float:
    """ρ(p_S, ε) of eq. (7)."""
    for name, v in (("p_S", p_safe), ("ε", epsilon)):
        if not 0 < v < 1:
            raise DataError(f"safe region: {name} must be in (0, 1), got {v}")
    return float(np.log(p_safe / (1 - p_safe)) + np.log(epsilon / (1 - epsilon)))


_RATE_CACHE: dict = {}


@dataclass(frozen=True)
class GaussianSafeRegion:
    """Φ_ε for safe class S ~ N(µ_S, Σ_S) with prior p_S and unsafe class U ~ N(µ_U, Σ_U)."""

    mean_safe: np.ndarray
    cov_safe: np.ndarray
    mean_unsafe: np.ndarray
    cov_unsafe: np.ndarray
    p_safe: float
    epsilon: float

    @classmethod
    def from_info(cls, gaussians: dict, epsilon: float, p_safe: float | None = None):
        """From a ``gaussians`` loader's ``info["gaussians"]`` (positive class +1 = safe S)."""
        return cls(
            np.asarray(gaussians["mean_pos"], float), np.asarray(gaussians["cov_pos"], float),
            np.asarray(gaussians["mean_neg"], float), np.asarray(gaussians["cov_neg"], float),
            float(gaussians["p_pos"] if p_safe is None else p_safe), float(epsilon),
        )

    def __post_init__(self):
        d = self.mean_safe.size
        for name, c in (("Σ_S", self.cov_safe), ("Σ_U", self.cov_unsafe)):
            if c.shape != (d, d) or not np.allclose(c, c.T) or np.linalg.eigvalsh(c).min() <= 0:
                raise DataError(f"safe region: {name} must be a symmetric positive definite {d}×{d} matrix")
        rho(self.p_safe, self.epsilon)

    # -- the quadric Γ(x) = ½ xᵀA x + aᵀx + c --------------------------------------------------
    @property
    def A(self) -> np.ndarray:
        """Σ_S⁻¹ − Σ_U⁻¹ (Appendix A)."""
        return np.linalg.inv(self.cov_safe) - np.linalg.inv(self.cov_unsafe)

    @property
    def a(self) -> np.ndarray:
        Si, Ui = np.linalg.inv(self.cov_safe), np.linalg.inv(self.cov_unsafe)
        return -(Si @ self.mean_safe - Ui @ self.mean_unsafe)

    @property
    def c(self) -> float:
        Si, Ui = np.linalg.inv(self.cov_safe), np.linalg.inv(self.cov_unsafe)
        ms, mu = self.mean_safe, self.mean_unsafe
        logdet = np.linalg.slogdet(self.cov_safe)[1] - np.linalg.slogdet(self.cov_unsafe)[1]
        return float(0.5 * (ms @ Si @ ms - mu @ Ui @ mu) + 0.5 * logdet)

    @property
    def rho(self) -> float:
        return rho(self.p_safe, self.epsilon)

    def gamma(self, X) -> np.ndarray:
        """Γ(x) of eq. (6) for each row of X."""
        X = np.atleast_2d(np.asarray(X, float))

        def half_maha(mean, cov):
            D = X - mean
            return 0.5 * np.einsum("ij,ij->i", D @ np.linalg.inv(cov), D) + 0.5 * np.linalg.slogdet(cov)[1]

        return half_maha(self.mean_safe, self.cov_safe) - half_maha(self.mean_unsafe, self.cov_unsafe)

    def contains(self, X) -> np.ndarray:
        """True where x ∈ Φ_ε, i.e. Γ(x) ≤ ρ."""
        return self.gamma(X) <= self.rho

    def posterior_safe(self, X) -> np.ndarray:
        """p(S | x) = 1 / (1 + exp(Γ(x) + ln((1 − p_S)/p_S)))."""
        z = self.gamma(X) + np.log((1 - self.p_safe) / self.p_safe)
        return 1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))

    # -- Appendix A: the shape of the boundary ----------------------------------------------------
    def boundary(self, rtol: float = 1e-9) -> dict:
        """Classify the boundary Γ(x) = ρ from A = Σ_S⁻¹ − Σ_U⁻¹.

        Returns ``kind`` (hyperplane, ellipsoid, ellipsoid_exterior, hyperbola/hyperboloid,
        paraboloid), ``case`` (the paper's Case 1 with k = 1 or k ≠ 1, or Case 2), the scalar
        ``k`` with Σ_U = kΣ_S when it exists, ``orientation`` for ellipsoids (positive: Φ_ε is the
        inside, negative: the outside), the eigenvalues of A, and ``empty`` when Φ_ε has no
        point (an ellipsoid whose minimum of Γ exceeds ρ).
        """
        A, d = self.A, self.mean_safe.size
        eig = np.linalg.eigvalsh(A)
        scale = max(np.abs(np.linalg.inv(self.cov_safe)).max(), np.abs(np.linalg.inv(self.cov_unsafe)).max())
        tol = rtol * scale * 1e3
        ratio = self.cov_unsafe / np.where(self.cov_safe == 0, np.nan, self.cov_safe)
        ks = ratio[np.isfinite(ratio)]
        k = None
        if ks.size and np.allclose(self.cov_unsafe, ks.mean() * self.cov_safe, rtol=1e-9, atol=1e-12):
            k = float(ks.mean())
        npos, nneg = int(np.sum(eig > tol)), int(np.sum(eig < -tol))
        out = {"eigenvalues": eig.tolist(), "k": k, "orientation": None, "empty": False}
        if npos == 0 and nneg == 0:
            out.update(kind="hyperplane", case="Case 1 (Σ_U = Σ_S, k = 1)")
        elif npos == d or nneg == d:
            out["kind"] = "ellipsoid" if npos == d else "ellipsoid_exterior"
            out["orientation"] = "positive" if npos == d else "negative"
            out["case"] = (f"Case 1 (Σ_U = kΣ_S, k = {k:.6g})" if k is not None
                           else "Case 2 (quadric: ellipsoid)")
            x0 = -np.linalg.solve(A, self.a)  # the extremum of Γ
            g0 = float(self.gamma(x0[None, :])[0])
            out["centre"] = x0.tolist()
            out["empty"] = bool(npos == d and g0 > self.rho)
        elif npos + nneg == d:
            out.update(kind="hyperbola" if d == 2 else "hyperboloid",
                       case="Case 2 (quadric: eigenvalues of both signs)")
        else:
            out.update(kind="paraboloid", case="Case 2 (quadric: A singular)")
        return out

    # -- sampling and exact rates -------------------------------------------------------------
    def sample(self, n: int, rng, p_safe: float | None = None):
        """n points from the mixture with prior ``p_safe`` (default p_S), shuffled: X, y (+1 = S,
        −1 = U)."""
        p = self.p_safe if p_safe is None else p_safe
        n_s = rng.binomial(n, p)
        X = np.vstack([rng.multivariate_normal(self.mean_safe, self.cov_safe, size=n_s),
                       rng.multivariate_normal(self.mean_unsafe, self.cov_unsafe, size=n - n_s)])
        y = np.r_[np.ones(n_s, int), -np.ones(n - n_s, int)]
        perm = rng.permutation(n)
        return X[perm], y[perm]

    def unsafe_in_region_rate(self, n: int = 2_000_000, seed: int = 12345, chunk: int = 500_000):
        """P(x ∈ Φ_ε | U) by Monte Carlo with ``n`` draws: (estimate, standard error)."""
        key = (self.mean_safe.tobytes(), self.cov_safe.tobytes(), self.mean_unsafe.tobytes(),
               self.cov_unsafe.tobytes(), self.p_safe, self.epsilon, n, seed)
        if key not in _RATE_CACHE:
            _RATE_CACHE[key] = self._unsafe_in_region_rate(n, seed, chunk)
        return _RATE_CACHE[key]

    def _unsafe_in_region_rate(self, n, seed, chunk):
        rng = np.random.default_rng(seed)
        hits, done = 0, 0
        while done < n:
            k = min(chunk, n - done)
            draws = rng.multivariate_normal(self.mean_unsafe, self.cov_unsafe, size=k)
            hits += int(self.contains(draws).sum())
            done += k
        p = hits / n
        return p, float(np.sqrt(max(p * (1 - p), 1.0 / n) / n))

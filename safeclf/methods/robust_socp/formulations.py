"""The formulations of Ben-Tal et al. (2011), Table 1 and section 1.1, as problem data.

Every formulation minimises ½‖w‖² + C Σᵢ ξᵢ, ξ ≥ 0, and has one constraint per point of one of
two shapes (κ = √(2 log(1/ε)), Σᵢ = diag(s_ij ν_ij)):

plain, Lemma 2 (the union of ellipsoids E(µ, D) over µ ∈ [µ⁻, µ⁺] classified correctly):
    1 − ξᵢ + yᵢb + Σⱼ max(−yᵢµ⁻ᵢⱼwⱼ, −yᵢµ⁺ᵢⱼwⱼ) + ‖Dᵢ w‖ ≤ 0
    MM-SBMV (16): µ± bounds, Dᵢ = κΣ₁ᵢ;  MM-SMV (24): µ⁻ = µ⁺ = µ, Dᵢ = κΣ₂ᵢ;
    MM-SBM (27), MM-SM (30): the same with σ̂ = 1;  MM-M (2): Dᵢ = 0, exact means;
    MM-S (3): µ± = (l, u), Dᵢ = 0 (so the sum is −yᵢwᵀcᵢ + ‖Sᵢw‖₁);
    MM-MC (4): exact means, Dᵢ = √((1−ε)/ε) Σᵢ^{1/2} (Chebyshev), Σᵢ the diagonal of the largest
    variances the information allows, or a full covariance matrix per point when one is given
    (then Dᵢ is an n×n matrix and the cone term ‖Dᵢ w‖ couples the features);
    SVM (1): the observed X, Dᵢ = 0.

"-I", Lemma 3 (that set intersected with the support box Rᵢ), with a per-point aᵢ ∈ Rⁿ:
    1 − ξᵢ + yᵢb + Σⱼ max(−lᵢⱼ(yᵢwⱼ + aᵢⱼ), −uᵢⱼ(yᵢwⱼ + aᵢⱼ))
                 + Σⱼ max(µ⁻ᵢⱼaᵢⱼ, µ⁺ᵢⱼaᵢⱼ) + ‖Dᵢ aᵢ‖ ≤ 0
    MM-SBMV-I (23), MM-SMV-I (26), MM-SBM-I (29), MM-SM-I (32).

A formulation that needs exact means uses :attr:`Uncertainty.mean` (the midpoint of the mean
bounds, equal to the mean when it is exact).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from safeclf.data.uncertainty import Uncertainty
from safeclf.methods.robust_socp.nu import nu, nu_bisection


@dataclass(frozen=True)
class Formulation:
    name: str
    equation: str
    mean: str  # "bounds" | "exact" | "support" | "observed"
    radius: str  # "bernstein" | "chebyshev" | "none"
    second_moment: bool = True
    box: bool = False  # the "-I" variants (Lemma 3)
    summary: str = ""


FORMULATIONS: dict[str, Formulation] = {f.name: f for f in [
    Formulation("MM-SBMV", "(16)", "bounds", "bernstein", True, False,
                "support, mean bounds, second-moment bounds"),
    Formulation("MM-SBMV-I", "(23)", "bounds", "bernstein", True, True,
                "MM-SBMV with its uncertainty set cut by the support box"),
    Formulation("MM-SMV", "(24)", "exact", "bernstein", True, False,
                "support, exact mean and second moment"),
    Formulation("MM-SMV-I", "(26)", "exact", "bernstein", True, True,
                "MM-SMV with its uncertainty set cut by the support box"),
    Formulation("MM-SBM", "(27)", "bounds", "bernstein", False, False,
                "support and mean bounds (σ̂ = 1)"),
    Formulation("MM-SBM-I", "(29)", "bounds", "bernstein", False, True,
                "MM-SBM with its uncertainty set cut by the support box"),
    Formulation("MM-SM", "(30)", "exact", "bernstein", False, False,
                "support and exact mean (σ̂ = 1)"),
    Formulation("MM-SM-I", "(32)", "exact", "bernstein", False, True,
                "MM-SM with its uncertainty set cut by the support box"),
    Formulation("MM-M", "(2)", "exact", "none", summary="max-margin on the means"),
    Formulation("MM-S", "(3)", "support", "none", summary="whole support box classified"),
    Formulation("MM-MC", "(4)", "exact", "chebyshev",
                summary="Chebyshev chance constraints from mean and covariance"),
    Formulation("SVM", "(1)", "observed", "none", summary="soft-margin SVM on the observed X"),
]}


def kappa(epsilon: float) -> float:
    """Bernstein's κ = √(2 log(1/ε)) (Theorem 1)."""
    return float(np.sqrt(2.0 * np.log(1.0 / epsilon)))


def kappa_chebyshev(epsilon: float) -> float:
    """Chebyshev's κ_c = √((1−ε)/ε) (eq. 4)."""
    return float(np.sqrt((1.0 - epsilon) / epsilon))


@dataclass(frozen=True)
class ProblemData:
    """One formulation's data: y ∈ {−1, +1}ᵐ, mean bounds (m, n), the ellipsoid's matrix
    already scaled by κ — its diagonal D (m, n), or for MM-MC with a full covariance the
    matrices D (m, n, n), point i's term ‖Dᵢ w‖ — and, for "-I", the support box."""

    formulation: Formulation
    y: np.ndarray
    mean_lo: np.ndarray
    mean_hi: np.ndarray
    D: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    @property
    def shape(self):
        return self.mean_lo.shape


def bernstein_diag(unc: Uncertainty, exact_mean: bool, second_moment: bool,
                   nu_method: str = "sup") -> np.ndarray:
    """s_ij ν(µ̂⁻_ij, µ̂⁺_ij, σ̂_ij): the diagonal of Σ₁ᵢ (eq. 8) or Σ₂ᵢ (eq. 25); ν by
    ``nu_method`` (:data:`.nu.NU_METHODS`: "sup", :func:`.nu.nu`, or "bisection",
    :func:`.nu.nu_bisection`, the paper's section 2.1.1)."""
    nm = unc.normalised(exact_mean=exact_mean, use_second_moment=second_moment)
    return nm.s * _remembered_nu(nm.mu_lo, nm.mu_hi, nm.sigma,
                                 {"sup": nu, "bisection": nu_bisection}[nu_method])


def covariance_root(covariance, shape) -> np.ndarray:
    """Σᵢ^{1/2} for each point (the symmetric square root, by eigendecomposition; (m, n, n)).

    ``covariance`` is one (n, n) matrix shared by all points or one per point (m, n, n),
    symmetric positive semi-definite (a ValueError says which point is not)."""
    m, n = shape
    S = np.asarray(covariance, float)
    if S.shape == (n, n):
        S = np.broadcast_to(S, (m, n, n))
    if S.shape != (m, n, n):
        raise ValueError(f"covariance must have shape ({n}, {n}) or ({m}, {n}, {n}), "
                         f"got {S.shape}")
    scale = np.maximum(np.abs(S).max(axis=(1, 2)), 1e-300)
    asym = np.abs(S - np.swapaxes(S, 1, 2)).max(axis=(1, 2)) > 1e-10 * scale
    if not np.all(np.isfinite(S)) or asym.any():
        i = int(np.flatnonzero(asym | ~np.isfinite(S).all(axis=(1, 2)))[0])
        raise ValueError(f"covariance of point {i} is not a finite symmetric matrix")
    vals, vecs = np.linalg.eigh(0.5 * (S + np.swapaxes(S, 1, 2)))
    neg = vals.min(axis=1) < -1e-10 * scale
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"covariance of point {i} is not positive semi-definite "
                         f"(eigenvalue {vals[i].min():.3g})")
    root = np.sqrt(np.maximum(vals, 0.0))
    return np.einsum("mij,mj,mkj->mik", vecs, root, vecs)


#: ν arrays of the last few inputs (content digest -> read-only array), and their total size
#: in bytes at most: a run's jobs on one data set and split (every formulation and ε; each
#: job's fit, radius ratios and train and test evaluations) ask for the same few ν arrays
#: again and again, and ν is a pure function of the normalised triples.
_NU_MEMO: OrderedDict[tuple, np.ndarray] = OrderedDict()
_NU_MEMO_BYTES = 64 * 2**20
_NU_MEMO_LOCK = threading.Lock()


def _remembered_nu(mu_lo, mu_hi, sigma, nu) -> np.ndarray:
    """``nu`` (:func:`.nu.nu` or :func:`.nu.nu_bisection`) of the (equally shaped) normalised
    arrays, answered from :data:`_NU_MEMO`
    when the same arrays were seen lately (the same values: the key is their bytes' digest,
    with the function, so a ν replaced for a test is not answered from the real one's)."""
    arrays = [np.ascontiguousarray(a, dtype=float) for a in (mu_lo, mu_hi, sigma)]
    digest = hashlib.blake2b(repr(arrays[0].shape).encode(), digest_size=20)
    for a in arrays:
        digest.update(a.tobytes())
    key = (nu, digest.digest())
    with _NU_MEMO_LOCK:
        hit = _NU_MEMO.get(key)
        if hit is not None:
            _NU_MEMO.move_to_end(key)
            return hit
    value = np.array(key[0](*arrays), dtype=float)
    value.flags.writeable = False
    if value.nbytes <= _NU_MEMO_BYTES // 4:
        with _NU_MEMO_LOCK:
            _NU_MEMO[key] = value
            while sum(v.nbytes for v in _NU_MEMO.values()) > _NU_MEMO_BYTES:
                _NU_MEMO.popitem(last=False)
    return value


def problem_data(name: str, unc: Uncertainty, X, y, epsilon: float, nu_method: str = "sup",
                 covariance=None) -> ProblemData:
    """The data of formulation ``name`` for points ``unc`` (observations ``X``), labels ±1.

    ``nu_method`` computes ν for the Bernstein formulations ("sup" or "bisection");
    ``covariance`` (MM-MC only: (n, n) or (m, n, n)) replaces MM-MC's diagonal Σᵢ by full
    covariance matrices, D becoming (m, n, n)."""
    f = FORMULATIONS[name]
    if covariance is not None and f.radius != "chebyshev":
        raise ValueError(f"a covariance matrix is used by MM-MC only, not by {name}")
    y = np.asarray(y, float)
    zero = np.zeros(unc.shape)
    if f.mean == "bounds":
        lo, hi = unc.mean_lo, unc.mean_hi
    elif f.mean == "exact":
        lo = hi = unc.mean
    elif f.mean == "support":
        lo, hi = unc.lower, unc.upper
    else:
        lo = hi = np.asarray(X, float)
    if f.radius == "bernstein":
        D = kappa(epsilon) * bernstein_diag(unc, f.mean == "exact", f.second_moment, nu_method)
    elif f.radius == "chebyshev" and covariance is not None:
        D = kappa_chebyshev(epsilon) * covariance_root(covariance, unc.shape)   # (4), full Σᵢ
    elif f.radius == "chebyshev":
        D = kappa_chebyshev(epsilon) * np.sqrt(unc.variance())
    else:
        D = zero
    if f.box:
        return ProblemData(f, y, lo, hi, D, unc.lower, unc.upper)
    return ProblemData(f, y, lo, hi, D)

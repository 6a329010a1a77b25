"""Uncertain data for the robust SOCP classifiers (Ben-Tal et al. 2011).

Each loader puts the partial information about every entry into ``rows["uncertainty"]``: a
dict of (m, n) arrays ``lower``, ``upper`` (support), ``mean_lo``, ``mean_hi`` (mean bounds;
equal when the mean is exact) and ``second_moment`` (an upper bound on E X², NaN where
unknown), so the runner splits it with the samples (see
:mod:`safeclf.data.uncertainty`). ``X`` holds one observed value of each point,
inside its support. When the generating law is known, ``rows["realisations"]`` (m, k, n) holds
k further draws of every point, for the realised error.

Use these data sets with ``preprocess: none``: a scaler fitted by the runner would rescale X
but not the uncertainty rows (the estimator rejects X outside its supports).
"""

from __future__ import annotations

import numpy as np

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.guarantees.outcome import record
from safeclf.plugins.contract import DatasetPlugin

NOISES = ("uniform", "truncnorm", "beta")
INFORMATION = ("exact", "bounds", "intervals", "replicates")
_BETA = (2.0, 5.0)


def _draw(noise, lower, s, noise_scale, size, rng):
    """``size`` draws (size, m, n) of each entry's true law inside [lower, lower + 2s]."""
    shape = (size,) + lower.shape
    if noise == "uniform":
        xh = rng.uniform(-1.0, 1.0, shape)
    elif noise == "truncnorm":
        from safeclf.data.uncertainty import truncated_normal

        xh = noise_scale * truncated_normal(1.0 / noise_scale, shape, rng)
    else:
        xh = 2.0 * rng.beta(*_BETA, size=shape) - 1.0
    return lower + s * (xh + 1.0)


def _normalised_moments(noise, noise_scale):
    """E X̂ and E X̂² of the normalised law on [−1, 1]."""
    if noise == "uniform":
        return 0.0, 1.0 / 3.0
    if noise == "truncnorm":
        from scipy.stats import truncnorm

        a = 1.0 / noise_scale
        return 0.0, float(noise_scale**2 * truncnorm.var(-a, a))
    a, b = _BETA
    m1 = a / (a + b)
    m2 = a * b / ((a + b) ** 2 * (a + b + 1)) + m1 * m1
    return 2 * m1 - 1, 4 * m2 - 4 * m1 + 1


def load_uncertain_synthetic(
    n_samples: int = 400,
    n_features: int = 2,
    separation: float = 2.0,
    centre_spread: float = 1.0,
    half_width: tuple[float, float] = (0.5, 1.5),
    noise: str = "uniform",
    noise_scale: float = 0.1,
    information: str = "exact",
    mean_slack: float = 0.2,
    moment_slack: float = 0.1,
    n_replicates: int = 10,
    n_realisations: int = 20,
    random_state: int = 0,
):
    """Two classes of uncertain points, as in the paper's synthetic set-up.

    Labels ±1 with equal probability; point i's true mean µᵢ ~ N(yᵢ (separation/2) e₁,
    centre_spread² I); every entry gets a box half-width sᵢⱼ ~ U(half_width) and its value is
    drawn from ``noise`` inside a box of width 2sᵢⱼ placed so that the law's mean is µᵢⱼ:
    ``uniform`` on the box (σ̂² = 1/3), ``truncnorm`` a normal of standard deviation
    noise_scale·sᵢⱼ truncated to the box (small σ̂ inside a wide support: Chebyshev's case),
    ``beta`` a Beta(2, 5) stretched over the box (skewed: µ̂ = −3/7).

    ``information`` is what the learner is told: ``exact`` (support, exact mean and second
    moment), ``bounds`` (support, a mean interval of width mean_slack·2sᵢⱼ placed at random
    around the true mean, and E X² ≤ true + moment_slack·sᵢⱼ²), ``intervals`` (support only) or
    ``replicates`` (n_replicates draws per point, summarised by
    :meth:`Uncertainty.from_replicates`).
    """
    from safeclf.data.uncertainty import Uncertainty

    if noise not in NOISES:
        raise DataError(f"uncertain_synthetic: noise must be one of {', '.join(NOISES)}, got {noise!r}")
    if information not in INFORMATION:
        raise DataError(f"uncertain_synthetic: information must be one of "
                        f"{', '.join(INFORMATION)}, got {information!r}")
    lo_w, hi_w = (float(v) for v in half_width)
    if not 0 < lo_w <= hi_w:
        raise DataError("uncertain_synthetic: half_width must be (low, high) with "
                        f"0 < low <= high, got {list(half_width)}")
    if noise == "truncnorm" and not noise_scale > 0:
        raise DataError(f"uncertain_synthetic: noise_scale must be > 0, got {noise_scale}")
    rng = np.random.default_rng(random_state)
    m, n = n_samples, n_features
    y = np.where(rng.uniform(size=m) < 0.5, -1, 1)
    centre = np.zeros((m, n))
    centre[:, 0] = y * separation / 2.0
    mu = centre + centre_spread * rng.normal(size=(m, n))
    s = rng.uniform(lo_w, hi_w, size=(m, n))
    mhat, m2hat = _normalised_moments(noise, noise_scale)
    c = mu - s * mhat  # box centre so that the mean is µ
    lower, upper = c - s, c + s
    second = c * c + 2 * c * s * mhat + s * s * m2hat  # E X² = E (c + s X̂)²
    if information == "exact":
        unc = Uncertainty.from_moments(lower, upper, mu, second)
    elif information == "bounds":
        width = mean_slack * 2 * s
        mlo = np.maximum(mu - width * rng.uniform(size=(m, n)), lower)
        unc = Uncertainty.from_bounds(lower, upper, mlo, np.minimum(mlo + width, upper),
                                      second + moment_slack * s * s)
    elif information == "intervals":
        unc = Uncertainty.from_intervals(lower, upper)
    else:
        if n_replicates < 2:
            raise DataError(f"uncertain_synthetic: n_replicates must be >= 2, got {n_replicates}")
        reps = _draw(noise, lower, s, noise_scale, n_replicates, rng).transpose(1, 0, 2)
        unc = Uncertainty.from_replicates(reps)
    X = _draw(noise, lower, s, noise_scale, 1, rng)[0]
    if information == "replicates":
        X = reps[:, 0, :]
    rows = {"uncertainty": unc.to_rows()}
    if n_realisations > 0:
        rows["realisations"] = _draw(noise, lower, s, noise_scale, n_realisations,
                                     rng).transpose(1, 0, 2)
    info = {"feature_names": [f"x{j}" for j in range(n)], "noise": noise,
            "information": information, "sigma_hat": float(np.sqrt(m2hat)), "mu_hat": mhat,
            "outcome": record("class", 1, -1, meaning="+1: centred at +separation/2 on the "
                              "first axis; no label is a decision")}
    return checked("uncertain_synthetic", X, y, rows=rows, info=info)


def load_breast_cancer_intervals(
    information: str = "bounds",
    z: float = 2.0,
    support: str = "worst",
    k: float = 3.0,
    scale: bool = True,
):
    """scikit-learn's breast cancer set (569 images, 212 malignant = label 1) as uncertain
    data over its ten nucleus measurements (radius, texture, …, fractal dimension).

    For each image the set reports, per measurement over the cells of the image, the mean
    (columns 0–9), its standard error se (10–19) and the "worst" value, the mean of the three
    largest (20–29). X_ij, the image's true mean measurement j, is read as uncertain:

    - support ``worst``: u = worst, l = max(0, 2·mean − worst) (the reflection of worst about
      the mean: the minimum is not reported, and no measurement is negative); a mean over
      cells lies between the smallest and largest cell values. Support ``se``: mean ± k·se
      (clipped at 0 and within the ``worst`` support), a tighter band that is not a hard bound;
    - mean: the reported mean (``exact``), or mean ± z·se clipped to the support (``bounds``),
      or nothing (``intervals``: support only);
    - second moment: the sampling variance se², capped at (u − mean)(mean − l), the largest
      variance a law on [l, u] with that mean can have: E X² = mean² + se² (``exact``) or
      E X² ≤ max(mean_lo², mean_hi²) + se² (``bounds``).

    This is the case the issue singles out: a small variance inside a wide support, where
    Chebyshev's radius √((1−ε)/ε)·se is far smaller than Bernstein's κ ν s.

    X is the reported mean. ``scale`` divides every measurement (X, supports, means; second
    moments by the square) by the standard deviation of its mean column over the 569 images: a
    fixed change of unit, not fitted on labels.
    """
    from sklearn.datasets import load_breast_cancer

    from safeclf.data.uncertainty import Uncertainty

    if information not in ("exact", "bounds", "intervals"):
        raise DataError("breast_cancer_intervals: information must be exact, bounds or "
                        f"intervals, got {information!r}")
    if not z >= 0:
        raise DataError(f"breast_cancer_intervals: z must be >= 0, got {z}")
    b = load_breast_cancer()
    mean, se, worst = b.data[:, :10], b.data[:, 10:20], b.data[:, 20:30]
    names = [str(n).replace("mean ", "") for n in b.feature_names[:10]]
    if support not in ("worst", "se"):
        raise DataError(f"breast_cancer_intervals: support must be worst or se, got {support!r}")
    upper = np.maximum(worst, mean)
    lower = np.maximum(0.0, 2 * mean - upper)
    if support == "se":
        upper = np.minimum(upper, mean + k * se)
        lower = np.maximum(lower, mean - k * se)
    var = np.minimum(se**2, (upper - mean) * (mean - lower))
    if scale:
        k = mean.std(axis=0)
        mean, se, upper, lower, var = mean / k, se / k, upper / k, lower / k, var / k**2
    where = "breast_cancer_intervals"
    if information == "exact":
        unc = Uncertainty.from_moments(lower, upper, mean, mean**2 + var, where)
    elif information == "bounds":
        mlo = np.clip(mean - z * se, lower, upper)
        mhi = np.clip(mean + z * se, lower, upper)
        unc = Uncertainty.from_bounds(lower, upper, mlo, mhi,
                                      np.maximum(mlo**2, mhi**2) + var, where)
    else:
        unc = Uncertainty.from_intervals(lower, upper, where)
    y = (b.target == 0).astype(int)  # sklearn codes malignant as 0; here malignant = 1
    return checked("breast_cancer_intervals", mean, y, rows={"uncertainty": unc.to_rows()},
                   info={"feature_names": names, "positive": "malignant",
                         "outcome": record("diagnosis", "malignant", "benign",
                                           meaning="label 1: malignant")})


uncertain_synthetic = DatasetPlugin(
    "uncertain_synthetic", load_uncertain_synthetic,
    "two classes of uncertain points: boxes, true laws inside, exact moments / bounds / "
    "intervals / replicates", provides=("uncertainty", "realisations"))
breast_cancer_intervals = DatasetPlugin(
    "breast_cancer_intervals", load_breast_cancer_intervals,
    "breast cancer as interval data: supports and means from mean, s.e. and worst values",
    provides=("uncertainty",))

"""Synthetic generators: two Gaussian classes, an n×n checkerboard, d-dimensional XOR."""

from __future__ import annotations

import numpy as np

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.guarantees.outcome import record
from safeclf.plugins.contract import DatasetPlugin


def _positive_samples(name: str, n_samples: int) -> None:
    if n_samples < 2:
        raise DataError(f"{name}: n_samples must be ≥ 2, got {n_samples}")


def load_gaussians(
    mean_pos: list[float],
    mean_neg: list[float],
    cov_pos: list[list[float]] | None = None,
    cov_neg: list[list[float]] | None = None,
    p_pos: float = 0.5,
    n_samples: int = 1000,
    random_state: int = 0,
):
    """Two Gaussian classes: label ``+1`` ~ N(mean_pos, cov_pos) with prior ``p_pos`` (the
    MC-SVM paper's safe class S and p_S), label ``-1`` ~ N(mean_neg, cov_neg). Covariances
    default to the identity. The true distribution is kept in ``info["gaussians"]`` so exact
    decision regions and Bayes rates can be computed."""
    mp, mn = np.asarray(mean_pos, float), np.asarray(mean_neg, float)
    d = mp.size
    if mn.size != d:
        raise DataError(f"gaussians: mean_pos has {d} entries, mean_neg {mn.size}")
    cp = np.eye(d) if cov_pos is None else np.asarray(cov_pos, float)
    cn = np.eye(d) if cov_neg is None else np.asarray(cov_neg, float)
    for label, c in (("cov_pos", cp), ("cov_neg", cn)):
        if c.shape != (d, d):
            raise DataError(f"gaussians: {label} must be {d}×{d}, got shape {c.shape}")
        if not np.allclose(c, c.T) or np.linalg.eigvalsh(c).min() <= 0:
            raise DataError(f"gaussians: {label} must be symmetric positive definite")
    _positive_samples("gaussians", n_samples)
    if not 0 < p_pos < 1:
        raise DataError(f"gaussians: p_pos must be in (0, 1), got {p_pos}")
    rng = np.random.default_rng(random_state)
    n_pos = rng.binomial(n_samples, p_pos)
    X = np.vstack([
        rng.multivariate_normal(mp, cp, size=n_pos),
        rng.multivariate_normal(mn, cn, size=n_samples - n_pos),
    ])
    y = np.r_[np.ones(n_pos, int), -np.ones(n_samples - n_pos, int)]
    perm = rng.permutation(n_samples)
    info = {"gaussians": {"mean_pos": mp.tolist(), "cov_pos": cp.tolist(),
                          "mean_neg": mn.tolist(), "cov_neg": cn.tolist(), "p_pos": p_pos},
            "outcome": record("class", 1, -1, meaning="+1: drawn from N(mean_pos, cov_pos) "
                              "with prior p_pos (the safe class S of the MC-SVM)")}
    return checked("gaussians", X[perm], y[perm], info=info)


def load_checkerboard(n: int = 8, n_samples: int = 6400, rotation: float = 0.0,
                      random_state: int = 0):
    """Uniform points on the unit square, label = parity of the n×n cell they fall in.
    ``rotation`` (degrees) turns the points about the origin after labelling them, as the
    proset report's "Checker rot" (45°): the pattern's edges are then no longer parallel to
    the axes."""
    if n < 1:
        raise DataError(f"checkerboard: n must be ≥ 1, got {n}")
    _positive_samples("checkerboard", n_samples)
    rng = np.random.default_rng(random_state)
    X = rng.uniform(0.0, 1.0, size=(n_samples, 2))
    cells = np.minimum((X * n).astype(int), n - 1)
    y = (cells.sum(axis=1) % 2).astype(int)
    if rotation:
        a = np.deg2rad(rotation)
        X = X @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    return checked("checkerboard", X, y, info={"outcome": record(
        "cell parity", 1, 0, meaning="1: the point's cell has odd parity; no label is a "
        "decision, a positive rate is the share predicted odd")})


def load_xor(n_features: int = 6, n_samples: int = 6400, n_noise: int = 0,
             random_state: int = 0):
    """Uniform points on [-1, 1]^d, label 1 where the product of the features is positive;
    ``n_noise`` more uniform features that the label does not depend on (the proset report's
    "XOR 6+6f": six of each)."""
    if n_features < 1:
        raise DataError(f"xor: n_features must be ≥ 1, got {n_features}")
    if n_noise < 0:
        raise DataError(f"xor: n_noise must be ≥ 0, got {n_noise}")
    _positive_samples("xor", n_samples)
    rng = np.random.default_rng(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    y = (np.prod(X, axis=1) > 0).astype(int)
    if n_noise:
        X = np.hstack([X, rng.uniform(-1.0, 1.0, size=(n_samples, n_noise))])
    return checked("xor", X, y, info={"outcome": record(
        "product positive", 1, 0, meaning="1: the product of the first n_features features is "
        "positive; no label is a decision")})


gaussians = DatasetPlugin("gaussians", load_gaussians,
                          "two Gaussian classes (+1 with prior p_pos, -1) with chosen moments")
checkerboard = DatasetPlugin("checkerboard", load_checkerboard,
                             "n×n checkerboard on the unit square, two classes")
xor = DatasetPlugin("xor", load_xor, "sign of the product of d uniform features on [-1, 1]")

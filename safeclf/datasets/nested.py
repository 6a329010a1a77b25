"""A synthetic set for nested model selection: the signal lives in the first features.

``x ~ N(0, I_d)`` and ``y = 1[⟨w, x⟩ + σ ε > 0]`` with ``ε ~ N(0, 1)`` and ``w`` non-zero on the
first ``n_signal`` coordinates only. For the nested hierarchy "a linear classifier on the first
k features" (k = 1..d) the best risk in class k is known in closed form: the best linear rule on
the first k features is ``sign(⟨w_{1:k}, x_{1:k}⟩)`` (Gaussian symmetry), and its 0-1 risk is
``arccos(ρ_k) / π`` with ``ρ_k = ‖w_{1:k}‖ / sqrt(‖w‖² + σ²)``. These risks are kept in
``info["prefix_risk"]`` (entry k-1 for the first k features) so a reader can check which class
an oracle should pick.
"""

from __future__ import annotations

import numpy as np

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.guarantees.outcome import record
from safeclf.plugins.contract import DatasetPlugin


def prefix_risks(weights: np.ndarray, noise: float) -> np.ndarray:
    """R*_k = arccos(‖w_{1:k}‖ / sqrt(‖w‖² + σ²)) / π for k = 1..len(w)."""
    total = np.sqrt(np.sum(weights**2) + noise**2)
    rho = np.sqrt(np.cumsum(weights**2)) / total
    return np.arccos(np.clip(rho, -1.0, 1.0)) / np.pi


def load_nested(
    n_samples: int = 40000,
    n_features: int = 64,
    n_signal: int = 12,
    noise: float = 1.0,
    decay: float = 0.9,
    random_state: int = 0,
):
    """``n_samples`` points in ``n_features`` dimensions, labels 0/1 from the first ``n_signal``
    features with weights ``decay**j`` (j = 0..n_signal-1) plus Gaussian label noise of
    standard deviation ``noise`` (σ)."""
    if n_features < 1 or not 1 <= n_signal <= n_features:
        raise DataError(
            f"nested: need 1 ≤ n_signal ≤ n_features, got n_signal={n_signal}, "
            f"n_features={n_features}"
        )
    if noise < 0 or decay <= 0:
        raise DataError(f"nested: noise must be ≥ 0 and decay > 0, got {noise} and {decay}")
    rng = np.random.default_rng(random_state)
    w = np.zeros(n_features)
    w[:n_signal] = decay ** np.arange(n_signal)
    X = rng.standard_normal((n_samples, n_features))
    y = (X @ w + noise * rng.standard_normal(n_samples) > 0).astype(int)
    info = {
        "weights": w.tolist(),
        "noise": noise,
        "n_signal": n_signal,
        "prefix_risk": prefix_risks(w, noise).tolist(),
        "outcome": record("label", 1, 0, meaning="1: ⟨w, x⟩ + σε > 0; no label is a decision"),
    }
    return checked("nested", X, y, info=info)


nested = DatasetPlugin(
    "nested",
    load_nested,
    "Gaussian features, labels from the first n_signal of them (nested model selection)",
)

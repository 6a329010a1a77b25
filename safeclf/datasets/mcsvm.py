"""Loaders for the MC-SVM experiments: several Gaussian data sets with different priors p_S."""

from __future__ import annotations

import numpy as np

from safeclf.datasets import checked
from safeclf.datasets.synthetic import load_gaussians
from safeclf.errors import DataError
from safeclf.plugins.contract import DatasetPlugin


def load_gaussian_priors(
    mean_pos: list[float],
    mean_neg: list[float],
    cov_pos: list[list[float]] | None = None,
    cov_neg: list[list[float]] | None = None,
    p_pos: list[float] = (0.05, 0.95),
    n_samples: int = 10_000,
    compare_sources: bool = False,
    random_state: int = 0,
):
    """One ``gaussians`` data set per prior in ``p_pos`` (label +1 = safe S with that prior,
    −1 = unsafe U), ``n_samples`` points in all, split as evenly as possible, stacked: a
    method fits one model on all of them (MC-SVM Example 3). ``info["gaussians"]`` is the
    distribution of the stacked data: the same moments with p_pos = the share-weighted mean
    prior. With ``compare_sources``, ``rows["source"]`` holds each point's prior, so methods
    that compare models fitted per source data set can (``mcsvm`` reports the angle between
    their w, Example 2)."""
    priors = [float(p) for p in p_pos]
    if not priors:
        raise DataError("gaussian_priors: p_pos must list at least one prior")
    if n_samples < len(priors):
        raise DataError(f"gaussian_priors: n_samples ({n_samples}) is smaller than the number of priors")
    sizes = np.full(len(priors), n_samples // len(priors))
    sizes[: n_samples % len(priors)] += 1
    Xs, ys, src = [], [], []
    for j, (p, n) in enumerate(zip(priors, sizes, strict=True)):
        d = load_gaussians(mean_pos, mean_neg, cov_pos, cov_neg, p_pos=p, n_samples=int(n),
                           random_state=random_state * 1000 + j)
        Xs.append(d.X)
        ys.append(d.y)
        src.append(np.full(int(n), p))
        info = d.info
    X, y, source = np.vstack(Xs), np.concatenate(ys), np.concatenate(src)
    info["gaussians"]["p_pos"] = float(np.dot(priors, sizes) / sizes.sum())
    info["gaussians"]["p_pos_sources"] = priors
    rows = {"source": source} if compare_sources else {}
    return checked("gaussian_priors", X, y, rows=rows, info=info)


gaussian_priors = DatasetPlugin(
    "gaussian_priors", load_gaussian_priors,
    "several two-Gaussian data sets with different priors p_S, stacked (rows 'source' = p_S "
    "with compare_sources)",
    provides=("source",),
)

"""Where a ramp fit starts: at a given point with its multipliers (a warm start, a path's
previous point), or from a coarse fit on a stratified sample of the rows (:func:`coarse_rows`)."""

from __future__ import annotations

import numpy as np


def _start_at(w, b, v, prob, seed, slope=None) -> dict:
    """``mm.solve``'s start at (w, b) with multipliers v: a fresh inner state whose scores are
    those of (w, b) in the inner solver's scale, so each inner dual starts at its cap where
    its hinge is active there (:class:`~safeclf.methods.ramp.dcd.DualState`), and the
    multiplier search's slope estimate of the fit that ended there (None: unknown)."""
    from safeclf.methods.ramp.dcd import DualState

    state = DualState(prob.X.shape[0], seed)
    state.z[:] = 2.0 * prob.z(w, b)  # the inner solver's scale
    return {"w0": np.array(w, dtype=float), "b0": float(b), "v0": np.array(v, dtype=float),
            "state": state, "slope0": slope}


def coarse_rows(y, groups, k, seed) -> np.ndarray:
    """``k`` of the rows, sorted, drawn without replacement and stratified by label and, when
    given, group, so every label × group cell keeps its share: ⌊k·share⌋ rows of each cell,
    and one more for the cells with the largest remainders, drawn uniformly within it."""
    import pandas as pd

    strata = pd.factorize(np.asarray(y))[0].astype(np.int64)
    if groups is not None:
        codes = pd.factorize(np.asarray(groups), use_na_sentinel=False)[0]
        strata = strata * (int(codes.max()) + 1) + codes
    n = strata.size
    counts = np.bincount(strata)
    exact = k * counts / n
    quota = np.floor(exact).astype(np.int64)
    extra = k - int(quota.sum())
    if extra > 0:
        quota[np.argsort(quota - exact, kind="stable")[:extra]] += 1
    # the rows cell by cell, in random order within each cell: each cell's first quota rows
    order = np.lexsort((np.random.default_rng(seed).random(n), strata))
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    rank = np.arange(n) - np.repeat(starts, counts)
    return np.sort(order[rank < np.repeat(quota, counts)])

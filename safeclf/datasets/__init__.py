"""Dataset loaders. Each module exposes :class:`~safeclf.plugins.contract.DatasetPlugin` objects
registered under the ``safeclf.datasets`` entry-point group."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from safeclf.data.task import Dataset
from safeclf.errors import DataError


def project_data_dir() -> Path:
    """The project's ``datasets/`` folder (next to the package in a source checkout), or the
    folder named by ``SAFECLF_DATA``."""
    import os

    env = os.environ.get("SAFECLF_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "datasets"


def checked(name: str, X, y, rows=None, info=None, missing_ok: bool = False) -> Dataset:
    """A :class:`Dataset` after checking what every loader must guarantee: matching lengths,
    finite features (NaN, an empty cell, allowed with ``missing_ok``: a ``preprocess`` impute
    step fills it), no missing labels, at least two classes."""
    y = np.asarray(y)
    n = X.shape[0]
    if n == 0:
        raise DataError(f"dataset '{name}' has no samples")
    if X.ndim != 2 or X.shape[1] == 0:
        raise DataError(f"dataset '{name}' has no feature columns")
    if y.shape[0] != n:
        raise DataError(f"dataset '{name}': {n} feature rows but {y.shape[0]} labels")
    data = X.data if hasattr(X, "tocsr") else np.asarray(X)
    if not np.issubdtype(np.asarray(data).dtype, np.number):
        raise DataError(f"dataset '{name}': features must be numeric")
    bad = ~np.isfinite(data)
    if missing_ok:
        bad &= ~np.isnan(data)
    if bad.any():
        if hasattr(X, "tocsr"):
            raise DataError(f"dataset '{name}' has NaN or infinite feature values")
        r, c = np.argwhere(bad)[0]
        raise DataError(
            f"dataset '{name}' has NaN or infinite feature values ({int(bad.sum())} entries; "
            f"first at row {r}, column {c})"
        )
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise DataError(f"dataset '{name}' has missing labels (row {int(np.flatnonzero(np.isnan(y))[0])})")
    classes = np.unique(y)
    if classes.size < 2:
        raise DataError(f"dataset '{name}' has only one class ({classes[0]!r}); a classifier needs two")
    for key, value in (rows or {}).items():
        length = len(value) if not isinstance(value, dict) else len(next(iter(value.values())))
        if length != n:
            raise DataError(f"dataset '{name}': rows '{key}' has {length} entries for {n} samples")
    return Dataset(name=name, X=X, y=y, rows=dict(rows or {}), info=dict(info or {}))

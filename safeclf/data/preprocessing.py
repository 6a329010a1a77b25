"""The ``preprocess`` step of a dataset or method entry: impute, then scale.

A spec writes it as a scaler's name (``preprocess: standardize``) or as a mapping
(``preprocess: {impute: median, scale: standardize}``). Both are read here, in one place:
:func:`steps` gives the pair ``(impute, scale)``, :func:`build` the unfitted scikit-learn
transformer (a :class:`~sklearn.impute.SimpleImputer`, a scaler, or a two-step
:class:`~sklearn.pipeline.Pipeline` of both), which the job fits on its training part and applies
to every part, and which a saved model keeps in front of its estimator, so ``safeclf predict``
fills and scales new rows with the training statistics.

Imputation fills the empty cells of numeric feature columns (a text column's empty cell is
still refused: a category is not a number to average). A method entry's ``preprocess``
replaces its dataset's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from safeclf.errors import DataError

#: The imputation strategies (scikit-learn's SimpleImputer names).
IMPUTE = ("median", "mean", "most_frequent")
#: The scalers.
SCALE = ("none", "standardize", "minmax", "maxabs")


def steps(how: Any) -> tuple[str | None, str]:
    """``(impute, scale)`` of a ``preprocess`` value: ``None``, a scaler's name, a mapping
    with ``impute`` and ``scale``, or the spec's :class:`~safeclf.spec.schema.Preprocessing`."""
    if how is None:
        return None, "none"
    if isinstance(how, str):
        return None, how
    if not isinstance(how, dict):
        how = how.model_dump()
    return how.get("impute"), how.get("scale") or "none"


def imputes(how: Any) -> bool:
    """Whether ``how`` fills empty cells."""
    return steps(how)[0] is not None


def describe(how: Any) -> str:
    """``how`` said in a message: ``standardize``, ``median imputation, then standardize``."""
    impute, scale = steps(how)
    if impute is None:
        return scale
    return f"{impute} imputation" + (f", then {scale}" if scale != "none" else "")


def build(how: Any, sparse: bool = False):
    """The unfitted transformer of ``how`` for features that are ``sparse`` or dense, or
    ``None`` when it does nothing."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    impute, scale = steps(how)
    scaler = {"standardize": lambda: StandardScaler(with_mean=not sparse),
              "minmax": MinMaxScaler, "maxabs": MaxAbsScaler}.get(scale, lambda: None)()
    imputer = None if impute is None else SimpleImputer(strategy=impute)
    if imputer is not None and scaler is not None:
        return Pipeline([("impute", imputer), ("scale", scaler)])
    return imputer if imputer is not None else scaler


def scaler_of(transformer):
    """The scaler inside a fitted transformer of :func:`build` (or ``None``)."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline

    if isinstance(transformer, Pipeline):
        return transformer[-1]
    return None if isinstance(transformer, SimpleImputer) else transformer


def fit(how: Any, X, where: str, names: list[str] | None = None):
    """The transformer of ``how`` fitted on ``X`` (or ``None``). A column with no value at all
    cannot be imputed: :class:`DataError` naming it (``where`` says whose rows these are)."""
    sparse = hasattr(X, "tocsr")
    impute, scale = steps(how)
    if scale == "minmax" and sparse:
        raise DataError(f"{where} is sparse and minmax would densify it; use maxabs (or "
                        "standardize, which keeps sparsity)")
    if not sparse:
        nan = np.isnan(np.asarray(X, dtype=float))

        def column(c: int) -> str:
            return f"'{names[c]}'" if names is not None and c < len(names) else str(c)

        if impute is None and nan.any():  # a loader told to keep empty cells (keep_empty)
            c = int(np.flatnonzero(nan.any(axis=0))[0])
            raise DataError(f"{where}: feature column {column(c)} has empty cells and preprocess "
                            f"'{describe(how)}' does not fill them; add impute (preprocess: "
                            "{impute: median, ...})")
        empty = np.flatnonzero(nan.all(axis=0)) if impute is not None else []
        if len(empty):
            raise DataError(f"{where}: feature column {column(int(empty[0]))} is empty in every "
                            "training row; nothing to impute it from (drop the column)")
    transformer = build(how, sparse)
    return None if transformer is None else transformer.fit(X)

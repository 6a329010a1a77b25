"""New rows for a saved model: encoded as its training data was, each bad cell named.

:func:`encode` turns a CSV read by ``safeclf predict`` into the model's feature matrix: the
training columns in the training order, one-hot categories re-aligned to the training ones.
A cell the model cannot take is a problem of its row: empty (unless the model imputes that
numeric column), not a number, infinite, or a category not seen in training. By default the
first one stops the batch (one line naming its column, CSV line and value); with ``skip``, the
rows without a problem are encoded and every problem is returned as a row of a table
(``line``, ``column``, ``value``, ``reason``) for the caller to report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from safeclf.errors import DataError

#: The columns of the bad-rows table.
BAD_COLUMNS = ("line", "column", "value", "reason")


@dataclass
class Encoded:
    """The encoded good rows ``X``, which rows of the frame they are (``keep``, a boolean
    mask), and the problems of the others (``bad``: a DataFrame with :data:`BAD_COLUMNS`)."""

    X: np.ndarray
    keep: np.ndarray
    bad: Any


def line(index) -> int:
    """The CSV line of a data row (line 1 is the header)."""
    return int(index) + 2


def _checks(X, names: list[str], imputed: bool):
    """``(mask, reason(column, value))`` for each kind of bad cell, in the order they are
    reported; a cell is flagged by the first check that catches it."""
    import pandas as pd

    cols = list(X.columns)
    numeric = [c for c in cols if c in names]  # encoded as themselves in training
    empty = X.isna()
    if imputed:
        empty[numeric] = False
    as_numbers = X[numeric].apply(pd.to_numeric, errors="coerce")
    not_number = (as_numbers.isna() & X[numeric].notna()).reindex(columns=cols,
                                                                  fill_value=False)
    infinite = as_numbers.isin([np.inf, -np.inf]).reindex(columns=cols, fill_value=False)
    yield empty, lambda c, v: "is empty" + (" (imputation fills numeric columns only)"
                                            if imputed else "")
    yield not_number, lambda c, v: f"holds {str(v)[:40]!r}, not a number"
    yield infinite, lambda c, v: f"holds {v}"


def _unseen(X, names: list[str]):
    """The categories no training row had, and how to say it."""
    import pandas as pd

    categorical = [c for c in X.columns if c not in names]
    mask = pd.DataFrame({c: X[c].notna() & ~X[c].astype(str).radd(f"{c}_").isin(names)
                         for c in categorical}, index=X.index).reindex(columns=X.columns,
                                                                      fill_value=False)

    def reason(col, value):
        seen = [n.removeprefix(f"{col}_") for n in names if n.startswith(f"{col}_")]
        return (f"holds {str(value)[:40]!r}, a category not seen in training (seen: "
                f"{', '.join(seen[:8])}{', ...' if len(seen) > 8 else ''})")

    return mask, reason


def _first(mask, X, where: str, reason, hint: str = "--skip-bad-rows") -> None:
    """Raise naming the first flagged cell of ``mask`` (``hint``: how to skip bad rows)."""
    rows = np.flatnonzero(mask.to_numpy().any(axis=1))
    col = mask.columns[int(np.flatnonzero(mask.iloc[rows[0]].to_numpy())[0])]
    more = f" ({len(rows)} rows in all)" if len(rows) > 1 else ""
    raise DataError(f"{where}: column '{col}' at line {line(X.index[rows[0]])} "
                    f"{reason(col, X[col].iloc[rows[0]])}{more}; {hint} scores the other "
                    "rows and lists the bad ones")


def encode(frame, meta: dict[str, Any], where: str, skip: bool = False,
           hint: str = "--skip-bad-rows") -> Encoded:
    """``frame``'s rows encoded for the model described by ``meta`` (its ``models/<job>.json``).

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows as read from the CSV (index 0 is line 2).
    meta : dict
        The model's metadata: ``feature_names``, ``columns``, ``dataset`` and ``preprocess``.
    where : str
        Where the rows come from, for messages (``--data 'new.csv'``).
    skip : bool
        Report bad rows instead of refusing the batch.
    hint : str, default "--skip-bad-rows"
        How the caller skips bad rows, named in the refusal (``skip_bad_rows=True`` in
        Python).

    Returns
    -------
    Encoded
        ``X`` (n_good × n_features), the mask of good rows, the table of problems.
    """
    import pandas as pd

    params = meta["dataset"].get("params") or {}
    names = meta["feature_names"]
    drop = [c for c in (params.get("target"), params.get("group")) if c and c in frame.columns]
    cols = meta.get("columns") or params.get("features") or [c for c in frame.columns
                                                            if c not in drop]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise DataError(f"{where}: column '{missing[0]}' used in training is missing "
                        f"(columns: {list(frame.columns)})")
    X = frame[cols]
    imputed = (meta.get("preprocess") or {}).get("impute") is not None
    checks = list(_checks(X, names, imputed))
    if params.get("one_hot", True):
        checks.append(_unseen(X, names))
    flagged = pd.DataFrame(False, index=X.index, columns=X.columns)
    problems = []
    for mask, reason in checks:
        mask = mask & ~flagged
        if not mask.to_numpy().any():
            continue
        if not skip:
            _first(mask, X, where, reason, hint)
        flagged |= mask
        for r, c in zip(*np.nonzero(mask.to_numpy())):
            col, value = X.columns[c], X.iloc[r, c]
            problems.append((line(X.index[r]), col, "" if pd.isna(value) else str(value)[:80],
                             reason(col, value)))
    keep = ~flagged.to_numpy().any(axis=1)
    bad = pd.DataFrame(sorted(problems, key=lambda p: p[0]), columns=list(BAD_COLUMNS))
    good = X[keep]
    numeric = [c for c in cols if c in names]
    good = good.astype({c: float for c in numeric}) if len(good) else good
    if params.get("one_hot", True):
        good = pd.get_dummies(good, dtype=float)
    good = good.reindex(columns=names, fill_value=0.0)
    return Encoded(X=good.to_numpy(dtype=float), keep=keep, bad=bad)


def as_written(frame):
    """``frame`` with each float column whose values are all whole numbers (pandas reads an
    integer column with an empty cell as floats) as integers, so a CSV written from it says
    ``21`` where its input said ``21``, not ``21.0``; empty cells stay empty."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if pd.api.types.is_float_dtype(values):
            present = values.dropna()
            if len(present) and np.isfinite(present).all() and (present % 1 == 0).all() \
                    and present.abs().max() < 2**53:
                out[column] = values.astype("Int64")
    return out

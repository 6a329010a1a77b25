"""``csv``: any comma-separated file with a target column and optional group column."""

from __future__ import annotations

from pathlib import Path

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.groups import named_group
from safeclf.plugin import DatasetPlugin


def load_csv(
    path: Path,
    target: str,
    group: str | None = None,
    privileged: str | int | None = None,
    features: list[str] | None = None,
    one_hot: bool = True,
):
    """Read ``path`` (relative to the spec's folder); ``target`` is the label column, ``group``
    (optional) a column of group labels kept in ``rows["groups"]`` (not used as a feature),
    ``privileged`` the value of ``group`` that marks the privileged group (kept in
    ``info["privileged_group"]`` for the fairness figures), ``features`` the feature columns
    (default: all others). Non-numeric feature columns are one-hot encoded when ``one_hot`` is
    true; empty cells are an error, not silently imputed."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"csv: data file '{path}' does not exist")
    try:
        frame = pd.read_csv(p)
    except Exception as exc:  # pandas raises many parser error types
        raise DataError(f"csv: cannot read '{path}': {str(exc).splitlines()[0]}") from None
    for col in [target, group, *(features or [])]:
        if col is not None and col not in frame.columns:
            raise DataError(f"csv: column '{col}' is not in '{path}' (columns: {list(frame.columns)})")
    y = frame[target].to_numpy()
    if frame[target].isna().any():
        raise DataError(f"csv: target column '{target}' has empty cells in '{path}'")
    cols = features or [c for c in frame.columns if c not in (target, group)]
    Xf = frame[cols]
    if one_hot:
        Xf = pd.get_dummies(Xf, dtype=float)
    try:
        X = Xf.to_numpy(dtype=float)
    except ValueError:
        raise DataError(f"csv: non-numeric feature columns in '{path}' (set one_hot: true)") from None
    rows = {"groups": frame[group].to_numpy()} if group else {}
    info = {"feature_names": list(Xf.columns), "columns": list(cols)}
    if privileged is not None:
        if not group:
            raise DataError("csv: 'privileged' names a group, so 'group' must name the group column")
        info["privileged_group"] = named_group(
            privileged, frame[group].to_numpy(), "csv: privileged group",
            f"column '{group}' in '{path}'")
    return checked(f"csv:{p.name}", X, y, rows=rows, info=info)


csv = DatasetPlugin("csv", load_csv, "a CSV file: target column, optional group column",
                    provides=("groups",))

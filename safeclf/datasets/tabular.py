"""``csv``: any comma-separated file with a target column and optional group column."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from safeclf.datasets import checked
from safeclf.errors import DataError
from safeclf.guarantees.groups import named_group
from safeclf.plugins.contract import DatasetPlugin


def load_csv(
    path: Path,
    target: str,
    group: str | list[str] | None = None,
    privileged: str | int | list[str | int] | None = None,
    features: list[str] | None = None,
    one_hot: bool = True,
    group_as_feature: bool = False,
    keep_empty: bool = False,
    positive: str | int | float | bool | None = None,
):
    """Read ``path`` (relative to the spec's folder); ``target`` is the label column, ``group``
    (optional) a column of group labels kept in ``rows["groups"]`` (not used as a feature),
    or a list of columns (``[sex, race]``) whose intersections are the groups
    (``"Female & Black"``, :func:`safeclf.guarantees.groups.intersect`; each column is also kept as
    ``rows[<column>]``, so a constraint can compare along one of them with ``groups: race``),
    ``privileged`` the value of ``group`` that marks the privileged group (kept in
    ``info["privileged_group"]`` for the fairness figures; a list names an intersection by
    its parts), ``features`` the feature columns
    (default: all others), ``group_as_feature`` also uses the group column as a feature (a
    method that decides per group, such as group thresholds, needs it at prediction).
    Non-numeric feature columns are one-hot encoded when ``one_hot`` is true; empty cells are an
    error, not silently imputed, unless ``keep_empty`` (set by the runner when the entry's
    ``preprocess`` imputes) keeps those of numeric columns as NaN for the impute step; a
    column named twice in the header, the target or group among the features, or a group
    equal to the target is refused.

    ``positive`` names the target value that is the favourable decision (``approve``; compared
    as text, so ``1`` matches an integer column): the target must then hold exactly two
    values, and is encoded as 0/1 with 1 = ``positive``, recorded in ``info["outcome"]``
    (:mod:`safeclf.guarantees.outcome`), so every rate of positive predictions counts the favourable
    one. Without it, 0/1 or boolean labels take 1 / True as favourable; any other labels have
    no favourable outcome, and a promise that counts favourable decisions is refused."""
    import pandas as pd

    from safeclf._utils.paths import what_is
    from safeclf.guarantees import groups as G

    columns = [group] if isinstance(group, str) else list(group or [])
    if group is not None and not columns:
        raise DataError("csv: group is an empty list; name a column or leave it out")
    if len(set(columns)) < len(columns):
        raise DataError(f"csv: group names a column twice ({columns})")
    for col in columns if len(columns) > 1 else ():  # kept as rows[<column>] as well
        if col in RESERVED_ROWS:
            raise DataError(f"csv: group column '{col}' has the name of a row entry safeclf "
                            f"reserves ({', '.join(RESERVED_ROWS)}); rename the column")
    p = Path(path)
    kind = what_is(p)
    if kind != "a regular file":  # reading a FIFO or /dev/zero would never end
        state = "does not exist" if kind == "missing" else f"is {kind}, not a regular file"
        raise DataError(f"csv: data file '{path}' {state}")
    try:
        frame = pd.read_csv(p)
    except Exception as exc:  # pandas raises many parser error types
        raise DataError(f"csv: cannot read '{path}': {str(exc).splitlines()[0]}") from None
    for col in columns[1:]:
        _check_roles(_header(p), target, col, features, path)
    group = columns[0] if columns else None
    _check_roles(_header(p), target, group, features, path)
    if features is not None and not features:
        raise DataError("csv: features is empty; list at least one column or leave it out "
                        "for every column but the target and group")
    for col in [target, *columns, *(features or [])]:
        if col is not None and col not in frame.columns:
            raise DataError(f"csv: column '{col}' is not in '{path}' (columns: {list(frame.columns)})")
    y = frame[target].to_numpy()
    if frame[target].isna().any():
        line = _line(p, int(np.flatnonzero(frame[target].isna().to_numpy())[0]))
        raise DataError(f"csv: target column '{target}' has empty cells in '{path}' (first at "
                        f"line {line})")
    for col in columns:
        if frame[col].isna().any():
            line = _line(p, int(np.flatnonzero(frame[col].isna().to_numpy())[0]))
            raise DataError(f"csv: group column '{col}' has empty cells in '{path}' (first at "
                            f"line {line}); give every row a group")
        _check_group_count(frame[col], col, path)
    cols = list(features or [c for c in frame.columns if c != target and c not in columns])
    if group_as_feature:
        if group is None:
            raise DataError("csv: 'group_as_feature' needs 'group' to name the group column")
        cols.extend(columns)
    if not cols:
        raise DataError(f"csv: '{path}' has no feature columns besides the target and group")
    _check_cells(frame[cols], p, keep_empty)
    Xf = frame[cols]
    if one_hot:
        _check_text_columns(Xf, path)
        Xf = pd.get_dummies(Xf, dtype=float)
    try:
        X = Xf.to_numpy(dtype=float)
    except ValueError:
        raise DataError(f"csv: non-numeric feature columns in '{path}' (set one_hot: true)") from None
    from safeclf.guarantees import outcome

    info = {"feature_names": list(Xf.columns), "columns": list(cols), "target": target}
    if positive is not None:
        y, info[outcome.KEY] = outcome.encode(y, target, positive)
    elif (found := outcome.implicit(y, target)) is not None:
        info[outcome.KEY] = found
    rows = {}
    if columns:
        rows["groups"] = (frame[group].to_numpy() if len(columns) == 1
                          else G.intersect([frame[c].to_numpy() for c in columns]))
        if len(columns) > 1:
            rows.update({c: frame[c].to_numpy().astype(str).astype(object) for c in columns})
    if len(columns) > 1:
        info["group_columns"] = columns
    if privileged is not None:
        if not group:
            raise DataError("csv: 'privileged' names a group, so 'group' must name the group column")
        if isinstance(privileged, list) and len(privileged) != len(columns):
            raise DataError(f"csv: privileged {privileged} names {len(privileged)} values for "
                            f"{len(columns)} group columns {columns}; name one value per column")
        of = (f"column '{group}' in '{path}'" if len(columns) == 1
              else f"the intersections of columns {columns} in '{path}'")
        info["privileged_group"] = named_group(
            G.label(privileged), rows["groups"], "csv: privileged group", of)
    return checked(f"csv:{p.name}", X, y, rows=rows, info=info, missing_ok=keep_empty)


#: More distinct values than this, in a group column holding more than half as many values as
#: rows, is a column that names no groups (a numeric feature or an id given as ``group``).
MAX_GROUPS = 50


def _check_group_count(values, col: str, path) -> None:
    """Refuse a group column whose values are mostly unique (every comparison would be between
    groups of a row or two, one constraint and one promise per pair, none meaningful) or that
    holds one value only (it names no comparison at all)."""
    distinct = int(values.nunique())
    if distinct == 1:
        raise DataError(f"csv: group column '{col}' in '{path}' holds one group only "
                        f"('{values.iloc[0]}' on all {len(values)} rows), so no group can be "
                        "compared with another; give a column with at least two groups, or "
                        "leave 'group' out")
    if distinct > MAX_GROUPS and distinct > len(values) / 2:
        raise DataError(f"csv: group column '{col}' in '{path}' has {distinct} distinct values "
                        f"in {len(values)} rows, so it names no groups (a numeric column or an "
                        "id?); give a column of a few group labels, or bin this one first")


#: A text column with more distinct values than this share of the rows (and more than
#: :data:`MAX_GROUPS`) is an identifier or free text, not a category: one-hot encoding it
#: would give a column per row.
ID_SHARE = 0.5
#: The most columns one-hot encoding may produce before the load is refused.
MAX_ONE_HOT = 5000


def _check_text_columns(features, path) -> None:
    """Refuse, before encoding, text columns that name rows rather than categories (an id,
    a name, free text) and an encoding that would be wider than :data:`MAX_ONE_HOT`: either
    makes a one-hot matrix as wide as the data is long, and a fit that runs for hours."""
    text = features.select_dtypes(exclude="number")
    if text.empty:
        return
    n = len(features)
    distinct = text.nunique()
    ids = [c for c in text.columns if distinct[c] > MAX_GROUPS and distinct[c] > ID_SHARE * n]
    if ids:
        shown = ", ".join(f"'{c}' ({int(distinct[c]):,} distinct values)" for c in ids)
        raise DataError(f"csv: text column{'s' if len(ids) > 1 else ''} {shown} in '{path}' "
                        f"({n:,} rows) name{'' if len(ids) > 1 else 's'} rows, not categories; "
                        "leave them out with features: [...] (or drop them from the file)")
    width = int(distinct.sum())
    if width > MAX_ONE_HOT:
        top = ", ".join(f"'{c}' ({int(v):,})" for c, v in distinct.nlargest(3).items())
        raise DataError(f"csv: one-hot encoding the text columns of '{path}' would make "
                        f"{width:,} feature columns (largest: {top}); leave some out with "
                        "features: [...] or bin them")


#: Row entries with a meaning of their own, which a group column may not shadow.
RESERVED_ROWS = ("groups", "split", "baseline", "role", "uncertainty")


def _header(path: Path) -> list[str]:
    """The CSV's column names as written (pandas renames a repeated name ``y`` to ``y.1``,
    which would turn a second label column into a feature)."""
    import csv as csv_module

    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        return next(csv_module.reader(handle), [])


def _line(path: Path, index: int) -> int:
    """The line of ``path`` on which data row ``index`` (0-based, the header not counted)
    starts, as an editor numbers it: blank lines are skipped as pandas skips them, a quoted
    line break inside a cell counts."""
    import csv as csv_module

    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv_module.reader(handle)
        start, record = 1, -1  # the header is record -1
        for row in reader:
            if row:
                if record == index:
                    return start
                record += 1
            start = reader.line_num + 1
    return index + 2


def _check_cells(features, path: Path, keep_empty: bool = False) -> None:
    """Refuse empty cells (but those of numeric columns with ``keep_empty``) and infinite
    numbers in the feature columns, naming the first one's column and line."""
    import pandas as pd

    numeric = features.select_dtypes("number")
    empty = features.isna()
    if keep_empty:
        empty[numeric.columns] = False
    bad = empty | (numeric.isin([np.inf, -np.inf]).reindex(
        columns=features.columns, fill_value=False))
    if not bad.to_numpy().any():
        return
    row = int(np.flatnonzero(bad.to_numpy().any(axis=1))[0])
    column = features.columns[int(np.flatnonzero(bad.iloc[row].to_numpy())[0])]
    cell = features.iloc[row][column]
    what = "an empty cell" if pd.isna(cell) else f"the value {cell}"
    raise DataError(f"csv: feature column '{column}' has {what} at line {_line(path, row)} of "
                    f"'{path}' ({int(bad.to_numpy().sum())} empty or infinite cells in all); "
                    "fill them in or drop those rows"
                    + ("" if keep_empty else
                       ", or impute numeric columns with preprocess: {impute: median}"))


def _check_roles(header: list[str], target: str, group: str | None, features, path) -> None:
    """Refuse columns whose roles collide: a repeated name, the target or the group listed
    as a feature, the group equal to the target."""
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise DataError(f"csv: column name '{name}' appears more than once in the header of "
                            f"'{path}'; rename the columns so each is named once")
        seen.add(name)
    if group is not None and group == target:
        raise DataError(f"csv: group '{group}' is also the target; the group column must be "
                        "another column")
    for i, name in enumerate(features or []):
        if name in (target, group):
            role = "target" if name == target else "group"
            hint = ("; set group_as_feature: true to use the group as a feature"
                    if role == "group" else "")
            raise DataError(f"csv: features[{i}] is '{name}', the {role} column; a {role} "
                            f"is not listed as a feature{hint}")


csv = DatasetPlugin("csv", load_csv, "a CSV file: target column, optional group column",
                    provides=("groups",))

"""Where the features encode the group, so a rule with a threshold per group can be applied
when predicting from X alone (``predict`` sees no group column), and which columns a
group-blind rule must not read.

:func:`find` looks, on the training rows, for the columns that determine each row's group:
one column whose values stand one-to-one for the groups (a 0/1 column for two groups, a
label-encoded column), else one-hot indicator columns, one per group (one group may be the
rows where every indicator is 0, as with a dropped reference level). The result is a
:class:`GroupEncoding` that maps new rows back to their group, or ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from safeclf.errors import DataError


@dataclass(frozen=True)
class GroupEncoding:
    """``columns`` of X whose values (joined as text in ``lookup``'s keys) give the group."""

    columns: tuple
    lookup: dict

    def groups_of(self, X, at=None) -> np.ndarray:
        """The group of each row of X (of rows ``at`` only, when given); a row whose values
        match no group is an error."""
        cols = _dense(X, list(self.columns))
        cols = cols if at is None else cols[at]
        out = np.full(cols.shape[0], None, dtype=object)
        for key, group in self.lookup.items():
            values = np.array([float(v) for v in key.split("|")])
            out[np.all(cols == values, axis=1)] = group
        if np.equal(out, None).any():
            raise DataError("a row's group columns hold values not seen at fit, so its group "
                            "(and so its threshold) is unknown")
        return out


def _dense(X, cols):
    part = X[:, cols]
    return np.asarray(part.toarray() if sp.issparse(part) else part, dtype=float)


def _key(values) -> str:
    return "|".join(repr(float(v)) for v in values)


#: Rows :func:`find` looks at first: a column with more distinct values among them than there
#: are groups (and than 2) encodes none, whatever the other rows hold.
PREFIX = 1000


def find(X, groups, at=None) -> GroupEncoding | None:
    """The columns of ``X`` (of its rows ``at``, when given: ``groups`` are theirs) that
    encode ``groups`` (see the module docstring), or None. Indicator columns are recognised
    whatever their two values (a standardised one-hot column is still one)."""
    names, codes = _codes(groups)
    Xc, at = _source(X, at)
    indicators = {}  # group -> (column, value on its rows, value elsewhere)
    most = max(names.size, 2)  # more distinct values than this: neither kind of column
    for j in range(Xc.shape[1]):
        prefix = np.unique(_column(Xc, j, at, PREFIX))
        if prefix.size > most:  # a prefix says it without sorting all rows
            continue
        col = _column(Xc, j, at)
        values, at_value, hit = _values(col, prefix)
        if values.size not in (names.size, 2):
            continue
        owner, whole = _owners(at_value, hit, values.size, codes, names.size)
        if values.size == names.size and np.all(owner >= 0):
            return GroupEncoding((j,), {_key([v]): str(names[o]) for v, o in zip(values, owner)})
        if values.size == 2:
            for on, off in ((0, 1), (1, 0)):
                o = owner[on]
                if o >= 0 and str(names[o]) not in indicators and whole[on]:
                    indicators[str(names[o])] = (j, float(values[on]), float(values[off]))
                    break
    if indicators and len(indicators) >= names.size - 1:
        used = [str(g) for g in names if str(g) in indicators]
        columns = tuple(indicators[g][0] for g in used)
        lookup = {_key([indicators[h][1] if h == g else indicators[h][2] for h in used]): str(g)
                  for g in names}
        return GroupEncoding(columns, lookup)
    return None


def _codes(groups):
    from safeclf.guarantees.groups import codes

    return codes(groups)


def _source(X, at):
    """(X as its columns are read: CSC when sparse, else an array; the rows to read, None:
    all). A dense array is read in place at rows ``at`` (no copy of the rows: on a million
    rows the copy cost more than the search); anything else is first cut to them."""
    if at is not None and not isinstance(X, np.ndarray):
        X, at = (X.iloc[at] if hasattr(X, "iloc") else X[at]), None
    return (X.tocsc() if sp.issparse(X) else np.asarray(X)), at


def _column(Xc, j: int, at=None, first: int | None = None) -> np.ndarray:
    """Column ``j`` as floats, at rows ``at`` (None: all; a dense source only, see
    :func:`_source`), its ``first`` values only when given (a view of a dense float array
    where it can be: no copy for a column that the first rows already rule out)."""
    if sp.issparse(Xc):
        col = _dense(Xc, [j]).ravel()
        return col if first is None else col[:first]
    if at is not None:
        return np.asarray(Xc[at if first is None else at[:first], j], dtype=float)
    return np.asarray(Xc[:, j] if first is None else Xc[:first, j], dtype=float)


def _values(col, prefix):
    """(``np.unique(col)``, each row's position among those values, whether it holds it: a
    NaN holds none, as ``col == nan`` says), given ``prefix``, the distinct values of its
    first rows: those, when every row holds one of them (no sort of the rows)."""
    if prefix.size and not np.isnan(prefix).any():
        at, hit = _positions(col, prefix)
        if hit.all():
            return prefix, at, hit
    values = np.unique(col)
    return (values, *_positions(col, values))


def _positions(col, values):
    if values.size <= 8:  # among a few values: by comparisons
        at = np.zeros(col.shape, dtype=np.intp)
        for v in values[:-1]:
            at += col > v
    else:
        at = np.minimum(np.searchsorted(values, col), max(values.size - 1, 0))
    return at, (values[at] == col if values.size else np.zeros(col.shape, bool))


def _owners(at, hit, n_values: int, codes, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``n_values`` values (rows at positions ``at`` hold one where ``hit``,
    :func:`_values`): the one group (its code among ``k``) whose rows hold it, -1 where no
    row or rows of several groups hold it; and whether every row of that group holds it."""
    keys = at * k + codes if hit.all() else at[hit] * k + codes[hit]
    if n_values * k <= keys.size:  # a table of (value, group) row counts
        count = np.bincount(keys, minlength=n_values * k)
        pairs = np.flatnonzero(count)
        count = count[pairs]
    else:
        pairs, count = np.unique(keys, return_counts=True)
    value, group = pairs // k, pairs % k
    n_groups = np.bincount(value, minlength=n_values)
    owner = np.full(n_values, -1)
    owner[value] = group  # the right one wherever a single group holds the value
    owner[n_groups != 1] = -1
    rows = np.zeros(n_values, dtype=np.int64)
    rows[value] = count
    sizes = np.bincount(codes, minlength=k)
    whole = (owner >= 0) & (rows == sizes[np.maximum(owner, 0)])
    return owner, whole


@dataclass(frozen=True)
class IntersectionEncoding:
    """Intersectional groups (``"Female & Black"``) read from the encodings of their component
    columns (``sex`` and ``race`` one-hot in X, each found by :func:`find`), joined in the
    order the groups were made (:func:`safeclf.guarantees.groups.intersect`)."""

    parts: tuple

    @property
    def columns(self) -> tuple:
        return tuple(sorted({c for p in self.parts for c in p.columns}))

    def groups_of(self, X, at=None) -> np.ndarray:
        from safeclf.guarantees.groups import intersect

        return intersect([p.groups_of(X, at) for p in self.parts])


def find_any(X, groups, components=None, at=None):
    """:func:`find` for ``groups``; where no columns encode the groups themselves and
    ``components`` (the row entries whose intersection they are, in order) are given, an
    :class:`IntersectionEncoding` of the components' encodings when every component is
    encoded; else None. ``at``: of those rows of X only (``groups`` and the components are
    theirs)."""
    found = find(X, groups, at)
    if found is not None or not components:
        return found
    parts = [find(X, c, at) for c in components]
    if any(p is None for p in parts):
        return None
    enc = IntersectionEncoding(tuple(parts))
    return enc if np.array_equal(enc.groups_of(X, at).astype(str),
                                 np.asarray(groups).astype(str)) else None


def encoding_columns(X, groups, at=None) -> tuple[int, ...]:
    """Every column of X that encodes ``groups``: a column whose values stand one-to-one for
    the groups, or an indicator of one group (its rows take one value that no other row
    takes). A group-blind rule leaves all of them out (two one-hot columns of a two-valued
    attribute each encode it alone). ``at``: of those rows of X only (``groups`` are
    theirs)."""
    names, codes = _codes(groups)
    Xc, at = _source(X, at)
    out = []
    for j in range(Xc.shape[1]):
        col = _column(Xc, j, at)
        values = np.unique(col)
        if values.size < 2:
            continue
        owner, whole = _owners(*_positions(col, values), values.size, codes, names.size)
        if (values.size == names.size and np.all(owner >= 0)) or whole.any():
            out.append(j)
    return tuple(out)


def encodes_group(X, rows, group_columns=(), key: str = "groups", at=None) -> bool:
    """Whether some feature column of ``X`` (of its rows ``at``, when given: those of the
    entries ``rows``) encodes the group ``rows[key]`` or one of its components (the
    ``group_columns`` in ``rows``): whether a model fitted on ``X`` can read the group
    (:func:`encoding_columns`)."""
    X = X.to_numpy() if hasattr(X, "iloc") else X
    keys = [rows[key]] + [rows[c] for c in group_columns or () if c in rows]
    return any(encoding_columns(X, g, at) for g in keys)


def require(X, groups, who: str, at=None) -> GroupEncoding:
    """:func:`find`, or a :class:`DataError` saying why ``who`` needs it."""
    found = find(X, groups, at)
    if found is None:
        raise DataError(f"{who}: no feature columns determine the group, so the group cannot "
                        "be known when predicting; keep the group among the features (csv: "
                        "group_as_feature: true; Adult: sensitive_as_feature: true)")
    return found


def drop_columns(X, columns):
    """X without the feature ``columns`` (positions), for an array, a sparse matrix or a
    DataFrame; X itself when there are none."""
    if not len(columns):
        return X
    keep = np.setdiff1d(np.arange(X.shape[1]), np.asarray(columns, dtype=int))
    return X.iloc[:, keep] if hasattr(X, "iloc") else X[:, keep]


def blind_columns(X, rows, promises, group_columns=None) -> tuple[int, ...]:
    """The feature columns a group-blind rule leaves out: every column that encodes the
    groups its promises compare (:func:`encoding_columns`), and each
    component of an intersection (``group_columns``, row entries of ``rows``)."""
    entries = {p.quantity.groups for p in promises if p.quantity.kind in ("ratio", "difference")}
    entries |= {c for c in group_columns or () if c in rows}
    X = X.to_numpy() if hasattr(X, "iloc") else X
    return tuple(sorted({c for e in entries if e in rows
                         for c in encoding_columns(X, rows[e])}))

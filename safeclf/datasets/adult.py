"""UCI Adult (Census Income) from the project's ``datasets/adult/`` folder.

The predefined split is kept (32,561 training rows, 16,281 test rows, in ``rows["split"]``),
groups are the ``sex`` column (``rows["groups"]``, privileged group ``Male``; ``group: race``
or the intersections ``group: [sex, race]``, privileged ``White`` and ``Male & White``, each
column then also kept as ``rows[<column>]``), the label is
1 for ``>50K``. Categorical columns are one-hot encoded (a missing ``?`` becomes all zeros);
numeric columns are left as they are (use the dataset's ``preprocess: standardize``).
``encoding: a9a`` gives LIBSVM's a9a encoding instead (123 binary features, the numeric columns
in quintile bins: :mod:`safeclf.datasets.a9a`), the data of Goh et al. (2016)'s Figure 2.

``n_rows`` keeps a uniform random subsample of that many of the 48,842 pooled rows, drawn with
``subsample_seed`` (the same rows for every seed of a spec: the seeds then vary the split, as
for any other data set); columns are encoded before subsampling, so every subsample has the full
data set's columns. A subsample keeps each row's predefined-split mark, but is meant to be split
with ``split: {test: ...}``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np

from safeclf.datasets import checked, project_data_dir
from safeclf.errors import DataError
from safeclf.guarantees.outcome import record
from safeclf.plugins.contract import DatasetPlugin

COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
#: The favourable outcome: an income above 50K (label 1), as in Goh et al. (2016).
OUTCOME = record("income", ">50K", "<=50K",
                 meaning="label 1: income above 50K, the favourable outcome (Goh et al. 2016)")
#: The protected attributes a ``group`` may name, with each one's privileged value.
PRIVILEGED = {"sex": "Male", "race": "White"}


@lru_cache(maxsize=2)
def _frames(folder: str):
    import pandas as pd

    def read(name, skip):
        path = f"{folder}/{name}"
        try:
            return pd.read_csv(path, header=None, names=COLUMNS, skiprows=skip,
                               skipinitialspace=True, na_values="?", compression="gzip")
        except FileNotFoundError:
            raise DataError(f"adult: data file '{path}' does not exist") from None

    train, test = read("adult.data.gz", 0), read("adult.test.gz", 1)
    test["income"] = test["income"].str.rstrip(".")
    return train, test


def load_adult(
    sensitive_as_feature: bool = True,
    sparse: bool = False,
    drop: list[str] | None = None,
    folder: str | None = None,
    n_rows: int | None = None,
    subsample_seed: int = 0,
    group: str | list[str] = "sex",
    encoding: Literal["onehot", "a9a"] = "onehot",
):
    """Adult with its predefined split; ``sensitive_as_feature`` keeps ``sex`` among the
    features, ``sparse`` returns a CSR matrix, ``drop`` removes columns before encoding,
    ``n_rows`` keeps a random subsample of that many rows (drawn with ``subsample_seed``),
    ``group`` the protected attribute(s) whose values (or intersections) are the groups,
    ``encoding`` one-hot categories beside the raw numbers, or a9a's 123 binary features."""
    import pandas as pd

    from safeclf.guarantees import groups as G

    columns = [group] if isinstance(group, str) else list(group)
    for c in columns:
        if c not in PRIVILEGED:
            raise DataError(f"adult: group '{c}' is not a protected attribute of Adult (known: "
                            f"{', '.join(PRIVILEGED)})")
    if not columns or len(set(columns)) < len(columns):
        raise DataError(f"adult: group must name sex, race or both once each, got {group}")

    base = folder or str(project_data_dir() / "adult")
    train, test = _frames(base)
    frame = pd.concat([train, test], ignore_index=True)
    parts = {c: frame[c].to_numpy() for c in columns}
    groups = (parts[columns[0]] if len(columns) == 1
              else G.intersect([parts[c] for c in columns]))
    y = (frame["income"] == ">50K").astype(int).to_numpy()
    features = frame.drop(columns=["income", *(drop or [])])
    if not sensitive_as_feature:
        features = features.drop(columns=["sex"])
    if encoding == "a9a":
        from safeclf.datasets import a9a

        X, names = a9a.encode(features)
    else:
        categorical = [c for c in features.columns if c not in NUMERIC]
        encoded = pd.get_dummies(features, columns=categorical, dtype=float)
        X, names = encoded.to_numpy(dtype=float), list(encoded.columns)
    split = np.array(["train"] * len(train) + ["test"] * len(test))
    if n_rows is not None:
        if not 10 <= n_rows <= X.shape[0]:
            raise DataError(f"adult: n_rows must be between 10 and {X.shape[0]}, got {n_rows}")
        keep = np.sort(np.random.default_rng(subsample_seed).choice(X.shape[0], n_rows,
                                                                    replace=False))
        X, y, groups, split = X[keep], y[keep], groups[keep], split[keep]
        parts = {c: v[keep] for c, v in parts.items()}
    if sparse:
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
    rows = {"groups": groups, "split": split}
    info = {"feature_names": names, "encoding": encoding,
            "privileged_group": G.label([PRIVILEGED[c] for c in columns]), "outcome": OUTCOME}
    if len(columns) > 1:
        rows.update({c: v.astype(str).astype(object) for c, v in parts.items()})
        info["group_columns"] = columns
    return checked("adult", X, y, rows=rows, info=info)


adult = DatasetPlugin("adult", load_adult, "UCI Adult census income, predefined split, groups by sex",
                      provides=("groups", "split"))

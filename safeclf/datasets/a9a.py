"""LIBSVM's "a9a" encoding of UCI Adult: 123 binary features, rebuilt from the UCI rows.

LIBSVM's data page documents a9a (Platt 1998) as: "The original Adult data set has 14
features, among which six are continuous and eight are categorical. In this data set,
continuous features are discretized into quantiles, and each quantile is represented by a
binary feature. Also, a categorical feature with m categories is converted to m binary
features." The eight categorical attributes have 8 + 16 + 7 + 14 + 6 + 5 + 2 + 41 = 99
categories in ``adult.names``, so the six continuous ones give 123 − 99 = 24 binary features:
five quintile bins each for age, fnlwgt, education-num and hours-per-week, and two for
capital-gain and capital-loss, whose quintiles all fall on 0 (92 % and 95 % of the training
rows are 0), leaving "0" and "above 0".

How the cut points were derived (the documented list gives no numbers): on the 32,561 training
rows (``adult.data``), each cut k = 1..4 is the attribute's value whose share of rows at or
below it is closest to k/5, among values above the previous cut (:func:`quintile_cuts`; the
integer attributes tie at their quintiles: a plain quantile gives education-num the cuts
9, 9, 10, 13 and hours 35, 40, 40, 48, each with an empty bin). A bin is ``previous cut <
x <= cut``. Features follow ``adult.names``: attributes in column order, categories in the
order listed there; a missing value (``?``) sets none of its attribute's features, so a row has
at most 14 ones. Checked against a published dump of a1a's first row (features 3 11 14 19 39
42 55 64 67 73 75 76 80 83; ross-nordstrom/cs5860-gear_smarts, ``eval/a1a/README.md``), which
is this encoding of the first row of ``adult.data`` (tests/datasets/test_a9a.py).
"""

from __future__ import annotations

import numpy as np

#: The categories of each categorical attribute, in ``adult.names``'s order.
CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"],
    "marital-status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}

#: The cut points of each continuous attribute (a bin is ``previous < x <= cut``), as
#: :func:`quintile_cuts` gives them on ``adult.data`` (a test re-derives them).
CUTS = {
    "age": [25, 33, 41, 50],
    "fnlwgt": [106648, 158656, 196338, 259873],
    "education-num": [8, 9, 10, 12],
    "capital-gain": [0],
    "capital-loss": [0],
    "hours-per-week": [35, 39, 40, 48],
}

#: The 14 attributes in ``adult.names``'s column order.
ATTRIBUTES = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
              "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
              "hours-per-week", "native-country"]


def quintile_cuts(values, bins: int = 5) -> list[float]:
    """Cut k (k = 1 .. bins − 1) at the value whose share of ``values`` at or below it is
    closest to k / bins, among the values above cut k − 1; cuts that would leave an empty last
    bin are dropped, and an attribute whose quintiles all coincide keeps one cut (the value
    they share): capital-gain and capital-loss, "0" and "above 0"."""
    v = np.sort(np.asarray(values, dtype=float))
    distinct = np.unique(v)
    share = np.searchsorted(v, distinct, side="right") / v.size  # P(x <= value)
    plain = np.quantile(v, [k / bins for k in range(1, bins)])
    if np.all(plain == plain[0]):
        return [float(plain[0])]
    cuts: list[float] = []
    for k in range(1, bins):
        ok = (distinct > cuts[-1]) if cuts else np.ones(distinct.size, bool)
        ok &= distinct < distinct[-1]  # never an empty last bin
        if not ok.any():
            break
        i = np.flatnonzero(ok)[np.argmin(np.abs(share[ok] - k / bins))]
        cuts.append(float(distinct[i]))
    return cuts


def _names(a: str) -> list[str]:
    if a not in CUTS:
        return [f"{a}={c}" for c in CATEGORIES[a]]
    edges = CUTS[a]
    return ([f"{a}<={edges[0]:g}"]
            + [f"{lo:g}<{a}<={hi:g}" for lo, hi in zip(edges[:-1], edges[1:])]
            + [f"{a}>{edges[-1]:g}"])


def feature_names() -> list[str]:
    """The 123 feature names in a9a's order (``age<=25``, ``workclass=Private``, ...)."""
    return [n for a in ATTRIBUTES for n in _names(a)]


def encode(frame) -> tuple[np.ndarray, list[str]]:
    """The 0/1 matrix of a frame with Adult's attribute columns (missing values as NaN; (n, 123)
    with all 14) and its feature names; attributes the frame lacks are left out."""
    blocks, names = [], []
    for a in ATTRIBUTES:
        if a not in frame:
            continue
        names += _names(a)
        col = frame[a]
        if a in CUTS:
            x = col.to_numpy(dtype=float)
            k = np.searchsorted(np.asarray(CUTS[a], float), x, side="left")  # x <= cut_k -> k
            block = np.zeros((x.size, len(CUTS[a]) + 1))
            block[np.arange(x.size), k] = 1.0
        else:
            cats = CATEGORIES[a]
            block = (col.to_numpy(dtype=object)[:, None] == np.asarray(cats, object)[None, :])
            block = block.astype(float)
        blocks.append(block)
    return np.hstack(blocks), names

"""The churn study of Goh et al. (2016, Section 4.2) rebuilt on UCI Adult (the paper's data is
proprietary).

A *deployed* model (logistic regression on ``n_deploy`` rows and a reduced feature set: the
``deployed_drop`` columns, by default ``native-country`` and ``race``, were not available
to it) gives its predictions on every other row
(``rows["baseline"]``, 0/1). The remaining rows form three datasets (``rows["role"]``):

* ``d1`` — labeled and *actively sampled*: drawn with probability proportional to the
  deployed model's uncertainty (1 − |2p − 1| + ``floor``), so it over-represents the boundary;
* ``d2`` — labeled, i.i.d.;
* ``d3`` — unlabeled, i.i.d. (its labels are kept in ``y`` only for evaluation; a method must
  not use them — the ``ramp`` churn config's constraints do not).

Each dataset is split 80 % / 20 % into training and test rows (``rows["split"]``), as in the
paper. ``rows["groups"]`` is ``sex`` as in ``adult``.
"""

from __future__ import annotations

import numpy as np

from safeclf.datasets import checked
from safeclf.datasets.adult import load_adult
from safeclf.errors import DataError
from safeclf.plugins.contract import DatasetPlugin


def load_adult_churn(
    n_d1: int = 12000,
    n_d2: int = 6000,
    n_d3: int = 8000,
    n_deploy: int = 4000,
    deployed_drop: list[str] | None = None,
    floor: float = 0.05,
    test_fraction: float = 0.2,
    random_state: int = 0,
    folder: str | None = None,
):
    """Adult pooled (48,842 rows) and cut into a deployed model's training rows and the
    D1 (active), D2 (i.i.d.), D3 (unlabeled) roles; see the module docstring."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import MaxAbsScaler

    base = load_adult(folder=folder)
    names = base.info["feature_names"]
    X, y, groups = base.X, base.y, base.rows["groups"]
    n = X.shape[0]
    if min(n_d1, n_d2, n_d3, n_deploy) < 10:
        raise DataError("adult_churn: n_d1, n_d2, n_d3 and n_deploy must each be ≥ 10")
    if n_deploy + n_d2 + n_d3 + n_d1 > n:
        raise DataError(f"adult_churn: n_deploy + n_d1 + n_d2 + n_d3 must be ≤ {n}, got "
                        f"{n_deploy + n_d1 + n_d2 + n_d3}")
    if not 0 < test_fraction < 1:
        raise DataError(f"adult_churn: test_fraction must be in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(n)
    deploy, rest = perm[:n_deploy], perm[n_deploy:]
    drop = deployed_drop if deployed_drop is not None else ["native-country", "race"]
    keep = np.array([not any(f == c or f.startswith(c + "_") for c in drop) for f in names])
    Xs = MaxAbsScaler().fit(X[deploy]).transform(X)
    deployed = LogisticRegression(max_iter=2000).fit(Xs[deploy][:, keep], y[deploy])
    prob = deployed.predict_proba(Xs[:, keep])[:, 1]
    baseline = (prob > 0.5).astype(int)
    d2, d3, pool = rest[:n_d2], rest[n_d2:n_d2 + n_d3], rest[n_d2 + n_d3:]
    weight = 1.0 - np.abs(2.0 * prob[pool] - 1.0) + floor
    d1 = rng.choice(pool, size=n_d1, replace=False, p=weight / weight.sum())
    index = np.r_[d1, d2, d3]
    role = np.array(["d1"] * n_d1 + ["d2"] * n_d2 + ["d3"] * n_d3)
    split = np.empty(index.size, dtype=object)
    for r in ("d1", "d2", "d3"):
        at = np.flatnonzero(role == r)
        test = rng.random(at.size) < test_fraction
        split[at] = np.where(test, "test", "train")
    return checked(
        "adult_churn", X[index], y[index],
        rows={"role": role, "baseline": baseline[index], "split": split.astype(str),
              "groups": groups[index]},
        info={"feature_names": names, "privileged_group": "Male",
              "outcome": base.info["outcome"],
              "deployed_features_dropped": drop, "deployed_test_error":
              float(np.mean(baseline[index] != y[index]))},
    )


adult_churn = DatasetPlugin(
    "adult_churn", load_adult_churn,
    "Adult rebuilt as the churn study: deployed model, D1 active / D2 iid / D3 unlabeled roles",
    provides=("role", "baseline", "split", "groups"),
)

"""The price of a group-blind certified rule (issue 32, item 4): post-hoc certification of the
same logistic regression with a threshold per group (the group read from its feature columns)
against a group-blind rule (the group's columns left out of the fit and of predict, one
threshold for everyone), on the same splits.

* Adult: 1,000 and 3,000 training rows drawn per seed from the UCI training file, tested on the
  16,281 rows of its test file; the group is sex, a one-hot feature; promise the band
  0.8 ≤ s_p(Female)/s_p(Male) ≤ 1.25 and, one-sided, s_p(Female) ≥ 0.8 s_p(Male);
* a synthetic population of three groups of unequal sizes (60 / 28 / 12 %) whose base rates
  and feature means differ (benchmarks/group_blind.py::population), 4,000 training rows, tested
  on 200,000 fresh rows; the same promises against the largest group.

Per setting: the solution rate, the mean test error of the models returned, the failure rate
on each side of the band (test ratio below the lower bound / above the upper one, any pair),
and the share of returned models that are degenerate (one class for ≥ 99 % of the test rows).
No target: the figures are recorded for the docs (docs/promises.md) and NOTES.

Usage: ``python benchmarks/group_blind.py [--seeds 30]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from _record import figure

DELTA, FRACTION = 0.05, 0.3
PROMISES = {"band": {"rate": "fairness_ratio", "min": 0.8, "max": 1.25},
            "one-sided": {"rate": "fairness_ratio", "min": 0.8}}
GROUPS = np.array(["a", "b", "c"])


def population(n: int, rng):
    """Three groups, unequal sizes and base rates; features: a signal, a noise column and the
    group's one-hot columns."""
    g = GROUPS[rng.choice(3, n, p=[0.6, 0.28, 0.12])]
    shift = np.select([g == "a", g == "b"], [0.6, 0.0], -0.5)
    x = rng.normal(size=(n, 2)) + np.c_[shift, np.zeros(n)]
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * x[:, 0] + 0.3 * shift)))).astype(int)
    return np.c_[x, (g[:, None] == GROUPS).astype(float)], y, g


def _adult(size: int, seed: int):
    from safeclf.execution.job import load_dataset, preprocess, split_task

    entry = {"dataset": "adult", "params": {}, "name": "adult",
             "split": {"predefined": True, "train_rows": size}}
    task = preprocess(split_task(load_dataset(entry), entry, seed, None), "minmax")
    pos = np.unique(task.train.y)[-1]
    return (task.train.X, (task.train.y == pos).astype(int), task.train.rows["groups"],
            task.test.X, (task.test.y == pos).astype(int), task.test.rows["groups"],
            str(task.info["privileged_group"]))


def _synthetic(size: int, seed: int, test):
    X, y, g = population(size, np.random.default_rng(seed))
    return (X, y, g, *test, "a")


def one(data, promise, blind: bool, seed: int):
    """(solved, test error, below, above, degenerate) of one certified fit."""
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    X, y, g, Xt, yt, gt, priv = data
    cc = CertifiedClassifier(LogisticRegression(max_iter=1000), delta=DELTA, fraction=FRACTION,
                             group_blind=blind, random_state=seed,
                             promises=[promise | {"privileged": priv}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc.fit(X, y, groups=g)
    if cc.rule_ is None:
        return False, np.nan, False, False, False
    pred = cc.predict(Xt) == 1
    gt = np.asarray(gt).astype(str)
    base = pred[gt == priv].mean()
    r = [pred[gt == o].mean() / base for o in np.unique(gt) if o != priv]
    lo, hi = promise["min"], promise.get("max", np.inf)
    share = pred.mean()
    return (True, float(np.mean(pred != yt)), any(v < lo for v in r), any(v > hi for v in r),
            bool(min(share, 1 - share) < 0.01))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=30)
    args = ap.parse_args(argv)
    test = population(200_000, np.random.default_rng(10**6))
    settings = [(f"Adult, {n} rows", lambda s, n=n: _adult(n, s)) for n in (1000, 3000)] + \
        [("three groups, 4000 rows", lambda s: _synthetic(4000, s, test))]
    print("| data | promise | rule | solutions | test error | below / above the band | "
          "degenerate |")
    print("|---|---|---|---|---|---|---|")
    for label, make in settings:
        draws = [make(s) for s in range(args.seeds)]
        for pname, promise in PROMISES.items():
            errs = {}
            for blind in (False, True):
                rows = [one(d, promise, blind, s) for s, d in enumerate(draws)]
                ok = [r for r in rows if r[0]]
                err = float(np.mean([r[1] for r in ok])) if ok else np.nan
                errs[blind] = err
                rule = "group-blind" if blind else "per group"
                print(f"| {label} | {pname} | {rule} | {len(ok)}/{len(rows)} | {err:.4f} | "
                      f"{sum(r[2] for r in ok)} / {sum(r[3] for r in ok)} | "
                      f"{sum(r[4] for r in ok)} |", flush=True)
                figure(f"{label}, {pname}, {rule}: solution rate", len(ok) / len(rows), None,
                       None, timed=False)
            figure(f"{label}, {pname}: test error, group-blind − per group",
                   errs[True] - errs[False], None, None, timed=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The price of a fairness band on Adult, union test against the exact test (NOTES.md).

Usage: ``python benchmarks/_band_quick.py N SEEDS {union|exact} {band|min} [κ]``; the
environment variable ``FRAC`` sets the held-back share (0.3). Not run by ``make bench``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

from safeclf.execution.job import load_dataset, preprocess, split_task
from safeclf.guarantees import ltt
from safeclf.guarantees.certify import certified_fit
from safeclf.plugins import registry


def main(argv) -> None:
    n, seeds, test, mode = int(argv[0]), int(argv[1]), argv[2], argv[3]
    kappa = float(argv[4]) if len(argv) > 4 else 0.8
    if test == "union":
        ltt.pair_test = lambda bound: "union"
    item = {"rate": "fairness_ratio", "min": kappa}
    if mode == "band":
        item["max"] = 1 / kappa
    certify = {"delta": 0.05, "fraction": float(os.environ.get("FRAC", "0.3"))}
    res = []
    for seed in range(seeds):
        entry = {"dataset": "adult", "params": {}, "name": "adult",
                 "split": {"predefined": True, "train_rows": n}}
        task = preprocess(split_task(load_dataset(entry), entry, seed, None), "minmax")
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = certified_fit(registry.get_method("logreg"), {}, task, certify, [item], seed)
        dt = time.perf_counter() - t0
        if not out.passed:
            res.append((None, None, None, dt))
            continue
        y = np.asarray(task.test.y) == np.unique(task.train.y)[-1]
        g = np.asarray(task.test.rows["groups"]).astype(str)
        priv = str(task.info["privileged_group"])
        pred = out.estimator.predict(task.test.X) == out.estimator.classes_[-1]
        ratio = pred[g != priv].mean() / max(pred[g == priv].mean(), 1e-12)
        res.append((float(np.mean(pred != y)), ratio, pred.mean(), dt))
    ok = [r for r in res if r[0] is not None]
    high = sum(r[1] > 1 / kappa for r in ok) if mode == "band" else "-"
    print(f"N={n} {mode} κ={kappa} {test}: solutions {len(ok)}/{seeds} "
          f"error {np.mean([r[0] for r in ok]):.4f} ratio {np.mean([r[1] for r in ok]):.3f} "
          f"below κ {sum(r[1] < kappa for r in ok)} above 1/κ {high} "
          f"positive share {np.mean([r[2] for r in ok]):.3f} "
          f"degenerate {sum(max(r[2], 1 - r[2]) >= 0.99 for r in ok)} "
          f"time {np.mean([r[3] for r in res]):.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])

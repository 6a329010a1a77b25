"""Wall time of each budgeted-selection procedure against a reference measured in the same run:
one LogisticRegression fit of the oracle's class (d = 12) on its whole budget, T·n_12 samples,
which is what an oracle that knew the class in advance would spend. Also prints the compute
each procedure is charged (in quanta; 1.0 = exactly the budget T).

    .venv/bin/python benchmarks/budgeted_selection.py
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.linear_model import LogisticRegression

from safeclf.datasets.nested import load_nested
from safeclf.methods.selection import BudgetedSelection

T, QUANTUM = 100, 50
DS = [1, 2, 3, 4, 6, 8, 10, 12]


def main() -> None:
    data = load_nested(n_samples=40000, decay=1.0, noise=1.5, random_state=0)
    X, y = data.X[:28000], data.y[:28000]
    n12 = int(round(QUANTUM * DS[-1] / 12))  # n_i = quantum · max cost / cost_i
    m = min(T * n12, len(y))
    t0 = time.perf_counter()
    LogisticRegression(C=1.0, max_iter=500).fit(X[:m, :12], y[:m])
    ref = time.perf_counter() - t0
    print(f"reference: one fit of F_12 on T·n_12 = {m} samples: {ref:.3f} s")
    print(f"{'procedure':<22} {'seconds':>8} {'× ref':>7} {'compute/T':>10}")
    sgd = {"method": "sgd", "params": {"loss": "log_loss", "average": True}, "features": DS}
    for proc, inc in [("bandit", "partial_fit"), ("bandit", "warm_start"), ("bandit", "refit"),
                      ("coarse_grid", "refit"), ("uniform", "refit"), ("halving", "refit")]:
        classes = [sgd if inc == "partial_fit" else
                   {"method": "logreg", "params": {"C": 1.0, "max_iter": 500},
                    "incremental": inc, "features": DS}]
        est = BudgetedSelection(classes=classes, procedure=proc, budget=T, quantum=QUANTUM,
                                oracle=False, random_state=0)
        t0 = time.perf_counter()
        est.fit(X, y)
        dt = time.perf_counter() - t0
        label = proc + ("" if proc != "bandit" else f"/{inc}") + (
            "/sgd" if inc == "partial_fit" else "/logreg")
        print(f"{label:<22} {dt:8.3f} {dt / ref:7.1f} {est.compute_spent_ / T:10.2f}"
              f"   chose F_{DS[est.chosen_]}")
    print("compute/T > 1 for bandit/logreg: LogisticRegression cannot train by quanta, so each "
          "quantum refits on every sample seen and is charged for it; sgd trains by partial_fit")
    assert np.isfinite(ref)


if __name__ == "__main__":
    main()

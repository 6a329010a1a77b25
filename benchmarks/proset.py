"""Side by side with the author's `proset` package (bench extra): same split, same data
scaling, same hyperparameters (B = 1, M = 1,000, η = 0.5, λ_v = 1e-3, λ_w = 1e-8, and the same
elastic-net penalty: the package's alpha is the l1 share, ours (the paper's α) the l2 share, so
the package gets 1 − α). Prints fit time, the ratio package/ours, both test log-losses and our
peak memory. Target: ours ≥ 10× faster at equal or better log-loss (± 0.02); exits 1 if missed.

    .venv/bin/pip install -q proset && .venv/bin/python benchmarks/proset.py [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from safeclf.datasets.synthetic import load_checkerboard, load_xor
from safeclf.datasets.toy import load_digits
from safeclf.methods.proset import ProsetClassifier

DATASETS = {
    "Checker": lambda: load_checkerboard(n=8, n_samples=6400, random_state=0),
    "XOR 6f": lambda: load_xor(n_features=6, n_samples=6400, random_state=0),
    "Digits": load_digits,
}
PARAMS = {"lambda_v": 1e-3, "lambda_w": 1e-8, "alpha_v": 0.05, "alpha_w": 0.05}
SPEEDUP, LOSS_SLACK = 10.0, 0.02


def split(ds, seed):
    Xtr, Xte, ytr, yte = train_test_split(ds.X, ds.y, test_size=0.3, stratify=ds.y,
                                          random_state=seed)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def run_ours(Xtr, ytr, Xte, yte, seed):
    tracemalloc.start()
    t = time.perf_counter()
    model = ProsetClassifier(n_batches=1, n_candidates=1000, max_fraction=0.5,
                             random_state=seed, **PARAMS).fit(Xtr, ytr)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, log_loss(yte, model.predict_proba(Xte), labels=model.classes_), peak, model


def reference_package():
    """The author's package; this file is benchmarks/proset.py, so its folder leaves the path
    first (else `import proset` would find this script)."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    import proset

    return proset


def run_package(Xtr, ytr, Xte, yte, seed):
    proset = reference_package()

    t = time.perf_counter()
    model = proset.ClassifierModel(
        n_iter=1, num_candidates=1000, max_fraction=0.5, lambda_v=PARAMS["lambda_v"],
        lambda_w=PARAMS["lambda_w"], alpha_v=1 - PARAMS["alpha_v"],
        alpha_w=1 - PARAMS["alpha_w"], random_state=seed).fit(Xtr, ytr)
    seconds = time.perf_counter() - t
    return seconds, log_loss(yte, model.predict_proba(Xte), labels=model.classes_)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    args = ap.parse_args(argv)
    try:
        reference_package()
    except ImportError:
        print("the reference package is missing: .venv/bin/pip install -q proset")
        return 1
    print(f"{'dataset':8} {'package s':>10} {'ours s':>8} {'ratio':>7} {'package ll':>11} "
          f"{'ours ll':>8} {'ours peak MB':>12} {'L-BFGS-B it':>11}")
    ok = True
    for name in args.datasets.split(","):
        Xtr, Xte, ytr, yte = split(DATASETS[name](), args.seed)
        ours_s, ours_ll, peak, model = run_ours(Xtr, ytr, Xte, yte, args.seed)
        pkg_s, pkg_ll = run_package(Xtr, ytr, Xte, yte, args.seed)
        ratio = pkg_s / ours_s
        good = ratio >= SPEEDUP and ours_ll <= pkg_ll + LOSS_SLACK
        ok &= good
        print(f"{name:8} {pkg_s:10.2f} {ours_s:8.2f} {ratio:6.1f}× {pkg_ll:11.3f} {ours_ll:8.3f} "
              f"{peak / 2**20:12.1f} {int(model.n_iter_[0]):11d} {'ok' if good else 'MISSED'}",
              flush=True)
    print(f"target: ratio ≥ {SPEEDUP:g}× and ours ≤ package + {LOSS_SLACK}: "
          f"{'met' if ok else 'missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

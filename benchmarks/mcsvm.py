"""MC-SVM benchmark: fit time against one scikit-learn SVC fit, peak memory, calibration speed.

    .venv/bin/python benchmarks/mcsvm.py [--n 5000] [--m 9]

Data: the Example 1 Gaussians of Carlevaro et al. (2024), p_S = 0.5. Model: RBF kernel
(γ = 0.5), η = 1, m τ values 0.1 … 0.9 (m = 9), solved by the decomposition dual solver with
one kernel cache (default bound 1 GiB) shared by the τ blocks. Reference: SVC with the same
kernel and C = η/2 (the box of the τ = 0.5 block), fitted on the same data in the same run.
Target (issue 4): MC-SVM fit / SVC fit ≤ 3 (the paper estimates m times one SVM). Calibration:
the four offsets on 100,000 scores, target < 1 s each.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.svm import SVC

from safeclf.methods.mcsvm import MultiCostSVM
from safeclf.methods.mcsvm import calibration as cal
from safeclf.methods.mcsvm.safe_region import GaussianSafeRegion


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--m", type=int, default=9)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--gamma", type=float, default=0.5)
    args = ap.parse_args()

    region = GaussianSafeRegion(np.array([4.0, 6.0]), np.array([[1.3, 0.9], [0.9, 1.3]]),
                                np.array([3.0, 8.0]), np.array([[0.6, 0.0], [0.0, 1.4]]), 0.5, 0.05)
    rng = np.random.default_rng(0)
    X, y = region.sample(args.n, rng)

    t0 = time.perf_counter()
    svc = SVC(C=args.eta / 2, kernel="rbf", gamma=args.gamma).fit(X, y)
    t_svc = time.perf_counter() - t0

    est = MultiCostSVM(kernel="rbf", gamma=args.gamma, eta=args.eta, n_tau=args.m,
                       calibration="none")
    t0 = time.perf_counter()
    est.fit(X, y)
    t_mc = time.perf_counter() - t0
    tracemalloc.start()  # a second fit, traced, for the peak memory (tracing slows it down)
    est.fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(f"n = {args.n}, m = {args.m} τ, RBF γ = {args.gamma}, η = {args.eta}")
    print(f"SVC (C = η/2) fit:        {t_svc:8.3f} s  ({svc.n_support_.sum()} SVs)")
    print(f"MC-SVM fit:               {t_mc:8.3f} s  ({est.support_.size} SVs, {est.n_iter_} outer "
          f"iterations, KKT gap {est.kkt_gap_:.2g})")
    print(f"ratio MC-SVM / SVC:       {t_mc / t_svc:8.2f}   (target ≤ 3; the paper: about m = {args.m})")
    print(f"peak traced memory (fit): {peak / 2**20:8.1f} MiB "
          f"(kernel cache {est.cache_bytes_ / 2**20:.1f} MiB, bound {est.cache_size:.0f} MiB)")

    scores = rng.normal(size=100_000)
    safe = rng.random(100_000) < 0.5
    for method in cal.METHODS:
        t0 = time.perf_counter()
        cal.calibrate(method, scores, safe, 0.05, 0.05)
        dt = time.perf_counter() - t0
        print(f"calibration {method:<22} 100,000 points: {dt * 1e3:7.1f} ms  (target < 1 s)")
    lin = MultiCostSVM(kernel="linear", n_tau=args.m, calibration="probabilistic_scaling")
    lin.fit(X, y, X_cal=X[:100], y_cal=y[:100])
    Xc, yc = region.sample(100_000, rng)
    t0 = time.perf_counter()
    lin.calibrate(Xc, yc)
    print(f"linear model: score + probabilistic scaling of 100,000 points: "
          f"{(time.perf_counter() - t0) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

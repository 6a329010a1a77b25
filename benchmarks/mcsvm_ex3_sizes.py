"""Carlevaro Example 3: the test FPR of the (28) offset against the training size, the kernel
and the τ grid, over several splits (issue 34; the table in benchmarks/NOTES.md, "Carlevaro
Example 3: the FPR gap").

Each split: the Example 1 Gaussians, 10,000 points stacked from 9 priors 0.1 … 0.9; ``n_tr`` of
them train the MC-SVM (η = 10⁻³, 9 τ); a fresh p_S' = 0.5 calibration set of 1,033 (the authors'
n_cl = ⌈7.47/ε·ln(1/δ)⌉, ε = 0.05, δ = 10⁻³) sets the offset by (28) with 1 − ε; a fresh test
set of ``--n-test`` points gives the FPR (near the split model's true FPR for a large test set).
``--tau rand`` draws the 9 τ uniformly, as the authors' code (``Tau = rand(1,9)``).

    .venv/bin/python benchmarks/mcsvm_ex3_sizes.py --n-train 500,3000,8820 --splits 10
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from safeclf.methods.mcsvm.estimator import MultiCostSVM

MEAN_S, COV_S = np.array([4.0, 6.0]), np.array([[1.3, 0.9], [0.9, 1.3]])
MEAN_U, COV_U = np.array([3.0, 8.0]), np.array([[0.6, 0.0], [0.0, 1.4]])
KERNELS = {"linear": {"kernel": "linear"},
           "quadratic": {"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0},
           "cubic": {"kernel": "poly", "degree": 3, "gamma": 1.0, "coef0": 1.0}}
N_CAL = 1033


def draw(n, p, rng):
    """n points of the Example 1 mixture with prior p: X, y (+1 safe, −1 unsafe)."""
    safe = rng.random(n) < p
    X = np.where(safe[:, None], rng.multivariate_normal(MEAN_S, COV_S, n),
                 rng.multivariate_normal(MEAN_U, COV_U, n))
    return X, np.where(safe, 1, -1)


def one_split(n_tr, n_test, seed, kernel, tau):
    rng = np.random.default_rng(seed)
    n_all = max(10_000, n_tr + 9)
    parts = [draw(n_all // 9, p, rng) for p in np.linspace(0.1, 0.9, 9)]
    X, y = np.vstack([a for a, _ in parts]), np.concatenate([b for _, b in parts])
    idx = rng.permutation(y.size)[:n_tr]
    Xc, yc = draw(N_CAL, 0.5, rng)
    Xt, yt = draw(n_test, 0.5, rng)
    taus = np.sort(rng.random(9)) if tau == "rand" else None
    est = MultiCostSVM(eta=1e-3, n_tau=9, tau=taus, calibration="quantile", epsilon=0.05,
                       quantile_bound="fpr", **KERNELS[kernel])
    est.fit(X[idx], y[idx], X_cal=Xc, y_cal=yc)
    pred_safe = est.score_samples_w(Xt) < est.offset_
    return (float(pred_safe[yt < 0].mean()), float((~pred_safe[yt > 0]).mean()),
            float(est.score_samples_w(Xc).std()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", default="500,3000,8820")
    ap.add_argument("--kernels", default="linear,quadratic,cubic")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--tau", choices=("grid", "rand"), default="grid")
    ap.add_argument("--n-test", type=int, default=50_000)
    a = ap.parse_args(argv)
    for n_tr in (int(v) for v in a.n_train.split(",")):
        for k in a.kernels.split(","):
            r = np.array([one_split(n_tr, a.n_test, s, k, a.tau) for s in range(a.splits)])
            print(json.dumps({"n_train": n_tr, "kernel": k, "tau": a.tau,
                              "fpr_mean": round(r[:, 0].mean(), 4),
                              "fpr_min": round(r[:, 0].min(), 4), "fpr_max": round(r[:, 0].max(), 4),
                              "fnr_mean": round(r[:, 1].mean(), 3),
                              "score_sd": round(r[:, 2].mean(), 3)}), flush=True)


if __name__ == "__main__":
    main()

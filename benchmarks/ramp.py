"""Benchmark: the ramp method against fairlearn's ExponentiatedGradient on Adult, per κ.

For each κ both methods get the same demographic-parity ratio target (ramp:
``{rate: fairness_ratio, kappa: κ}``; fairlearn: ``DemographicParity(ratio_bound=κ)`` around
logistic regression) and are timed side by side in this process; the printed ratio is
ramp seconds / fairlearn seconds (target ≤ 1). Peak memory is the tracemalloc peak of Python
and numpy allocations during the fit. The sparse run feeds the one-hot CSR matrix (scaled by
MaxAbsScaler, which keeps it sparse) and checks that the inner solver receives it sparse.

    .venv/bin/python benchmarks/ramp.py                 # κ = 0.5, 0.8, 0.9 (a few minutes)
    .venv/bin/python benchmarks/ramp.py --kappa 0.8     # one κ
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp


def _adult(sparse: bool):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler

    from safeclf.datasets.adult import load_adult

    d = load_adult(sparse=sparse)
    tr = d.rows["split"] == "train"
    te = ~tr
    scaler = (MaxAbsScaler() if sparse else MinMaxScaler()).fit(d.X[tr])
    return (scaler.transform(d.X[tr]), d.y[tr], d.rows["groups"][tr],
            scaler.transform(d.X[te]), d.y[te], d.rows["groups"][te])


def _ratio(pred, groups):
    pred = np.asarray(pred) == 1
    return pred[groups == "Male"].mean() / pred[groups == "Female"].mean()


def _timed(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, seconds, peak


def run_ramp(X, y, g, kappa):
    from safeclf.methods.ramp import RampClassifier

    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": kappa,
                                       "privileged": "Male"}], random_state=0)
    return est.fit(X, y, groups=g)


def run_fairlearn(X, y, g, kappa):
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    eg = ExponentiatedGradient(LogisticRegression(max_iter=1000),
                               constraints=DemographicParity(ratio_bound=kappa))
    eg.fit(X, y, sensitive_features=g)
    return eg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kappa", type=float, nargs="*", default=[0.5, 0.8, 0.9])
    ap.add_argument("--no-sparse", action="store_true", help="skip the sparse-input run")
    args = ap.parse_args(argv)
    try:
        import fairlearn  # noqa: F401
    except ImportError:
        raise SystemExit("benchmarks/ramp.py needs fairlearn: pip install 'safeclf[bench]'") from None

    X, y, g, Xt, yt, gt = _adult(sparse=False)
    print(f"Adult: {X.shape[0]} train × {X.shape[1]} features (dense, minmax), "
          f"{Xt.shape[0]} test")
    print(f"{'κ':>5} {'ramp s':>8} {'EG s':>8} {'ratio':>6} {'ramp MiB':>9} {'EG MiB':>7} "
          f"{'ramp err/ratio':>15} {'EG err/ratio':>13}")
    ratios = []
    for kappa in args.kappa:
        est, t_r, m_r = _timed(lambda k=kappa: run_ramp(X, y, g, k))
        eg, t_f, m_f = _timed(lambda k=kappa: run_fairlearn(X, y, g, k))
        pr, pf = est.predict(Xt), eg.predict(Xt, random_state=0)
        ratios.append(t_r / t_f)
        print(f"{kappa:5.2f} {t_r:8.1f} {t_f:8.1f} {t_r / t_f:6.2f} {m_r:9.0f} {m_f:7.0f} "
              f"{np.mean(pr != yt):7.4f}/{_ratio(pr, gt):5.2f}  "
              f"{np.mean(pf != yt):6.4f}/{_ratio(pf, gt):5.2f}")
    print(f"time ratio ramp/EG (target <= 1): median {np.median(ratios):.2f}")

    if not args.no_sparse:
        from safeclf.methods.ramp import mm

        Xs, ys, gs, *_ = _adult(sparse=True)
        seen = []
        real = mm.weighted_hinge_svm

        def spy(Xin, *a, **kw):
            seen.append(sp.issparse(Xin))
            return real(Xin, *a, **kw)

        mm.weighted_hinge_svm = spy
        try:
            kappa = args.kappa[-1]
            _, t_s, m_s = _timed(lambda: run_ramp(Xs, ys, gs, kappa))
        finally:
            mm.weighted_hinge_svm = real
        print(f"sparse CSR input (nnz/row {Xs.nnz / Xs.shape[0]:.1f}), κ = {kappa}: "
              f"{t_s:.1f} s, peak {m_s:.0f} MiB, inner solver saw sparse input in "
              f"{sum(seen)}/{len(seen)} calls")


if __name__ == "__main__":
    main()

"""Benchmark: the ramp method against fairlearn's ExponentiatedGradient on Adult, and at scale.

Targets (issue 12), each printed with the figure it is checked on; the script exits 1 when one
is missed:

1. Adult, κ ∈ {0.5, 0.8, 0.9}: ramp's fit time ≤ 0.5× EG's (issue 24; was ≤ 1), measured side by
   side in this process (ramp: ``{rate: fairness_ratio, kappa: κ}``; EG:
   ``DemographicParity(ratio_bound=κ)`` around logistic regression; EG's time the median of 3
   runs, ramp's the median of its fits at random_state 0..6 (``RAMP_SEEDS``), interleaved with
   EG's: the path of this non-convex fit, and its time by ±30 %, depends on the seed, and the
   median of 3 seeds moved by 0.1 s at κ 0.9 between seed sets), at equal or lower test error
   than EG, each at its own ratio:
   ramp's mean error over the seeds against EG's at ramp's mean test ratio, read off the line
   through EG's measured (ratio, error) points (EG's ratio often ends below κ). The target is on
   ramp's default (on Adult's 32,561 rows: the coarse start), and every timed fit must have
   converged (``solver_status_`` "optimal", not stopped at ``max_mm_iter``); the time and test
   error with ``start: zero`` (the paper's algorithm) are printed beside it.
2. Sparse CSR input (one-hot kept sparse, MaxAbs-scaled) as fast as dense: sparse / dense fit
   time ≤ 1.2 (the allowance is for timing noise on a shared machine; medians of
   ``SPARSE_SEEDS`` seeds, each a dense and a sparse fit in turn), with the inner solver
   seeing the CSR matrix in every call.
3. A 1,000-row Adult subsample (700 training rows, κ = 0.8): ≤ 0.5 s per fit at λ = 1/n
   (median of 5 subsamples); the time with ``lam: auto`` (76 such solves) is printed beside it.
4. ``--scale``: a synthetic sparse problem with a protected attribute (10 one-hot blocks and 3
   numeric columns, 13 nonzeros a row) at n = 10k, 100k and 1M rows, κ = 0.8, each fit in a
   fresh process whose peak resident memory is reported; target: 1M rows within 300 s.

Beside each κ's ratio: ramp's time over one unconstrained LIBLINEAR logistic-regression fit on
the same rows (median of the same repeats, interleaved with them), the floor a constrained fit
cannot beat, with its target (≤ 3, issue 37; measured 5.6–8.0 in CPU time at load 11, and
5.2–7.8 in wall time at load 9–13 after round four's changes to the inner solver, see
benchmarks/NOTES.md, "ramp against LIBLINEAR"); and EG's
time with one BLAS thread (as ramp runs, ``safeclf._utils.blas``) and ramp's ratio against that: EG
calls BLAS on 32,561 × 105 matrices hundreds of times, and OpenBLAS's threads on a shared
2-core machine make it several times slower in wall and CPU time. The target is therefore on
EG at the faster of the two configurations (default threads, one thread): a ratio against EG
slowed by its thread pool would say nothing of either algorithm. Both EG times are printed.

5. The κ path (0.5 → 0.8 → 0.9, as ``path: kappa`` runs it): each κ warm-started from the
   previous κ's fit (``warm_start``) against each started cold, medians of 3 interleaved
   runs of the whole path (cold, warm, cold, ...); each point's time, training objective and
   test error / ratio printed both ways. Target (the warm path no slower than the cold one)
   on 10,000 training rows drawn from Adult's, where a cold fit starts at zero; on all of
   Adult printed beside it, as a reference: there a cold fit starts from a coarse fit, and a
   warm one from whichever of that and the previous κ's point has the lower merit (the
   previous point lies outside the raised constraint, so warm and cold mostly coincide).

The load average (1 min) is printed beside each timing.

Timings are wall seconds of the fit alone (no tracing); numba's compiled code is loaded or
compiled by an untimed warm-up fit first.

    .venv/bin/python benchmarks/ramp.py                 # targets 1-3 and 5 (a few minutes)
    .venv/bin/python benchmarks/ramp.py --kappa 0.8     # one κ
    .venv/bin/python benchmarks/ramp.py --scale         # also target 4 (about 5 minutes more)
    .venv/bin/python benchmarks/ramp.py --only-scale    # target 4 alone
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp
from _record import figure

SCALE_SIZES = (10_000, 100_000, 1_000_000)
SCALE_LIMIT_S = 300.0
#: Target of issue 24: a converged ramp fit at most half of fairlearn EG's on Adult, at every κ.
RATIO_EG = 0.5
#: Target of issue 37: ramp within this many times one unconstrained LIBLINEAR logistic
#: regression on the same rows (medians, interleaved per κ)
RATIO_LIBLINEAR = 3.0


def _adult(sparse: bool):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler

    from safeclf.datasets.adult import load_adult

    d = load_adult(sparse=sparse)
    tr = d.rows["split"] == "train"
    te = ~tr
    scaler = (MaxAbsScaler() if sparse else MinMaxScaler()).fit(d.X[tr])
    return (scaler.transform(d.X[tr]), d.y[tr], d.rows["groups"][tr],
            scaler.transform(d.X[te]), d.y[te], d.rows["groups"][te])


def _ratio(pred, groups, privileged="Male"):
    """The fairness ratio s_p(protected) / s_p(privileged) (≥ κ is the constraint)."""
    pred = np.asarray(pred) == 1
    return pred[groups != privileged].mean() / pred[groups == privileged].mean()


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_ramp(X, y, g, kappa, privileged="Male", lam=None, start="auto", random_state=0):
    from safeclf.methods.ramp import RampClassifier

    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": kappa,
                                       "privileged": privileged}], lam=lam, start=start,
                         random_state=random_state)
    return est.fit(X, y, groups=g)


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def run_fairlearn_one_thread(X, y, g, kappa):
    """EG as :func:`run_fairlearn`, with BLAS limited to one thread as ramp's fit is."""
    from safeclf._utils.blas import one_blas_thread

    with one_blas_thread():
        return run_fairlearn(X, y, g, kappa)


def run_fairlearn(X, y, g, kappa):
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    eg = ExponentiatedGradient(LogisticRegression(max_iter=1000),
                               constraints=DemographicParity(ratio_bound=kappa))
    eg.fit(X, y, sensitive_features=g)
    return eg


def run_liblinear(X, y):
    """One unconstrained logistic regression by LIBLINEAR on the same rows: the floor a
    constrained fit cannot beat (issue 24 prints ramp's time against it)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(solver="liblinear").fit(X, y)


def eg_error_at(ratio, points):
    """EG's test error at fairness ``ratio``, linear in the ratio between its measured
    (ratio, error) points (one per κ), extended past the ends by the nearest segment."""
    r, e = np.array(sorted(points), dtype=float).T
    if r.size == 1 or r[-1] == r[0]:
        return float(e.min())
    i = int(np.clip(np.searchsorted(r, ratio) - 1, 0, r.size - 2))
    if r[i + 1] == r[i]:
        return float(min(e[i], e[i + 1]))
    return float(e[i] + (ratio - r[i]) * (e[i + 1] - e[i]) / (r[i + 1] - r[i]))


#: Seeds (random_state 0..RAMP_SEEDS − 1) over which ramp's Adult fits are timed: one fit's
#: time moves by ±30 % with its seed (κ 0.9, seeds 0..9: 0.54–1.10 s, median 0.79 s; the
#: median of seeds 0..2 alone, 0.90 s), so a median over 3 seeds says little of the typical fit
RAMP_SEEDS = 7
#: Seeds of the sparse / dense comparison (target 2), each a dense and a sparse fit in turn
SPARSE_SEEDS = 3


def adult_targets(kappas, repeats=3):
    """Targets 1 and 2; returns the list of missed targets. Each κ's EG fits are timed
    ``repeats`` times and ramp's fits at ``RAMP_SEEDS`` seeds, interleaved (ramp's seeds
    r, r + repeats, ..., then EG, for r = 0..repeats − 1), and compared by their medians, so
    that a burst of load on the shared machine moves both."""
    missed = []
    X, y, g, Xt, yt, gt = _adult(sparse=False)
    run_ramp(X[:2000], y[:2000], g[:2000], 0.8)  # untimed: numba's code loaded or compiled
    run_liblinear(X, y)  # untimed: its imports
    floor = float(np.median([_timed(lambda: run_liblinear(X, y))[1] for _ in range(repeats)]))
    print(f"Adult: {X.shape[0]} train × {X.shape[1]} features (dense, minmax), "
          f"{Xt.shape[0]} test; fit times are medians, EG's of {repeats} runs, ramp's of its "
          f"fits at random_state 0..{RAMP_SEEDS - 1} interleaved with them (its path, and with "
          f"it its time, depends on the seed), its test error and ratio their means")
    print(f"{'κ':>5} {'ramp s':>8} {'EG s':>8} {'ratio':>6} {'ramp err/ratio':>15} "
          f"{'EG err/ratio':>13}  MM/CP its   (start: zero, seed 0) s, ratio, err/ratio   "
          f"ramp / LIBLINEAR logreg ({floor:.2f} s, unconstrained)   EG 1 BLAS thread s, "
          f"ramp / it   load")
    rows = []
    for kappa in kappas:
        t_r, t_f, t_1, loads, fits, t_l = [], [], [], [], [], []
        for rnd in range(repeats):
            t_l.append(_timed(lambda: run_liblinear(X, y))[1])  # the floor, interleaved too
            for seed in range(rnd, RAMP_SEEDS, repeats):
                est, t = _timed(lambda k=kappa, r=seed: run_ramp(X, y, g, k, random_state=r))
                t_r.append(t)
                pr = est.predict(Xt)
                fits.append((np.mean(pr != yt), _ratio(pr, gt), est.n_mm_iter_,
                             sum(est.n_cp_iter_), seed, est.solver_status_))
            eg, t = _timed(lambda k=kappa: run_fairlearn(X, y, g, k))
            t_f.append(t)
            t_1.append(_timed(lambda k=kappa: run_fairlearn_one_thread(X, y, g, k))[1])
            loads.append(_load())
        t_r, t_f, t_1 = (float(np.median(t)) for t in (t_r, t_f, t_1))
        floor = float(np.median(t_l))
        err_r, ratio_r = (float(np.mean([f[i] for f in fits])) for i in (0, 1))
        its = " ".join(f"{f[2]}/{f[3]}" for f in sorted(fits, key=lambda f: f[4]))
        # the target times converged fits: one that stopped short (max_mm_iter) would be cheap
        unsettled = sorted(f"random_state {f[4]}: {f[5]}" for f in fits if f[5] != "optimal")
        if unsettled:
            missed.append(f"κ = {kappa}: timed ramp fits did not converge ({', '.join(unsettled)})")
        pf = eg.predict(Xt, random_state=0)
        err_f = np.mean(pf != yt)
        zero, t_z = _timed(lambda k=kappa: run_ramp(X, y, g, k, start="zero"))
        pz = zero.predict(Xt)
        rows.append((kappa, err_r, ratio_r, err_f, _ratio(pf, gt)))
        print(f"{kappa:5.2f} {t_r:8.1f} {t_f:8.1f} {t_r / t_f:6.2f} {err_r:7.4f}/"
              f"{ratio_r:5.2f}  {err_f:6.4f}/{_ratio(pf, gt):5.2f}  {its:<11} "
              f"{t_z:6.1f} {t_z / t_f:6.2f} "
              f"{np.mean(pz != yt):.4f}/{_ratio(pz, gt):4.2f}   {t_r / floor:5.1f}×"
              f"{'':43}{t_1:6.1f} {t_r / t_1:5.2f}   {' '.join(loads)}", flush=True)
        # the reference is EG at the faster of its two configurations: with the default
        # BLAS threads it spends most of its time in OpenBLAS's spinning threads on this
        # problem, which says nothing of either algorithm (ramp's fit uses one BLAS thread)
        t_eg = min(t_f, t_1)
        if not figure(f"ramp / EG (EG's faster configuration), Adult, κ = {kappa}", t_r / t_eg,
                      RATIO_EG, "<=", "×",
                      f"ramp {t_r:.2f} s, EG {t_eg:.2f} s (medians of {RAMP_SEEDS} seeds and "
                      f"{repeats} runs; EG with the "
                      f"default BLAS threads {t_f:.2f} s, with one {t_1:.2f} s; load "
                      f"{' '.join(loads)})"):
            missed.append(f"κ = {kappa}: ramp {t_r:.1f} s / EG {t_eg:.1f} s = {t_r / t_eg:.2f} "
                          f"(target ≤ {RATIO_EG})")
        if not figure(f"ramp / LIBLINEAR logistic regression (unconstrained), Adult, κ = {kappa}",
                      t_r / floor, RATIO_LIBLINEAR, "<=", "×",
                      f"ramp {t_r:.2f} s (median of {RAMP_SEEDS} seeds), LIBLINEAR {floor:.2f} s "
                      f"(median of {repeats}), interleaved; load {' '.join(loads)}"):
            missed.append(f"κ = {kappa}: ramp {t_r:.1f} s / LIBLINEAR {floor:.2f} s = "
                          f"{t_r / floor:.2f} (target ≤ {RATIO_LIBLINEAR})")
    # "equal or lower test error at its own ratio": each method reaches its own test ratio
    # (EG's is often below κ), so ramp's error is compared with EG's at ramp's ratio, on
    # the line through EG's measured points (one per κ) — on a convex frontier the line
    # between two points lies above it and the line extended past the ends below it
    eg_points = [(rf, ef) for _, _, _, ef, rf in rows]
    print("test error at ramp's own test ratio (EG's by its measured points, linear in the "
          "ratio):")
    for kappa, err_r, r_r, err_f, r_f in rows:
        at = eg_error_at(r_r, eg_points)
        print(f"  κ = {kappa}: ramp {err_r:.4f} at ratio {r_r:.3f}; EG there {at:.4f} "
              f"(EG's own point {err_f:.4f} at {r_f:.3f})")
        if not figure(f"ramp test error − EG's at ramp's ratio, κ = {kappa}", err_r - at, 0.0,
                      "<=", "", f"ramp {err_r:.4f} at ratio {r_r:.3f}, EG {at:.4f}",
                      timed=False):
            missed.append(f"κ = {kappa}: ramp test error {err_r:.4f} > EG's {at:.4f} at "
                          f"ramp's ratio {r_r:.3f}")

    from safeclf.methods.ramp import joint, svm

    Xs, ys, gs, *_ = _adult(sparse=True)
    seen = []
    # the inner solver's two callers: the weighted-hinge solves and the joint steps
    real = {mod: mod.dcd_solve for mod in (svm, joint)}

    def spy(mod):
        def call(Xin, *a, **kw):
            seen.append(sp.issparse(Xin))
            return real[mod](Xin, *a, **kw)
        return call

    def sparse_fit(seed):
        try:
            for mod in real:
                mod.dcd_solve = spy(mod)
            return run_ramp(Xs, ys, gs, kappa, random_state=seed)
        finally:
            for mod, fn in real.items():
                mod.dcd_solve = fn

    kappa = kappas[-1]
    t_s, t_d = [], []
    # paired with dense fits at the same seeds, one after the other (the host's speed drifts
    # between the table above and here)
    for seed in range(SPARSE_SEEDS):
        t_d.append(_timed(lambda r=seed: run_ramp(X, y, g, kappa, random_state=r))[1])
        t_s.append(_timed(lambda r=seed: sparse_fit(r))[1])
    t_s, t_d = float(np.median(t_s)), float(np.median(t_d))
    ratio = t_s / t_d
    print(f"sparse CSR input (nnz/row {Xs.nnz / Xs.shape[0]:.1f}), κ = {kappa}: {t_s:.2f} s "
          f"against dense {t_d:.2f} s (medians of {SPARSE_SEEDS} seeds, paired), "
          f"sparse/dense {ratio:.2f} (target ≤ 1.2); the inner solver saw CSR in "
          f"{sum(seen)}/{len(seen)} calls")
    if not figure("sparse / dense fit time", ratio, 1.2, "<=", "×") or not all(seen):
        missed.append(f"sparse input: {ratio:.2f}× the dense time (target ≤ 1.2), CSR in "
                      f"{sum(seen)}/{len(seen)} inner calls")
    return missed


#: Training rows of target 5's path: below ``COARSE_ROWS``, so that a cold fit starts at zero
PATH_ROWS = 10_000


def kappa_path(kappas, repeats=3, rows=None):
    """Target 5: the κ path warm-started (``warm_start``, as ``path: kappa`` runs it) against
    each κ started cold, on ``rows`` training rows drawn from Adult's (None: all of them, a
    reference with no target); returns the list of missed targets."""
    from safeclf.methods.ramp import RampClassifier

    X, y, g, Xt, yt, gt = _adult(sparse=False)
    if rows is not None:
        idx = np.sort(np.random.default_rng(0).choice(X.shape[0], rows, replace=False))
        X, y, g = X[idx], y[idx], g[idx]

    def path(warm, seed):
        est = RampClassifier(constraints=[{"rate": "fairness_ratio", "privileged": "Male"}],
                             random_state=seed, warm_start=warm)
        points = []
        for kappa in kappas:
            _, t = _timed(lambda k=kappa: est.set_params(kappa=k).fit(X, y, groups=g))
            pred = est.predict(Xt)
            points.append((t, est.objective_value_, np.mean(pred != yt), _ratio(pred, gt),
                           _ratio(est.predict(X), g)))
        return points

    runs = {False: [], True: []}
    loads = []
    for seed in range(repeats):  # the paths of this non-convex fit depend on the seed
        for warm in (False, True):
            runs[warm].append(path(warm, seed))
        loads.append(_load())
    total = {w: float(np.median([sum(p[0] for p in r) for r in runs[w]])) for w in runs}
    where = "all of Adult" if rows is None else f"{X.shape[0]:,} of Adult's training rows"
    print(f"κ path {' → '.join(map(str, kappas))} on {where} (medians of {repeats} interleaved "
          f"runs of the whole path, random_state 0..{repeats - 1}, the objectives and errors "
          f"below seed 0's; load {' '.join(loads)}): cold {total[False]:.1f} s, warm "
          f"{total[True]:.1f} s, warm / cold {total[True] / total[False]:.2f}")
    print(f"  {'κ':>4} {'cold s':>7} {'warm s':>7}  training objective cold / warm   test error / "
          f"ratio cold, warm   training ratio cold, warm")
    for i, kappa in enumerate(kappas):
        t = {w: float(np.median([r[i][0] for r in runs[w]])) for w in runs}
        c, w = runs[False][0][i], runs[True][0][i]
        print(f"  {kappa:4.2f} {t[False]:7.2f} {t[True]:7.2f}  {c[1]:.5f} / {w[1]:.5f}"
              f"{'':18}{c[2]:.4f}/{c[3]:.3f}, {w[2]:.4f}/{w[3]:.3f}    {c[4]:.3f}, {w[4]:.3f}")
    name = ("κ path warm / cold, all of Adult (reference)" if rows is None
            else f"κ path warm / cold, {X.shape[0]:,} rows")
    met = figure(name, total[True] / total[False], None if rows is None else 1.0,
                 None if rows is None else "<=", "×",
                 f"warm {total[True]:.2f} s, cold {total[False]:.2f} s (κ {kappas}, medians of "
                 f"{repeats}; load {' '.join(loads)})")
    return [] if met or rows is None else [
        f"κ path: warm {total[True]:.1f} s > cold {total[False]:.1f} s"]


def small_target(n_rows=1000, n_train=700, seeds=5, limit=0.5):
    """Target 3: fits on 700 rows drawn from Adult's training part. The target is on one
    solve at λ = 1/n (the paper's default and the issue's measurement); the default there,
    ``lam: auto``, is that solve repeated for each λ of its grid on each cross-validation fold
    plus the refit (5 λ × 3 folds × 5 repeats + 1 = 76 solves with the defaults), printed
    beside it for the record."""
    X, y, g, *_ = _adult(sparse=False)
    times, auto_times, errs, auto_errs = [], [], [], []
    for seed in range(seeds):
        idx = np.random.default_rng(seed).choice(X.shape[0], n_rows, replace=False)
        tr, te = idx[:n_train], idx[n_train:]
        est, t = _timed(lambda tr=tr: run_ramp(X[tr], y[tr], g[tr], 0.8, lam="1/n"))
        times.append(t)
        errs.append(np.mean(est.predict(X[te]) != y[te]))
        est, t = _timed(lambda tr=tr: run_ramp(X[tr], y[tr], g[tr], 0.8, lam="auto"))
        auto_times.append(t)
        auto_errs.append(np.mean(est.predict(X[te]) != y[te]))
    med = float(np.median(times))
    print(f"{n_rows}-row Adult subsamples ({n_train} train, κ = 0.8, {seeds} seeds): one solve "
          f"at λ = 1/n: median {med:.3f} s per fit (min {min(times):.3f}, max {max(times):.3f}; "
          f"target ≤ {limit}), test error {np.mean(errs):.3f}; with lam auto (cross-validated "
          f"λ, the default below 2,000 rows): median {np.median(auto_times):.3f} s per fit, "
          f"test error {np.mean(auto_errs):.3f}")
    met = figure(f"{n_rows}-row subsample, one fit", med, limit, "<=", "s")
    return [] if met else [f"{n_rows}-row subsample: {med:.3f} s per fit > {limit} s"]


def synthetic(n, seed=0, blocks=10, levels=10, numeric=3, group_effect=4.0):
    """A sparse classification problem with a protected attribute, built in O(nnz) memory:
    ``blocks`` one-hot features of ``levels`` levels and ``numeric`` columns in [0, 1]; the
    group (a third of the rows privileged) draws its levels of the first three blocks from
    the lower half only (so the features reveal it in part), and the label is a noisy
    linear function of all of them plus ``group_effect`` on the privileged rows: the
    unconstrained SVM's ratio s_p(unprivileged) / s_p(privileged) is well below 0.8, so
    κ = 0.8 is an active constraint. The label weights have their own random stream, so every
    n samples the same problem and the errors along the scaling curve are comparable."""
    weights = np.random.default_rng([seed, 1]).normal(size=blocks * levels)
    rng = np.random.default_rng(seed)
    priv = rng.random(n) < 1 / 3
    codes = rng.integers(0, levels, size=(n, blocks))
    low = rng.integers(0, levels // 2, size=(n, 3))  # the privileged rows' levels of blocks 0-2
    codes[:, :3] = np.where(priv[:, None], low, codes[:, :3])
    num = rng.random((n, numeric))
    score = weights[codes + np.arange(blocks) * levels].sum(1) + 2.0 * (num[:, 0] - 0.5)
    score = score + group_effect * priv
    y = (score + rng.normal(scale=1.5, size=n) > np.quantile(score, 0.7)).astype(int)
    cols = np.c_[codes + np.arange(blocks) * levels,
                 blocks * levels + np.arange(numeric) + np.zeros((n, 1), dtype=int)]
    data = np.c_[np.ones((n, blocks)), num].ravel()
    nnz = blocks + numeric
    X = sp.csr_matrix((data, cols.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, blocks * levels + numeric))
    return X, y, np.where(priv, "P", "U")


SCALE_CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
from _peak import peak_mib
from ramp import synthetic, run_ramp, _ratio
n = int(sys.argv[1])
X, y, g = synthetic(n)
run_ramp(X[:2000], y[:2000], g[:2000], 0.8, "P")  # numba's code loaded or compiled
t0 = time.perf_counter()
est = run_ramp(X, y, g, 0.8, "P")
t = time.perf_counter() - t0
pred = est.predict(X)
print(json.dumps({{"seconds": t, "peak_mib": peak_mib(), "nnz": int(X.nnz),
                  "error": float((pred != y).mean()), "ratio": float(_ratio(pred, g, "P")),
                  "mm": est.n_mm_iter_, "cp": sum(est.n_cp_iter_)}}))
"""


def scale_target():
    """Target 4: the scaling curve, one fresh process per size."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    print("synthetic sparse problem, κ = 0.8 (train error and ratio on the training rows):")
    print(f"{'n':>9} {'nnz':>11} {'fit s':>8} {'peak MiB':>9} {'error':>6} {'ratio':>6}  MM/CP")
    missed = []
    for n in SCALE_SIZES:
        out = subprocess.run([sys.executable, "-c", SCALE_CHILD.format(here=here), str(n)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stderr[-2000:])
            missed.append(f"n = {n}: the fit failed")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{n:9d} {r['nnz']:11d} {r['seconds']:8.1f} {r['peak_mib']:9.0f} "
              f"{r['error']:6.3f} {r['ratio']:6.2f}  {r['mm']}/{r['cp']}", flush=True)
        if n == SCALE_SIZES[-1] and not figure(f"{n:,} sparse rows, one fit", r["seconds"],
                                               SCALE_LIMIT_S, "<=", "s",
                                               f"peak {r['peak_mib']:.0f} MiB"):
            missed.append(f"n = {n}: {r['seconds']:.0f} s > {SCALE_LIMIT_S:.0f} s")
    return missed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kappa", type=float, nargs="*", default=[0.5, 0.8, 0.9])
    ap.add_argument("--scale", action="store_true", help="also the 10k/100k/1M scaling curve")
    ap.add_argument("--only-scale", action="store_true", help="the scaling curve alone")
    args = ap.parse_args(argv)
    missed = []
    if not args.only_scale:
        try:
            import fairlearn  # noqa: F401
        except ImportError:
            raise SystemExit("benchmarks/ramp.py needs fairlearn: pip install 'safeclf[bench]'"
                             ) from None
        missed += adult_targets(args.kappa)
        missed += kappa_path(sorted(args.kappa), rows=PATH_ROWS)
        kappa_path(sorted(args.kappa))
        missed += small_target()
    if args.scale or args.only_scale:
        missed += scale_target()
    for m in missed:
        print(f"TARGET MISSED: {m}")
    if missed:
        sys.exit(1)
    print("all targets met")


if __name__ == "__main__":
    main()

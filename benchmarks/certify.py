"""Certified classifiers side by side with their peers (issue 22, item 8), on the same splits.

* fairness, s_p(Female) >= κ s_p(Male) at κ = 0.8, δ = 0.05 on Adult subsamples:
  safeclf's post-hoc certified logistic regression (``certify: {how: threshold}``,
  safeclf/guarantees/certify/posthoc.py) and certified ramp (in training,
  safeclf/guarantees/certify/training.py) against the
  Seldonian engine (seldonian-engine 0.8.11: its logistic regression under the symmetric
  disparate-impact constraint of its credit tutorial, min(PR|M / PR|F, PR|F / PR|M) >= κ,
  its default t-test bound; ``default_supervised_initial_solution_fn`` as the tutorial means);
* false-positive rate FPR <= ε = 0.1 at δ = 0.05: safeclf's post-hoc certification (exact
  Clopper–Pearson p-values, fixed-sequence testing) against MAPIE 1.6's
  ``BinaryClassificationController`` (Learn-then-Test, Hoeffding–Bentkus p-values,
  Bonferroni–Holm over a grid), both around the same logistic regression fitted on the same
  candidate rows, both calibrated on the same held-back rows.

Per method and size: failure rate (the test estimate on the wrong side of the bound; a run
without a solution counts as no failure), solution rate, mean test error over the runs with a
solution, and the fit time relative to safeclf's. Benchmark-only extras, not dependencies:
``pip install mapie==1.6.0`` and ``pip install --no-deps seldonian-engine==0.8.11`` with
autograd, cma, graphviz and tqdm (0.8.11 pins matplotlib 3.5.1, which does not build here).

Two-sided (issue 32, item 8): safeclf's post-hoc certified logistic regression under the band
κ ≤ s_p(A)/s_p(B) ≤ 1/κ (three groups: every ordered pair, ``compare: worst_pair``), half the
training rows held back (:data:`BAND_FRACTION`), against the engine's symmetric constraint
(δ/pairs per pair); failure on either side of the band on the test rows, solutions, test error.
The sizes are where a valid test of 0/1 decision rates can compete: a band [κ, 1/κ] is
certified only if both groups' held-back positive rates are known to within its half-width
(log 1/κ: 0.22 at κ 0.8, 0.105 at κ 0.9), and the rows that takes grow as its square falls —
at a positive rate of 0.2 and Adult's third of Female rows, about 4,000 held-back rows for a
rule at ratio 1 to pass half the time at κ 0.8, four times that at κ 0.9. The engine bounds
the mean *probability* per group by a t-test (approximate; its 0/1 decisions are not what it
bounds), whose variance is far smaller than a 0/1 rate's, so below those sizes it certifies
where no exact test of the decisions can — and at κ 0.9 on 5,000 or 10,000 Adult rows its
returned models broke the band on the test rows in 22/28 and 8/27 seeds. So: Adult on all its
32,561 training rows at κ 0.8 and 0.9, three groups (55/30/15 %) at 10,000 rows at κ 0.8 and
30,000 at κ 0.9. ``make bench`` runs 12 seeds on all of Adult (the engine fitted once: its
input is the same on every seed, below) and 2 of each three-group population (the engine
takes 10-50 s a fit on each draw);
benchmarks/NOTES.md ("The path's order") has 10-30. On all of Adult the engine's training rows
are the same on every seed and so is its model (κ 0.9: 0.1749 on seeds 0-5), while safeclf's
held-back rows are drawn from the seed: over 12 seeds (2026-11-28, load 5-15) safeclf errs
0.1675 at κ 0.8 (sd 0.0012; engine 0.1723) and 0.1748 at κ 0.9 (median 0.1723, sd 0.0072: 3/12
seeds stop early on a low held-back ratio; engine 0.1749), 12/12 solutions, none outside the
band; 2 seeds decide κ 0.9 by chance (benchmarks/NOTES.md, "The band at κ 0.9").

Usage: ``python benchmarks/certify.py [--sizes 1000 3000] [--seeds 10] [--iters 1000]
[--only-band] [--adult-bands 0.8:32561 ...] [--three-bands 0.8:10000 ...] [--band-seeds 2]
[--adult-band-seeds 12]``.

Measured (``--sizes 1000 3000 --seeds 10``, 2026-11-26, load average 5.5 → 9.0, other work
running; ~5 min):

| method | train rows | failure | solution | test error | fit time / safeclf |
|---|---|---|---|---|---|
| safeclf logreg, post hoc | 1000 | 0/10 | 10/10 | 0.2112 | 1.0 |
| Seldonian engine | 1000 | 4/10 | 8/10 | 0.2249 | 27.0 |
| safeclf ramp, in training | 1000 | 0/10 | 7/10 | 0.2320 | 2.0 |
| safeclf, FPR post hoc | 1000 | 0/10 | 10/10 | 0.1718 | 1.0 |
| MAPIE BinaryClassificationController | 1000 | 0/10 | 10/10 | 0.1778 | 0.5 |
| safeclf logreg, post hoc | 3000 | 0/10 | 10/10 | 0.1898 | 1.0 |
| Seldonian engine | 3000 | 1/10 | 10/10 | 0.1952 | 29.8 |
| safeclf ramp, in training | 3000 | 0/10 | 9/10 | 0.1982 | 3.7 |
| safeclf, FPR post hoc | 3000 | 0/10 | 10/10 | 0.1625 | 1.0 |
| MAPIE BinaryClassificationController | 3000 | 0/10 | 10/10 | 0.1628 | 0.7 |

safeclf's post-hoc logistic regression certifies at least as often as the Seldonian engine, at
a lower test error and 27-30x less time, and never failed; the engine's failures (4/10 at 1k
rows) are its 0/1 decisions below κ, which its t-test bound on mean probabilities does not
cover. Against MAPIE, at equal failure (0/10) safeclf's exact p-values along a path give a
slightly lower error (0.0060 at 1k rows, 0.0003 at 3k); MAPIE's calibration is faster (0.5-0.7x
of safeclf's certification alone; both around the same fitted model). Not run yet: the full
training set (32,561 rows) and 20+ seeds.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
from _record import figure

KAPPA, DELTA, EPS, FRACTION = 0.8, 0.05, 0.1, 0.3
#: The held-back share of the two-sided comparison: a band is certified only where both sides
#: clear their margins, and the pass probability of a rule set on the candidate rows falls with
#: the candidate rates' noise and the held-back noise alike (1/n_c + 1/n_s), so half and half
#: (measured on Adult 5,000 rows, 30 seeds: 0.3 → 16/30 solutions at error 0.2050, 0.4 → 19/30
#: at 0.1966, 0.5 → 24/30 at 0.1992, 0.6 → 24/30 at 0.1994; benchmarks/NOTES.md).
BAND_FRACTION = 0.5
#: The Adult training size of the full training file (its predefined split).
ADULT_ALL = 32_561


def _task(size: int, seed: int):
    from safeclf.execution.job import load_dataset, preprocess, split_task

    entry = {"dataset": "adult", "params": {}, "name": "adult",
             "split": {"predefined": True, "train_rows": size}}
    return preprocess(split_task(load_dataset(entry), entry, seed, None), "minmax")


def _fair(pred, y, g, privileged) -> tuple[float, float]:
    """(test error, ratio protected / privileged of positive predictions)."""
    prot, priv = g != privileged, g == privileged
    return float(np.mean(pred != y)), float(pred[prot].mean() / max(pred[priv].mean(), 1e-12))


def safeclf_fair(task, seed, method="logreg"):
    from safeclf.guarantees.certify import certified_fit
    from safeclf.plugins import registry

    plugin = registry.get_method(method)
    certify = {"delta": DELTA, "fraction": FRACTION}
    if method == "ramp":
        params = {"constraints": [{"rate": "fairness_ratio", "kappa": KAPPA}],
                  "max_mm_iter": 10, "lam": "1/n"}
        out = certified_fit(plugin, params, task, certify, seed=seed)
    else:
        out = certified_fit(plugin, {}, task, certify,
                            [{"rate": "fairness_ratio", "min": KAPPA}], seed)
    if not out.passed:
        return None
    return out.estimator.predict(task.test.X) == out.estimator.classes_[-1]


def seldonian_fair(task, seed, iters):
    """The engine's logistic regression under its tutorial's disparate-impact constraint
    (:func:`band_seldonian` with the two groups of ``task``, at κ = KAPPA)."""
    X = np.asarray(task.train.X, dtype=float)
    y = (np.asarray(task.train.y) == np.unique(task.train.y)[-1]).astype(int)
    g = np.asarray(task.train.rows["groups"]).astype(str)
    return band_seldonian(X, y, g, np.asarray(task.test.X, float), seed, KAPPA, iters)


def three_groups(n: int, seed: int, shares=(0.55, 0.3, 0.15), rates=(0.45, 0.3, 0.35)):
    """(X, y, groups) of a three-group population of unequal sizes and base rates: four
    standard normal features (the first two shifted by the label) and the group one-hot
    (so a per-group rule can read it back)."""
    rng = np.random.default_rng(seed)
    names = np.array(["a", "b", "c"])
    g = rng.choice(names, size=n, p=np.asarray(shares))
    y = rng.random(n) < np.select([g == v for v in names], rates)
    X = np.c_[rng.normal(size=(n, 4)) + np.outer(2 * y - 1, [0.9, 0.6, 0, 0]),
              (g[:, None] == names).astype(float)]
    return X, y.astype(int), g


def _pair_ratios(pred, g) -> list[float]:
    """Each pair's ratio of positive-prediction rates, smaller over larger side both ways."""
    names = np.unique(g)
    rates = {a: pred[g == a].mean() for a in names}
    return [rates[a] / max(rates[b], 1e-12) for a in names for b in names if a != b]


def band_safeclf(X, y, g, Xt, seed, kappa, groups3=False, fraction=BAND_FRACTION):
    """safeclf's post-hoc certified logistic regression under the band promise
    κ ≤ s_p(A)/s_p(B) ≤ 1/κ (three groups: every ordered pair ≥ κ, ``compare: worst_pair``)."""
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    item = ({"rate": "fairness_ratio", "min": kappa, "compare": "worst_pair"} if groups3
            else {"rate": "fairness_ratio", "min": kappa, "max": 1 / kappa})
    cc = CertifiedClassifier(LogisticRegression(max_iter=1000), [item], delta=DELTA,
                             fraction=fraction, random_state=seed).fit(X, y, groups=g)
    return None if cc.rule_ is None else cc.predict(Xt).astype(bool)


def band_seldonian(X, y, g, Xt, seed, kappa, iters):
    """The engine's logistic regression under its symmetric constraint
    min(PR|A / PR|B, PR|B / PR|A) ≥ κ, one per pair of groups at δ / pairs each."""
    from seldonian.dataset import SupervisedDataSet, SupervisedMetaData
    from seldonian.models import objectives
    from seldonian.models.models import BinaryLogisticRegressionModel
    from seldonian.parse_tree.parse_tree import make_parse_trees_from_constraints
    from seldonian.seldonian_algorithm import SeldonianAlgorithm
    from seldonian.spec import SupervisedSpec
    from seldonian.utils.stats_utils import default_supervised_initial_solution_fn

    names = [str(a) for a in np.unique(g)]
    cols = [f"g{i}" for i in range(len(names))]
    sens = (np.asarray(g).astype(str)[:, None] == np.array(names)).astype(int)
    feats = [f"x{i}" for i in range(X.shape[1])]
    meta = SupervisedMetaData("classification", feats + cols + ["y"], feats, ["y"], cols)
    data = SupervisedDataSet(np.asarray(X, float), np.asarray(y).astype(int), sens, len(y), meta)
    pairs = [(a, b) for i, a in enumerate(cols) for b in cols[i + 1:]]
    trees = make_parse_trees_from_constraints(
        [f"min((PR | [{a}])/(PR | [{b}]),(PR | [{b}])/(PR | [{a}])) >= {kappa}"
         for a, b in pairs], [DELTA / len(pairs)] * len(pairs),
        sub_regime="classification", columns=cols)
    np.random.seed(seed)
    spec = SupervisedSpec(
        dataset=data, model=BinaryLogisticRegressionModel(), parse_trees=trees,
        sub_regime="classification", frac_data_in_safety=0.6,
        primary_objective=objectives.binary_logistic_loss,
        initial_solution_fn=default_supervised_initial_solution_fn,
        optimization_hyperparams={"lambda_init": 1.0, "alpha_theta": 0.01, "alpha_lamb": 0.01,
                                  "beta_velocity": 0.9, "beta_rmsprop": 0.95,
                                  "use_batches": False, "num_iters": iters,
                                  "gradient_library": "autograd", "hyper_search": None,
                                  "verbose": False})
    passed, theta = SeldonianAlgorithm(spec).run()
    if not passed:
        return None
    return BinaryLogisticRegressionModel().predict(theta, np.asarray(Xt, float)) >= 0.5


#: The engine's models by (its input's digest, κ): it splits its rows in the order given
#: (``candidate_safety_split``: no shuffling) and descends from a deterministic start, so the
#: same rows give the same model (on all of Adult, seeds 0-5 at κ 0.9: the same model, error
#: 0.17493), and the draws that repeat its input (all of Adult: the fixed training file) fit
#: it once.
_ENGINE: dict = {}


def _engine_once(X, y, g, Xt, seed, kappa, iters):
    import hashlib

    key = (hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in (X, y, g, Xt)))
           .hexdigest(), kappa, iters)
    if key not in _ENGINE:
        _ENGINE[key] = band_seldonian(X, y, g, Xt, seed, kappa, iters)
    return _ENGINE[key]


def band_comparison(populations, default_seeds: int, iters: int) -> bool:
    """The two-sided comparison (issue 32): per population and κ, safeclf's band against the
    engine's symmetric constraint; failure on either side (a pair's test ratio below κ or
    above 1/κ), solutions, test error, and the share of degenerate solutions (≥ 99 % of test
    rows in one class) apart."""
    from safeclf._utils.blas import one_blas_thread

    print("\n| population | κ | train rows | method | fail < κ | fail > 1/κ | solution | "
          "test error | degenerate |")
    print("|---|---|---|---|---|---|---|---|---|")
    met = True
    for label, size, kappa, draw, n_seeds in populations:
        seeds = n_seeds or default_seeds
        runs = {"safeclf band, post hoc": [], "Seldonian engine": []}
        for seed in range(seeds):
            X, y, g, Xt, yt, gt = draw(seed)
            for name, out in runs.items():
                with one_blas_thread(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred = (band_safeclf(X, y, g, Xt, seed, kappa, len(np.unique(g)) > 2)
                            if name.startswith("safeclf") else
                            _engine_once(X, y, g, Xt, seed, kappa, iters))
                if pred is None:
                    out.append(None)
                    continue
                r = _pair_ratios(pred, gt)
                out.append((float(np.mean(pred != yt)), min(r) < kappa, max(r) > 1 / kappa,
                            max(pred.mean(), 1 - pred.mean()) >= 0.99))
        summary = {}
        for name, out in runs.items():
            ok = [o for o in out if o is not None]
            lo, hi = sum(o[1] for o in ok), sum(o[2] for o in ok)
            err = float(np.mean([o[0] for o in ok])) if ok else float("inf")
            print(f"| {label} | {kappa} | {size} | {name} | {lo}/{seeds} | {hi}/{seeds} | "
                  f"{len(ok)}/{seeds} | {err:.4f} | {sum(o[3] for o in ok)}/{max(len(ok), 1)} |")
            summary[name] = (max(lo, hi) / seeds, len(ok) / seeds, err)
        tag = f"band κ {kappa} vs the Seldonian engine ({label})"
        f_lo = sum(o is not None and o[1] for o in runs["safeclf band, post hoc"]) / seeds
        met &= figure(f"{tag}, {size} rows: safeclf failure rate below κ", f_lo, DELTA, "<=",
                      timed=False)
        met &= _versus(tag, size, summary["safeclf band, post hoc"], summary["Seldonian engine"])
    return met


def _adult_draw(size):
    def draw(seed):
        task = _task(size, seed)
        cls = np.unique(task.train.y)[-1]
        return (np.asarray(task.train.X, float), np.asarray(task.train.y) == cls,
                np.asarray(task.train.rows["groups"]).astype(str),
                np.asarray(task.test.X, float), np.asarray(task.test.y) == cls,
                np.asarray(task.test.rows["groups"]).astype(str))
    return draw


def _three_draw(size, test_rows=50_000):
    def draw(seed):
        X, y, g = three_groups(size, 1000 + seed)
        Xt, yt, gt = three_groups(test_rows, 5000 + seed)
        return X, y.astype(bool), g, Xt, yt.astype(bool), gt
    return draw


def fpr_pair(task, seed):
    """(safeclf, MAPIE) test predictions controlling FPR <= ε, or None for no solution."""
    from mapie.risk_control import BinaryClassificationController
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees.certify.threshold import CertifiedClassifier, split_rows

    X, y = task.train.X, np.asarray(task.train.y)
    classes = np.unique(y)
    y_pos = y == classes[-1]
    cand, safe = split_rows(len(y), FRACTION, seed)
    model = LogisticRegression(max_iter=1000).fit(X[cand], y_pos[cand])
    t0 = time.perf_counter()
    cc = CertifiedClassifier.from_fitted(model, _fpr_promise(y_pos[cand]), X, y_pos, {}, cand,
                                         safe, delta=DELTA, random_state=seed)
    t_ours = time.perf_counter() - t0
    ours = None if cc.rule_ is None else cc.predict(task.test.X).astype(bool)
    t0 = time.perf_counter()
    bcc = BinaryClassificationController(model.predict_proba, "fpr", EPS,
                                         confidence_level=1 - DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bcc.calibrate(X[safe], y_pos[safe].astype(int))
    t_mapie = time.perf_counter() - t0
    theirs = None if bcc.best_predict_param is None else bcc.predict(task.test.X).astype(bool)
    return ours, theirs, t_ours, t_mapie


def _fpr_promise(y_pos):
    from safeclf.guarantees import declared

    return declared.promises([{"rate": "fpr", "max": EPS}], y_pos, {})


def _row(name, size, runs, failures, errors, seconds, base_seconds):
    solved = len(errors)
    print(f"| {name} | {size} | {failures}/{runs} | {solved}/{runs} | "
          f"{np.mean(errors) if errors else float('nan'):.4f} | "
          f"{np.mean(seconds) / np.mean(base_seconds):.1f} |")


def _summary(out, failed):
    """(failure rate, solution rate, mean test error over the solutions) of one method's runs;
    ``failed(r)`` says whether a run with a solution is on the wrong side of its bound."""
    ok = [r for r in out if r[0] is not None]
    return (sum(failed(r) for r in ok) / len(out), len(ok) / len(out),
            float(np.mean([r[0] for r in ok])) if ok else float("inf"))


def _versus(label, size, ours, theirs) -> bool:
    """The issue's targets against a peer: our failure rate ≤ δ, and at it a solution rate ≥
    and a test error ≤ the peer's (recorded for make bench's table)."""
    (f_o, s_o, e_o), (_, s_t, e_t) = ours, theirs
    met = figure(f"{label}, {size} rows: safeclf failure rate", f_o, DELTA, "<=", timed=False)
    met &= figure(f"{label}, {size} rows: solution rate, safeclf − peer", s_o - s_t, 0.0, ">=",
                  timed=False)
    met &= figure(f"{label}, {size} rows: test error, safeclf − peer", e_o - e_t, 0.0, "<=",
                  "", f"safeclf {e_o:.4f}, peer {e_t:.4f}", timed=False)
    return met


def _kappa_rows(item: str) -> tuple[float, int]:
    kappa, rows = item.split(":")
    return float(kappa), int(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--iters", type=int, default=1000,
                    help="Seldonian gradient steps (its credit tutorial: 1000; 300 found no solution)")
    ap.add_argument("--no-ramp", action="store_true", help="leave certified ramp out")
    ap.add_argument("--adult-bands", nargs="*", default=[f"0.8:{ADULT_ALL}", f"0.9:{ADULT_ALL}"],
                    metavar="KAPPA:ROWS", help="two-sided comparisons on Adult (none: skip)")
    ap.add_argument("--three-bands", nargs="*", default=["0.8:10000", "0.9:30000"],
                    metavar="KAPPA:ROWS", help="two-sided comparisons on three groups")
    ap.add_argument("--band-seeds", type=int, default=2,
                    help="seeds of the two-sided comparison on the drawn populations (three "
                         "groups: the engine takes 10-50 s a fit on each draw)")
    ap.add_argument("--adult-band-seeds", type=int, default=12,
                    help="seeds of the two-sided comparison on all of Adult (the engine's "
                         "input is the same on every seed: fitted once)")
    ap.add_argument("--only-band", action="store_true", help="the two-sided comparison alone")
    args = ap.parse_args(argv)
    if args.only_band:
        args.sizes = []
    from safeclf._utils.blas import one_blas_thread

    print("| method | train rows | failure | solution | test error | fit time / safeclf |")
    print("|---|---|---|---|---|---|")
    met = True
    for size in args.sizes:
        fair = {"safeclf logreg, post hoc": ("logreg", []), "Seldonian engine": ("sel", [])}
        if not args.no_ramp:
            fair["safeclf ramp, in training"] = ("ramp", [])
        fpr = {"safeclf, FPR post hoc": [], "MAPIE BinaryClassificationController": []}
        for seed in range(args.seeds):
            task = _task(size, seed)
            y = np.asarray(task.test.y) == np.unique(task.train.y)[-1]
            g = np.asarray(task.test.rows["groups"]).astype(str)
            priv = str(task.info["privileged_group"])
            for _name, (kind, out) in fair.items():
                t0 = time.perf_counter()
                with one_blas_thread(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred = (seldonian_fair(task, seed, args.iters) if kind == "sel"
                            else safeclf_fair(task, seed, kind))
                seconds = time.perf_counter() - t0
                out.append(None if pred is None else (*_fair(pred, y, g, priv), seconds))
                if pred is None:
                    out[-1] = (None, None, seconds)
            ours, theirs, t_o, t_m = fpr_pair(task, seed)
            for name, pred, sec in (("safeclf, FPR post hoc", ours, t_o),
                                    ("MAPIE BinaryClassificationController", theirs, t_m)):
                if pred is None:
                    fpr[name].append((None, None, sec))
                else:
                    fpr[name].append((float(np.mean(pred != y)), float(pred[~y].mean()), sec))
        base = [r[2] for r in fair["safeclf logreg, post hoc"][1]]
        for name, (_, out) in fair.items():
            ok = [r for r in out if r[0] is not None]
            _row(name, size, len(out), sum(r[1] < KAPPA for r in ok), [r[0] for r in ok],
                 [r[2] for r in out], base)
        base = [r[2] for r in fpr["safeclf, FPR post hoc"]]
        for name, out in fpr.items():
            ok = [r for r in out if r[0] is not None]
            _row(name, size, len(out), sum(r[1] > EPS for r in ok), [r[0] for r in ok],
                 [r[2] for r in out], base)
        met &= _versus("fairness vs the Seldonian engine", size,
                       _summary(fair["safeclf logreg, post hoc"][1], lambda r: r[1] < KAPPA),
                       _summary(fair["Seldonian engine"][1], lambda r: r[1] < KAPPA))
        met &= _versus("FPR vs MAPIE", size,
                       _summary(fpr["safeclf, FPR post hoc"], lambda r: r[1] > EPS),
                       _summary(fpr["MAPIE BinaryClassificationController"], lambda r: r[1] > EPS))
    pops = [("Adult", n, k, _adult_draw(n), args.adult_band_seeds if n == ADULT_ALL else None)
            for k, n in map(_kappa_rows, args.adult_bands)]
    pops += [("three groups", n, k, _three_draw(n), None)
             for k, n in map(_kappa_rows, args.three_bands)]
    if pops:
        met &= band_comparison(pops, args.band_seeds, args.iters)
    print(f"\nfairness: failure = test ratio s_p(Female)/s_p(Male) < κ = {KAPPA}; FPR: failure ="
          f" test FPR > ε = {EPS}; δ = {DELTA}. Seldonian: its t-test bound is approximate and "
          "its constraint is on the symmetric ratio of mean probabilities during training, so "
          "its 0/1 decisions can fall below κ; fit times include the whole certified fit.")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

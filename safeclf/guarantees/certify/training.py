"""Certified training (the Seldonian recipe, Thomas et al., Science 2019), opt-in per method
entry with ``certify: {delta: 0.05, fraction: 0.3}``.

1. The training rows are split (stratified by label, from the job's seed) into a candidate
   part and a held-back safety part of share ``fraction``.
2. *Candidate selection* on the candidate part with tightened internal bounds (below).
3. *Safety test* on the safety part: for every promise the plugin declares (each a rate or a
   ratio of two rates), a one-sided bound (``bound:``, Clopper–Pearson by default;
   :mod:`safeclf.guarantees.bounds`) at 1 − δ/m, where m counts the
   one-sided bounds used (one per rate, two per ratio: a lower bound on the protected group's
   rate and an upper bound on the privileged group's, so s_p(A) ≥ κ s_p(B) is certified when
   L_A ≥ κ U_B); the union bound makes the whole test hold with probability ≥ 1 − δ.
4. Pass: the candidate is returned with a high-confidence promise (kind ``high_confidence``
   at δ) on the *population* quantity. Fail (or no feasible candidate): the job's outcome is
   ``no_solution`` — no model, never an unsafe one. A candidate that passes but is degenerate
   on the training rows (one class for almost every row, or not better than the majority rule
   beyond noise: :mod:`safeclf.guarantees.trivial`) is no solution too, unless ``allow_degenerate``.

Tightening. The candidate is asked for a bound that leaves room for the safety test, predicted
from the candidate data and the safety part's *sizes* (never its labels' relation to the
predictions): a rate bound β (≤) becomes the t with t + 2·h(t) = β, where h(t) is the one-sided
Clopper–Pearson half-width U(t·n_s, n_s, δ/m) − t at the safety part's size n_s; so a candidate
whose true rate is t passes unless its safety estimate overshoots by more than one predicted
half-width. (The Seldonian engine likewise inflates the candidate's predicted bound, by twice
the confidence half-width.) A ratio bound κ becomes κ' = κ (1 + 2ρ_B) / (1 − 2ρ_A), with ρ the
relative half-widths of the two group rates at the safety part's group sizes, predicted at
the privileged rate of a pilot fit (the plain constraint on the candidate part) and at the
protected rate κ' s_p(B) the candidate will hold (a fixed point in κ'); κ' may exceed 1 (a
protected rate above the privileged one) and is capped at :data:`KAPPA_CAP`.

Settings chosen by cross-validation. Where a plugin's fit would choose a hyperparameter by
cross-validating against its own (tightened) constraints — ramp's ``lam: auto`` — that choice
is blind to the safety test: a constraint s_p(A) ≥ κ' s_p(B) at κ' ≈ 2–3 is met on every fold
by a classifier predicting (almost) no positives, which the safety test can only reject. So the
plugin lists its settings instead (``candidate_params(params, task)``, one per λ), each gets its
own pilot and tightened bounds (the tightening depends on the rates the setting's pilot
reaches), and certified training keeps the setting most likely to pass the safety test
(:func:`predicted_test`: CV_FOLDS-fold out-of-fold predictions on the candidate part give the
rates; :func:`pass_probability`, the probability that the test passes at the safety part's
sizes if its counts were binomial at those rates), the smaller out-of-fold error breaking
ties. Only the candidate part is used; the safety part is touched once, by the test.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from safeclf.guarantees import bounds as B
from safeclf.guarantees.certify.conflicts import reconcile
from safeclf.guarantees.promises import Evidence, Promise, rate_evidence
from safeclf.guarantees.promises import sizes as promise_sizes

NO_SOLUTION = "no_solution"
#: The largest internal ratio target (a protected rate 3× the privileged one).
KAPPA_CAP = 3.0
#: Folds of the cross-validation that predicts each setting's safety test.
CV_FOLDS = 3


@dataclass
class Outcome:
    """The result of a certified fit: the estimator (None for no solution), its promises, and
    the safety test's record."""

    estimator: object | None
    promises: list[Promise]
    record: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.estimator is not None


def split_indices(y, fraction: float, seed: int, stratify: bool = True):
    """(candidate, held-back) row positions of ``len(y)`` rows, ``fraction`` held back, drawn
    from ``seed``; stratified by label when ``stratify`` (falling back to a plain draw when a
    class is too small). Post-hoc certification uses a plain draw (``stratify=False``): then
    the held-back rows are an i.i.d. sample of the population like any rows, whatever rate they
    are counted for (:mod:`safeclf.guarantees.certify.threshold`)."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    if stratify:
        try:
            return train_test_split(idx, test_size=fraction, random_state=seed + 104729,
                                    stratify=np.asarray(y))
        except ValueError:
            pass
    return train_test_split(idx, test_size=fraction, random_state=seed + 104729)


def split_train(task, fraction: float, seed: int, stratify: bool = True):
    """(candidate task, safety part, safety positions): ``fraction`` of the training rows held
    back (:func:`split_indices`); the positions are into the training part."""
    from safeclf.data.task import Task

    cand, safe = split_indices(np.asarray(task.train.y), fraction, seed, stratify)
    cand_task = Task(dataset=task.dataset, train=task.train.take(cand), test=task.test,
                     cal=task.cal, info=task.info, seed=task.seed,
                     preprocessor=task.preprocessor)
    return cand_task, task.train.take(safe), safe


def _is_positive(labels, est):
    """Whether each label is ``est``'s positive class (its last)."""
    return np.asarray(labels) == np.asarray(est.classes_)[-1]


def _positive(est, part):
    """(true label positive, predicted positive) on ``part``."""
    return _is_positive(part.y, est), _is_positive(est.predict(part.X), est)


def n_bounds(p: Promise) -> int:
    return 2 if p.quantity.kind == "ratio" else 1


def tightened_rate(bound: float, sense: str, n: int, d: float, bnd: B.Bound = B.BOUNDS[B.DEFAULT]
                   ) -> float:
    """The internal bound t with t ± 2·h(t) = bound at safety size n and level d (h the
    half-width of ``bnd``)."""
    if n <= 0:
        return bound
    lo, hi = (0.0, bound) if sense == "<=" else (bound, 1.0)
    for _ in range(60):
        t = (lo + hi) / 2
        if sense == "<=":
            ok = t + 2 * (bnd.upper(t * n, n, d) - t) <= bound
            lo, hi = (t, hi) if ok else (lo, t)
        else:
            ok = t - 2 * (t - bnd.lower(t * n, n, d)) >= bound
            lo, hi = (lo, t) if ok else (t, hi)
    return lo if sense == "<=" else hi


def tightened_ratio(kappa: float, sense: str, pilot: Evidence, sizes: Evidence,
                    d: float, bnd: B.Bound = B.BOUNDS[B.DEFAULT]) -> float:
    """κ' for a ratio promise s_p(A) ≥ κ s_p(B) (or ≤), from the pilot's group rates."""
    rA = pilot.k / pilot.n if pilot.n else 0.0
    rB = pilot.k2 / pilot.n2 if pilot.n2 else 0.0
    if rA <= 0 or rB <= 0 or not sizes.n or not sizes.n2:
        return kappa
    nA, nB = sizes.n, sizes.n2
    if sense == ">=":
        # the candidate will hold s_p(A) ≈ κ' s_p(B): predict ρ_A at that rate (fixed point)
        rhoB = (bnd.upper(rB * nB, nB, d) - rB) / rB
        k = kappa
        for _ in range(30):
            a = min(1.0, k * rB)
            rhoA = (a - bnd.lower(a * nA, nA, d)) / a
            k = min(KAPPA_CAP, kappa * (1 + 2 * rhoB) / max(1e-9, 1 - 2 * rhoA))
        return float(k)
    rhoA = (bnd.upper(rA * nA, nA, d) - rA) / rA
    rhoB = (rB - bnd.lower(rB * nB, nB, d)) / rB
    return float(kappa * max(0.0, 1 - 2 * rhoB) / (1 + 2 * rhoA))


def safety_bound(p: Promise, ev: Evidence, d: float, bnd: B.Bound = B.BOUNDS[B.DEFAULT]
                 ) -> tuple[float, bool]:
    """The one-sided bound on ``p``'s quantity from the safety part and whether it passes."""
    if p.quantity.kind == "ratio":
        if p.sense == ">=":
            lo_a, hi_b = bnd.lower(ev.k, ev.n, d), bnd.upper(ev.k2, ev.n2, d)
            value = lo_a / hi_b if hi_b > 0 else 0.0
            return value, value >= p.bound
        hi_a, lo_b = bnd.upper(ev.k, ev.n, d), bnd.lower(ev.k2, ev.n2, d)
        value = hi_a / lo_b if lo_b > 0 else float("inf")
        return value, value <= p.bound
    if p.sense == "<=":
        value = bnd.upper(ev.k, ev.n, d)
        return value, value <= p.bound
    value = bnd.lower(ev.k, ev.n, d)
    return value, value >= p.bound


def pass_probability(p: Promise, ev: Evidence, sizes: Evidence, d: float,
                     bnd: B.Bound = B.BOUNDS[B.DEFAULT]) -> float:
    """The probability that :func:`safety_bound` passes for ``p`` when the safety part's
    counts are binomial at ``ev``'s rates with ``sizes``' group sizes (independent groups):
    Σ over the privileged count of its probability times the protected count's tail beyond
    the count that first passes (each one-sided bound is monotone in its count)."""
    from scipy.stats import binom

    def bounds(n, lower):
        f = bnd.lower if lower else bnd.upper
        return np.atleast_1d(np.asarray(f(np.arange(n + 1), n, d), dtype=float))

    def rate(k, n):
        return min(1.0, max(0.0, k / n)) if n else 0.0

    if p.quantity.kind != "ratio":
        n, r = sizes.n, rate(ev.k, ev.n)
        if n <= 0:
            return 0.0
        b = bounds(n, lower=p.sense == ">=")
        ok = b >= p.bound if p.sense == ">=" else b <= p.bound
        return float(binom.pmf(np.flatnonzero(ok), n, r).sum())
    nA, nB, rA, rB = sizes.n, sizes.n2, rate(ev.k, ev.n), rate(ev.k2, ev.n2)
    if nA <= 0 or nB <= 0:
        return 0.0
    kB = np.arange(nB + 1)
    wB = binom.pmf(kB, nB, rB)
    if p.sense == ">=":  # L_A(k_A) ≥ κ U_B(k_B): k_A at least the first count that passes
        LA, UB = bounds(nA, lower=True), bounds(nB, lower=False)
        first = np.searchsorted(LA, p.bound * UB, side="left")
        return float(np.sum(wB * binom.sf(first - 1, nA, rA)))
    UA, LB = bounds(nA, lower=False), bounds(nB, lower=True)  # U_A(k_A) ≤ κ L_B(k_B)
    last = np.searchsorted(UA, p.bound * LB, side="right") - 1
    return float(np.sum(wB * np.where(last >= 0, binom.cdf(last, nA, rA), 0.0)))


def _tightened(promises, pilot, cand_task, sizes, d, bnd) -> list[float]:
    """Each promise's internal bound, from the pilot's rates on the candidate part."""
    y_c, pred_c = _positive(pilot, cand_task.train)
    out = []
    for p, size in zip(promises, sizes, strict=True):
        if p.quantity.kind == "ratio":
            ev = rate_evidence(p.quantity, y_c, pred_c, cand_task.train.rows)
            out.append(tightened_ratio(p.bound, p.sense, ev, size, d, bnd))
        else:
            out.append(tightened_rate(p.bound, p.sense, size.n, d, bnd))
    return out


def predicted_test(plugin, params: dict, cand_task, promises, sizes, d: float,
                   seed: int, bnd: B.Bound = B.BOUNDS[B.DEFAULT]) -> dict:
    """The safety test's pass probability for one setting, predicted on the candidate part
    only: out-of-fold predictions of :data:`CV_FOLDS` fits give each promise's rates, and
    :func:`pass_probability` takes them to the safety part's sizes; the smallest over the
    promises (a union bound would need their dependence). Returns that probability and the
    out-of-fold error; a fold without a feasible fit gives probability 0."""
    from sklearn.model_selection import StratifiedKFold

    from safeclf.data.task import Task
    from safeclf.errors import InfeasibleError, SolverError

    train = cand_task.train
    y = np.asarray(train.y)
    pred = np.zeros(y.shape[0], dtype=bool)
    folds = StratifiedKFold(CV_FOLDS, shuffle=True, random_state=seed + 7)
    try:
        for tr, va in folds.split(np.zeros(y.shape[0]), y):
            fold = Task(dataset=cand_task.dataset, train=train.take(tr), test=cand_task.test,
                        cal=cand_task.cal, info=cand_task.info, seed=cand_task.seed)
            est = plugin.build(params, random_state=seed)
            est = plugin.fit(est, fold) or est
            pred[va] = _is_positive(est.predict(train.take(va).X), est)
    except (InfeasibleError, SolverError):
        return {"error": float("nan"), "pass_probability": 0.0}
    y_pos = _is_positive(y, est)
    prob = min(pass_probability(p, rate_evidence(p.quantity, y_pos, pred, train.rows), size, d,
                                bnd)
               for p, size in zip(promises, sizes, strict=True))
    return {"error": float(np.mean(pred != y_pos)), "pass_probability": float(prob)}


def _choose(table: list[dict]) -> int:
    """The setting certified training keeps: the largest predicted pass probability; among
    equal ones, the smallest out-of-fold error."""
    def key(i):
        err = table[i]["error"]
        return (-table[i]["pass_probability"], err if np.isfinite(err) else np.inf)

    return min(range(len(table)), key=key)


def certify_in_training(plugin, params: dict, task, delta: float, fraction: float, seed: int,
                        bound: str = B.DEFAULT, allow_degenerate: bool = False) -> Outcome:
    """Candidate selection, safety test and the outcome (see the module docstring); ``bound``
    names the one-sided bound of the tightening and the safety test (:mod:`safeclf.guarantees.bounds`).
    A candidate that passes but is degenerate on the training rows (:mod:`safeclf.guarantees.trivial`)
    is no solution unless ``allow_degenerate``."""
    bnd = B.get(bound)
    from safeclf.errors import InfeasibleError, SolverError

    # only "no feasible candidate" is a no-solution outcome; a user error stays a failure
    SafeclfError = (InfeasibleError, SolverError)

    cand_task, safe, safe_idx = split_train(task, fraction, seed)
    record = {"how": "training", "bound": bnd.name, "approximate": bnd.approximate,
              "delta": delta, "fraction": fraction, "n_candidate": len(cand_task.train),
              "n_safety": len(safe)}
    hook = getattr(plugin, "candidate_params", None)
    settings = hook(params, cand_task) if hook is not None else [params]
    promises, pilots = None, []
    for setting in settings:
        try:
            pilot = plugin.build(setting, random_state=seed)
            pilot = plugin.fit(pilot, cand_task) or pilot
        except SafeclfError as exc:
            record.update(reason=f"candidate selection: {exc}")
            continue
        if promises is None:
            promises = pilot_promises(plugin, pilot, cand_task)
        pilots.append((setting, pilot))
    if not pilots:
        return Outcome(None, [], record)
    record.pop("reason", None)
    m = sum(n_bounds(p) for p in promises)
    d = delta / m
    certified = [replace(p, kind="high_confidence", delta=delta,
                         statement=p.statement.replace("(training data)", "(population)")
                         + f", with probability ≥ {1 - delta:g}",
                         source=p.source + "; certified by a Seldonian safety test "
                         f"on {len(safe)} held-back training rows",
                         note=("certified for predict on held-back rows (union bound over "
                               f"{m} one-sided {bnd.name} bounds)"
                               + ("; approximate: the t-test bound's coverage is not "
                                  "guaranteed" if bnd.approximate else "")))
                 for p in promises]
    safe_pos = _is_positive(safe.y, pilots[0][1])
    sizes = [promise_sizes(p.quantity, safe_pos, safe.rows) for p in promises]
    candidates = []
    for setting, pilot in pilots:
        # bounds that contradict each other once tightened are pulled back towards the
        # promises (conflicts.reconcile); promises that contradict each other have no model
        fit = reconcile(promises, [p.bound for p in promises],
                        _tightened(promises, pilot, cand_task, sizes, d, bnd))
        if fit.reason:
            record["reason"] = f"no model: {fit.reason}; next: promises that can hold together"
            return Outcome(None, [_uncertified(p) for p in certified], record)
        # one bound per promise: a comparison of several pairs of groups has several
        candidates.append((plugin.tightened_params(setting, fit.bounds, promises=promises),
                           fit.bounds, fit.given_back))
    chosen = 0
    if len(candidates) > 1:
        table = []
        for (tparams, internal, _), (setting, _) in zip(candidates, pilots, strict=True):
            row = predicted_test(plugin, tparams, cand_task, promises, sizes, d, seed, bnd)
            table.append({"setting": _difference(setting, params), "internal_bounds": internal,
                          **row})
        chosen = _choose(table)
        for i, row in enumerate(table):
            row["chosen"] = i == chosen
        record["candidates"] = table
    tparams, internal, given_back = candidates[chosen]
    record["internal_bounds"] = {p.name: b for p, b in zip(promises, internal, strict=True)}
    if given_back:  # the share θ of each tightening given back (conflicts.reconcile)
        record["tightening_given_back"] = given_back
    try:
        est = plugin.build(tparams, random_state=seed)
        est = plugin.fit(est, cand_task) or est
    except SafeclfError as exc:
        record.update(reason=f"no model: candidate selection at the tightened bounds found "
                             f"none ({exc}); next: a looser bound, or more rows")
        return Outcome(None, [_uncertified(p) for p in certified], record)
    tests, evs = safety_test(promises, est, safe, d, bnd)
    failed = [_shortfall(p, ev, d, bnd, len(safe), len(task.train), fraction, safe.rows)
              for p, ev in zip(promises, evs, strict=True) if not tests[p.name]["passed"]]
    record["safety_tests"] = tests
    record["evidence"] = _evidence(promises, evs, tests, safe_idx, len(task.train), seed,
                                   fraction, delta, bnd)
    if failed:
        from safeclf.guarantees.shortfall import sentence

        record["failed"] = failed[0]
        record["reason"] = "no model: the safety test failed; " + "; ".join(
            sentence(f, delta) for f in failed)
        return Outcome(None, [_uncertified(p) for p in certified], record)
    from safeclf.guarantees import trivial

    y = np.asarray(task.train.y)
    verdict = trivial.degenerate(y, y, np.asarray(est.predict(task.train.X)),
                                 rows="the training rows")
    record["trivial"] = verdict.reason
    if verdict.degenerate and not allow_degenerate:
        record["reason"] = trivial.no_solution_reason(verdict)
        return Outcome(None, [replace(_uncertified(p), note=trivial.NOTHING_PROMISED)
                              for p in certified], record)
    return Outcome(est, certified, record)


def _evidence(promises, evs, tests, safe_idx, n_train: int, seed: int, fraction: float,
              delta: float, bnd: B.Bound) -> dict:
    """The safety test's evidence record (:mod:`safeclf.guarantees.certify.evidence`)."""
    from safeclf.guarantees.certify.evidence import held_back, statistic

    return {"route": "training", "seed": int(seed), "fraction": fraction, "delta": delta,
            "bound": bnd.name, "test": "union_bound", "held_back": held_back(safe_idx, n_train),
            "statistic": statistic(promises, evs, tests),
            "passed": all(t["passed"] for t in tests.values())}


def recheck_training(plugin, params: dict, task, delta: float, fraction: float, seed: int,
                     bound: str, est) -> dict:
    """The evidence of :func:`certify_in_training` recomputed for a stored model ``est``: the
    held-back rows re-drawn from ``seed``, the promises of the first pilot that fits (the
    user's bounds; :func:`pilot_promises`), and the safety test (:func:`safety_test`) of
    ``est`` on those rows."""
    from safeclf.errors import InfeasibleError, SolverError

    bnd = B.get(bound)
    cand_task, safe, safe_idx = split_train(task, fraction, seed)
    hook = getattr(plugin, "candidate_params", None)
    promises = None
    for setting in hook(params, cand_task) if hook is not None else [params]:
        try:
            pilot = plugin.build(setting, random_state=seed)
            pilot = plugin.fit(pilot, cand_task) or pilot
        except (InfeasibleError, SolverError):
            continue
        promises = pilot_promises(plugin, pilot, cand_task)
        break
    if promises is None:
        return {"route": "training", "passed": False,
                "problem": "no pilot of the candidate part fits any more"}
    d = delta / sum(n_bounds(p) for p in promises)
    tests, evs = safety_test(promises, est, safe, d, bnd)
    return _evidence(promises, evs, tests, safe_idx, len(task.train), seed, fraction, delta,
                     bnd)


def pilot_promises(plugin, pilot, cand_task) -> list[Promise]:
    """The promises certified training tests: those the first fitted pilot declares (its
    bounds the user's, before tightening), each about a rate or a ratio of rates."""
    promises = [p for p in plugin.promises(pilot, cand_task) if p.kind != "none"]
    if not promises or any(p.quantity.kind not in ("rate", "ratio") for p in promises):
        raise ValueError(f"method '{plugin.name}' declares no rate promise to certify")
    return promises


def safety_test(promises, est, safe, d: float, bnd: B.Bound) -> tuple[dict, list[Evidence]]:
    """The safety test of ``est`` on the held-back part ``safe``: per promise its one-sided
    bound at level ``d`` and whether it passes (:func:`safety_bound`), and the counts it rests
    on. ``safeclf verify`` re-runs this on a stored model."""
    y_s, pred_s = _positive(est, safe)
    tests, evs = {}, []
    for p in promises:
        ev = rate_evidence(p.quantity, y_s, pred_s, safe.rows)
        value, ok = safety_bound(p, ev, d, bnd)
        tests[p.name] = {"bound": value, "passed": ok}
        evs.append(ev)
    return tests, evs


def _shortfall(p: Promise, ev: Evidence, d: float, bnd, n_safe: int, n_train: int,
               fraction: float, rows) -> dict:
    """:func:`safeclf.guarantees.shortfall.shortfall` for the safety test's form: each one-sided bound at
    d = δ/m, so a comparison's pair of bounds is the test at level 2d."""
    from safeclf.guarantees.shortfall import pair_names, shortfall

    q = p.quantity
    pair = pair_names(q, rows[q.groups]) if q.kind == "ratio" else None
    # the safety test's own form (safety_bound: two one-sided bounds), so the limit and the
    # rows needed said are those of the test that ran, not of the exact pair test
    return shortfall(p, ev, 2 * d if q.kind == "ratio" else d, bnd, n_safe, n_train=n_train,
                     fraction=fraction, groups=pair, test="union")


def _uncertified(p: Promise) -> Promise:
    """A promise of a certification that returned no model: it says so, and claims nothing."""
    return replace(p, statement=p.statement.split(", with probability")[0]
                   + ": not certified, no model returned",
                   note="the safety test failed: nothing is promised")


def _difference(setting: dict, params: dict) -> dict:
    """The entries of ``setting`` that differ from ``params``."""
    return {k: v for k, v in setting.items() if params.get(k) != v}

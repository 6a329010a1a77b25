"""The path post-hoc certification tests, from the candidate part only: the grid of global
thresholds, the levels of per-group rules, each rule's predicted probability of passing the
held-back test, and the order of the path (:mod:`safeclf.guarantees.certify.threshold`, whose
docstring holds the validity argument: nothing here looks at the held-back rows)."""

from __future__ import annotations

import numpy as np

from safeclf.guarantees import ltt

#: The largest level ρ of the per-group rules (a lagging group's rate up to 3× the top
#: group's, as certified training's largest κ', :data:`safeclf.guarantees.certify.training.KAPPA_CAP`).
RHO_CAP = 3.0



def _grid(score: np.ndarray, n: int) -> np.ndarray:
    """Candidate global thresholds: midpoints between the scores' quantiles, and ±inf."""
    q = np.unique(np.quantile(score, np.linspace(0, 1, n + 1)))
    mids = (q[:-1] + q[1:]) / 2 if q.size > 1 else q
    return np.concatenate([[-np.inf], mids, [np.inf]])


def _threshold_for_rate(score: np.ndarray, rate: float, presorted: bool = False) -> float:
    """The largest threshold putting at least ``rate`` of ``score`` above it (``presorted``:
    ``score`` is already in ascending order, as a caller asking for many rates keeps it)."""
    if score.size == 0:
        return np.inf
    k = int(np.ceil(rate * score.size - 1e-9))
    if k <= 0:
        return float(score[-1] if presorted else np.max(score))
    if k > score.size:
        return -np.inf
    v = float((score if presorted else np.sort(score))[score.size - k])  # k-th largest
    return v - 1e-12 * max(1.0, abs(v))


def _rho_range(promises, entry: str, kappa: float) -> tuple[float, float]:
    """(largest, smallest) level ρ of the per-group rules: from :data:`RHO_CAP` (or 1/κ) down
    to κ; where a promise also bounds the ratio from above (a band, s_p(A) ≤ u·s_p(B)), from
    min(u, cap) down to max(κ, 1/u), since a lagging group set to ρ times the top group's rate
    makes the ratio ρ or 1/ρ, whichever group lags (a pair held ≥ κ in both orders,
    ``compare: worst_pair``, is such a band with u = 1/κ)."""
    ratios = [p for p in promises if p.quantity.kind == "ratio" and p.quantity.groups == entry
              and p.quantity.event == "predicted_positive"]
    uppers = [p.bound for p in ratios if p.sense == "<="]
    # a pair held from below in both orders (compare: worst_pair) is a band on each order:
    # s_p(A) ≥ κ s_p(B) and s_p(B) ≥ κ s_p(A) bound the ratio A/B by 1/κ from above
    pairs = {(p.quantity.protected, p.quantity.privileged): p.bound for p in ratios
             if p.sense == ">=" and p.quantity.protected is not None}
    uppers += [1.0 / b for (a, c), b in pairs.items() if (c, a) in pairs and b > 0]
    if not uppers:
        return max(RHO_CAP, 1.0 / kappa), kappa
    u = min(uppers)
    hi = max(min(RHO_CAP, u), kappa)
    lo = max(kappa, 1.0 / u) if 1.0 / u <= hi else kappa
    return hi, lo


#: Simulated held-back parts that predict each rule's probability of passing the test.
PASS_DRAWS = 400


#: At most this many candidate rows are resampled per simulated draw of the joint shocks
#: (:func:`resampled_shocks`): the shocks' correlations across rules need the rows, their size
#: only the scale, which the formula restores.
RESAMPLE_ROWS = 20_000
#: Resampled draws of the joint shocks (each counts every rule once).
RESAMPLE_DRAWS = 200


def resampled_shocks(promises, cand, rules, entry, draws: int = RESAMPLE_DRAWS, seed: int = 0,
                     rows: int = RESAMPLE_ROWS) -> dict:
    """Standardised deviations of every rule's rates, jointly across rules, from resamples of
    the candidate part (a ranking device, never a test: the held-back part is not looked at).

    A draw resamples ``rows`` candidate rows with replacement (at most the part's size) and
    counts every rule on them (:class:`~safeclf.guarantees.certify.counting.SortedPart`);
    each count's rate deviation from its candidate rate, divided by its resampling standard
    deviation, is that rule's shock in that draw. Rules that count the same rows (two
    thresholds a few rows apart) get nearly the same shock, rules that count other rows
    (another reference threshold) partly independent ones: what a held-back part does to the
    rules of a path, which a single shock shared by every rule (the rules' passes nested) does
    not show. Returns ``{(repr(quantity), side): (rules, draws) array}``, side 0 for (k, n)
    and 1 for (k₂, n₂), for :func:`pass_draws`."""
    from safeclf.guarantees.certify.counting import SortedPart

    rng = np.random.default_rng(seed)
    n_c = cand.score.size
    m = int(min(rows, n_c))
    base = SortedPart(cand, entry)
    ref = base.counts(promises, base.positives(rules))
    out: dict = {}
    for _ in range(draws):
        part = cand.take(np.sort(rng.integers(0, n_c, m)))
        sp = SortedPart(part, entry)
        got = sp.counts(promises, sp.positives(rules))
        for p, (k, n, k2, n2), (kb, nb, kb2, nb2) in zip(promises, ref, got, strict=True):
            for side, kk, nn, kkb, nnb in ((0, k, n, kb, nb), (1, k2, n2, kb2, nb2)):
                key = (repr(p.quantity), side)
                if key in out and len(out[key]) > _:
                    continue  # another promise on the same counts: one shock for both
                mm = np.maximum(nn, 1.0)
                r = kk / mm
                v = np.clip(r, 0.5 / mm, 1 - 0.5 / mm)
                # the resample counts ~ nn·m/n_c rows of this side
                sd = np.sqrt(v * (1 - v) / np.maximum(nn * m / n_c, 1.0))
                z = np.where(nnb > 0, (kkb / np.maximum(nnb, 1.0) - r) / sd, 0.0)
                out.setdefault(key, []).append(z)
    return {k: np.stack(v, axis=1) for k, v in out.items()}


def pass_draws(promises, counts, sizes, level: float, bnd, draws: int = PASS_DRAWS,
               seed: int = 0, shocks: dict | None = None) -> np.ndarray:
    """(rules, draws): whether each rule passes the test at ``level`` on each simulated
    held-back part, from the candidate part only (a ranking and a record, never a test).

    ``counts`` are the rules' candidate counts per promise (:func:`_counts`), ``sizes`` the
    held-back sizes (:func:`predicted_sizes`). In a draw, each count's held-back rate is the
    candidate rate r plus a deviation of variance r(1 − r)(1/n_c + 1/n_s): the held-back
    part's sampling noise at its size n_s, and the candidate rate's own at its size n_c (the
    rule's true rate is not its candidate rate, which is a sample — and an in-sample one, since
    the thresholds were set on those rows). The standardised deviations are ``shocks`` (per
    rule and draw, :func:`resampled_shocks`) or, without them, one normal deviation per draw
    shared by every rule (common random numbers: the ranking is not noisier than the rules'
    differences); either way promises that count the same rows see the same one (the two
    sides of a band see one draw, so a rule passes both only when the draw falls inside the
    band). The p-values of a draw are those of the test (``predict``: the exact test's normal
    approximation, :mod:`safeclf.pairtest`)."""
    rng = np.random.default_rng(seed)
    common: dict = {}
    passed = None
    for p, (k, n, k2, n2), s in zip(promises, counts, sizes, strict=True):
        drawn = []
        for side, kk, nn, ns in ((0, k, n, s.n), (1, k2, n2, s.n2 or 0)):
            key = (repr(p.quantity), side)
            z = shocks[key] if shocks is not None else \
                common.setdefault(key, rng.standard_normal(draws))[None, :]
            if not ns:
                drawn.append(np.zeros((kk.size, z.shape[1])))
                continue
            m = np.maximum(nn, 1.0)
            r = np.clip(kk / m, 0.0, 1.0)
            v = np.clip(r, 0.5 / m, 1 - 0.5 / m)  # off 0 and 1 by half a count
            sd = np.sqrt(v * (1 - v) * (1 / m + 1 / ns))
            drawn.append(np.clip(np.round((r[:, None] + sd[:, None] * z) * ns), 0, ns))
        ok = ltt.rejects(p, drawn[0], s.n, drawn[1], s.n2 or 0, level, bnd, predict=True)
        passed = ok if passed is None else passed & ok
    return passed


def pass_probabilities(promises, counts, sizes, level: float, bnd, draws: int = PASS_DRAWS,
                       seed: int = 0, shocks: dict | None = None) -> np.ndarray:
    """Each rule's predicted probability of passing the test at ``level`` on the held-back
    part: the share of simulated held-back parts on which its joint p-value is ≤ ``level``
    (:func:`pass_draws`)."""
    return pass_draws(promises, counts, sizes, level, bnd, draws, seed, shocks).mean(axis=1)


def expected_error(passes: np.ndarray, errors: np.ndarray, path, no_solution: float = 1.0):
    """The error fixed-sequence testing along ``path`` returns, averaged over the simulated
    held-back parts (``passes``, rules × draws, :func:`pass_draws`): on a draw, the most
    accurate rule before the path's first failure, or ``no_solution`` if its first rule
    fails."""
    if not len(path):
        return float(no_solution)
    alive = np.logical_and.accumulate(passes[list(path)], axis=0)
    return float(np.where(alive, errors[list(path)][:, None], no_solution).min(axis=0).mean())


def refine_path(passes, errors, path, pool, no_solution: float = 1.0,
                rounds: int = 32) -> list[int]:
    """``path`` improved for :func:`expected_error` by local search on the simulated
    held-back parts: each round applies the single change that lowers it most — leaving a
    rule of the path out, or putting a rule of ``pool`` in (at the place its predicted pass
    probability gives it) — until none does. Started from the front of the marginal pass
    probabilities (:func:`_front`), which is the best path only if the rules' passes were
    nested; on resampled shocks (:func:`resampled_shocks`) they are not: a rule that is
    likely to pass may still stop a sequence whose later rules would have passed, and a rule
    off the front (a level ρ above 1 where the lagging group's held-back rate tends to fall
    short) may carry the sequence to them."""
    passes = np.asarray(passes, bool)
    errors = np.asarray(errors, float)
    prob = passes.mean(axis=1)
    path = list(path)
    now = expected_error(passes, errors, path, no_solution)
    for _ in range(rounds):
        tries = [path[:j] + path[j + 1:] for j in range(len(path))]
        for i in pool:
            if i not in path:
                at = sum(prob[k] > prob[i] or (prob[k] == prob[i] and errors[k] <= errors[i])
                         for k in path)
                tries.append(path[:at] + [i] + path[at:])
        if not tries:
            break
        scores = [expected_error(passes, errors, t, no_solution) for t in tries]
        j = int(np.argmin(scores))
        if scores[j] >= now - 1e-12:
            break
        path, now = tries[j], scores[j]
    return path


def _front(probability, errors) -> list[int]:
    """The path fixed-sequence testing walks: the rules on the front of (predicted pass
    probability, candidate error), most likely to pass first; a rule is on it only if its
    error is below that of every rule before it (a rule dominated in both could only end the
    sequence early, and is never the best certified). If a rule's passing implied that of
    every rule more likely to pass (nearby rules' held-back counts move together), this order
    would return the most accurate rule that passes on its own: no rule less likely to pass
    stands before it and stops the sequence."""
    out, best = [], np.inf
    for i in sorted(range(len(errors)), key=lambda i: (-probability[i], errors[i])):
        if errors[i] < best:
            out.append(i)
            best = errors[i]
    return out

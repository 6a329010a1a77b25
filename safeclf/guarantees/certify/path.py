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
    """Candidate global thresholds: midpoints between the quantiles of ``score`` (in
    ascending order), and ±inf."""
    q = np.unique(sorted_quantiles(score, np.linspace(0, 1, n + 1)))
    mids = (q[:-1] + q[1:]) / 2 if q.size > 1 else q
    return np.concatenate([[-np.inf], mids, [np.inf]])


def sorted_quantiles(ascending: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``np.quantile(ascending, qs)`` (its default, linear method: the same floats) of values
    already in ascending order, read at their positions instead of partitioning a copy (on a
    million rows, most of the grid's time)."""
    a, qs = np.asarray(ascending, dtype=float), np.asarray(qs, dtype=float)
    at = (a.size - 1) * qs
    lo = np.floor(at)
    hi = np.minimum(lo + 1, a.size - 1).astype(np.intp)
    t = at - lo
    left, right = a[lo.astype(np.intp)], a[hi]
    with np.errstate(invalid="ignore"):  # between two infinite scores: nan, as np.quantile
        step = right - left
        return np.where(t >= 0.5, right - step * (1 - t), left + step * t)


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


def pass_probabilities(promises, counts, sizes, level: float, bnd, draws: int = PASS_DRAWS,
                       seed: int = 0, joint: np.ndarray | None = None) -> np.ndarray:
    """Each rule's predicted probability of passing the test at ``level`` on the held-back
    part, from the candidate part only (a ranking and a record, never a test): the share of
    ``draws`` simulated held-back parts on which its joint p-value is ≤ ``level``.

    ``counts`` are the rules' candidate counts per promise (:func:`_counts`), ``sizes`` the
    held-back sizes (:func:`predicted_sizes`). In a draw, each count's held-back rate is the
    candidate rate r plus a normal deviation of variance r(1 − r)(1/n_c + 1/n_s): the held-back
    part's sampling noise at its size n_s, and the candidate rate's own at its size n_c (the
    rule's true rate is not its candidate rate, which is a sample — and an in-sample one, since
    the thresholds were set on those rows). The deviations are the same for every rule
    (common random numbers: the ranking is not noisier than the rules' differences) and for
    promises that count the same rows (the two sides of a band see one draw, so a rule passes
    both only when the draw falls inside the band). The p-values of a draw are those of the
    test (``predict``: the exact test's normal approximation, :mod:`safeclf.pairtest`).

    ``joint``: the rules' simulated joint p-values, :func:`simulated_p_values` of the same
    arguments (then only compared with ``level``: the same answer, since a rule passes a
    draw when every promise's p-value is ≤ ``level``, that is when their largest is)."""
    if joint is None:
        joint = simulated_p_values(promises, counts, sizes, bnd, draws, seed)
    if joint is not None:
        return (joint <= level).mean(axis=1)
    passed = None
    for p, drawn, s in _draws(promises, counts, sizes, draws, seed):
        ok = ltt.rejects(p, drawn[0], s.n, drawn[1], s.n2 or 0, level, bnd, predict=True)
        passed = ok if passed is None else passed & ok
    return passed.mean(axis=1)


def simulated_p_values(promises, counts, sizes, bnd, draws: int = PASS_DRAWS,
                       seed: int = 0) -> np.ndarray | None:
    """(rules, draws): each rule's joint p-value (the largest of its promises') on each of
    :func:`pass_probabilities`' simulated held-back parts, computed once for every level the
    path asks about (:func:`with_fallback`, Holm's level); None when a promise's test decides
    at a level without a p-value (a comparison under the union test, :func:`ltt.rejects`)."""
    if any(p.quantity.kind in ltt.GROUP_KINDS for p in promises) and \
            ltt.pair_test(bnd) == "union":
        return None
    joint = None
    for p, drawn, s in _draws(promises, counts, sizes, draws, seed):
        pv = ltt.p_values(p, drawn[0], s.n, drawn[1], s.n2 or 0, bnd, predict=True)
        joint = pv if joint is None else np.maximum(joint, pv)
    return joint


def _draws(promises, counts, sizes, draws: int, seed: int):
    """Per promise: (the promise, its two sides' simulated held-back counts (rules, draws),
    its held-back sizes), as :func:`pass_probabilities` describes them."""
    rng = np.random.default_rng(seed)
    shocks: dict = {}
    for p, (k, n, k2, n2), s in zip(promises, counts, sizes, strict=True):
        drawn = []
        for side, kk, nn, ns in ((0, k, n, s.n), (1, k2, n2, s.n2 or 0)):
            z = shocks.setdefault((repr(p.quantity), side), rng.standard_normal(draws))
            if not ns:
                drawn.append(np.zeros((kk.size, draws)))
                continue
            m = np.maximum(nn, 1.0)
            r = np.clip(kk / m, 0.0, 1.0)
            v = np.clip(r, 0.5 / m, 1 - 0.5 / m)  # off 0 and 1 by half a count
            sd = np.sqrt(v * (1 - v) * (1 / m + 1 / ns))
            drawn.append(np.clip(np.round((r[:, None] + sd[:, None] * z) * ns), 0, ns))
        yield p, drawn, s


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


#: The stricter levels at which the rules the prediction rates equally sure are told apart
#: (:func:`with_fallback`): δ·10⁻¹ … δ·10⁻⁸, until one rule is surer than the rest.
STRICTER = tuple(10.0 ** -k for k in range(1, 9))


def with_fallback(order, usable, prob, errors, promises, counts, sizes, delta, bnd,
                  joint: np.ndarray | None = None):
    """The path with, in front, the rule of widest margin among those rated sure.

    At 1 (every simulated held-back part passes) the predicted pass probability saturates,
    and the candidate rates it comes from are in-sample (the model and its thresholds were
    fitted on those rows), so optimistic: the most accurate of the rules rated 1, the path's
    first, can fail on the held-back rows and end the sequence with nothing where a rule with
    more margin would have passed. So where the first is rated 1, the usable rule rated 1
    that stays sure at the strictest of the levels δ·:data:`STRICTER` (then the most
    accurate) is tested first, when it is not already the first. This costs little:
    fixed-sequence testing spends δ on each test in turn, the sequence goes on to the path's
    first rule when it passes, and it ends earlier only where that rule — rated at least as
    sure at every level — fails. All of it is read off the candidate part, as the rest of the
    path. ``joint``: the rules' :func:`simulated_p_values`, read at each stricter level
    instead of simulating again."""
    if prob[order[0]] < 1.0:  # not saturated: the prediction ranks the rules
        return order
    tied = [i for i in usable if prob[i] >= 1.0]
    for factor in STRICTER:
        if len(tied) < 2:
            break
        sub = [tuple(np.asarray(a)[tied] for a in c) for c in counts]
        strict = pass_probabilities(promises, sub, sizes, delta * factor, bnd,
                                    joint=None if joint is None else joint[tied])
        tied = [i for i, q in zip(tied, strict, strict=True) if q >= strict.max()]
    best = min(tied, key=lambda i: errors[i])
    return order if best == order[0] else [best, *order]

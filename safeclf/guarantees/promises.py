"""Promises: what a fitted model guarantees, stated as data and checked on held-out data.

A :class:`Promise` names a *quantity* (:class:`Quantity`: a rate on a subset, a ratio of two
group rates, a per-point chance-constraint violation, an excess risk), its *sense* (``<=`` or
``>=``), its *bound*, its *kind* (:data:`KINDS`) and where it comes from (paper and
equation). Method plugins declare the promises of a fitted estimator
(:meth:`safeclf.plugins.contract.MethodPlugin.promises`); the job checks each on the test split
(:func:`check`): an estimate, the number of rows it rests on, a confidence interval at the
spec's ``confidence`` and a verdict.

Intervals
---------
* a rate k/n: the exact Clopper–Pearson interval (two-sided, each tail (1 − confidence)/2);
* a ratio of two independent rates (k₁/n₁)/(k₂/n₂): Katz's log interval,
  exp(log r̂ ± z·√(1/k₁ − 1/n₁ + 1/k₂ − 1/n₂)), with 0.5 added to a zero count (then the
  interval is still finite); its coverage is shown by simulation in ``tests/guarantees/test_promises.py``.
  Conditional on the group sizes of the test split.
* a difference of two independent rates k₂/n₂ − k₁/n₁ (privileged minus protected):
  Newcombe's hybrid score interval (his method 10, from the two Wilson intervals).

Groups
------
A ratio or difference compares two groups of rows ``groups`` (:mod:`safeclf.guarantees.groups`): the
privileged group and ``protected`` (one group; None: every row not privileged, the two-group
meaning). A comparison of more than two groups is several promises, one per pair
(:func:`safeclf.guarantees.groups.comparisons`), each naming its pair in its statement.

How much data a verdict needs
-----------------------------
An ``inconclusive`` check records ``n_needed`` (:func:`n_needed`): the number of rows of the
part checked that would make the verdict conclusive if the observed shares stayed as they are.

Verdicts (direction-aware)
--------------------------
``holds`` when the whole interval is on the promised side of the bound, ``violated`` when the
whole interval is on the other side, ``inconclusive`` otherwise. A promise with kind ``none``
gets the verdict ``no promise``. ``beyond`` records whether the point estimate is on the wrong
side: across seeds, its share is the failure rate of Seldonian experiments.

A ``violated`` verdict is evidence against the *population* quantity. For a high-confidence
promise (at δ) it is allowed to happen in up to a share δ of training draws; for an
in-expectation promise the rate of one fitted model may exceed the bound; for a training-only
promise nothing was promised on new data. Read the verdict with the kind.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from safeclf.guarantees.rates import EVENTS as _EVENTS
from safeclf.guarantees.rates import (  # noqa: F401  (GROUP_KINDS, Quantity: stated here too)
    GROUP_KINDS,
    Quantity,
    counted_rows,
    event_coefficients,
    event_values,
    rate_counts,
    rate_terms,
)

#: How strong a promise is.
KINDS = {
    "high_confidence": "with probability ≥ 1 − δ over the data used to certify it",
    "expectation": "in expectation over the calibration draw",
    "worst_case": "for every law consistent with the stated information (no sampling error)",
    "training": "on the training data only (nothing promised on new data)",
    "declared": "stated by the user; checked on held-out data, guaranteed only when certified",
    "none": "no guarantee",
}
VERDICTS = ("holds", "violated", "inconclusive", "no promise", "not checked")
#: The decision rules a promise can be about (:attr:`Promise.rule`).
RULES = {
    "predict": "the model's predict (deterministic)",
    "randomized": "predict draws the positive class with probability predict_proba; rates "
                  "in expectation over the draws",
}

#: What is measured, and the events a rate counts, are the rate vocabulary's
#: (:mod:`safeclf.guarantees.rates`); re-exported here, where promises are stated.
EVENTS = tuple(_EVENTS)


@dataclass(frozen=True)
class Promise:
    """One guarantee of a fitted model.

    Parameters
    ----------
    name : str
        Short identifier, unique within a job (``joint_fp_rate``, ``constraint_fairness``).
    statement : str
        The promise in words with its equation (``P(y = U, predicted S) ≤ ε``).
    quantity : Quantity
        What is measured.
    sense : {"<=", ">="}
        The side of ``bound`` the quantity is promised to be on.
    bound : float
        The value promised.
    kind : str
        One of :data:`KINDS` (high-confidence, in expectation, worst-case, training, ...).
    source : str
        Paper and equation.
    delta : float, optional
        δ of a high-confidence promise.
    note : str, default ""
        Anything a reader must know to read the verdict.
    rule : {"predict", "randomized"}, default "predict"
        The decision rule the promise is about: the model's ``predict`` (the rule every
        check measures), or ``"randomized"`` (``predict`` draws the positive class with
        probability ``predict_proba``; a training promise then holds for the expected rates,
        so its training check uses the probabilities).
    tolerance : float, default 0.0
        For a ``training`` promise, how far (in the quantity's units) the training value may
        fall on the wrong side of the bound and still meet it (a solver's feasibility
        tolerance).
    positive : str, optional
        The favourable outcome a rate of positive predictions counts (``decision =
        approve``), set where it matters by :func:`safeclf.guarantees.outcome.name_promises`.
    """

    name: str
    statement: str
    quantity: Quantity
    sense: str
    bound: float
    kind: str
    source: str
    delta: float | None = None
    note: str = ""
    rule: str = "predict"
    tolerance: float = 0.0
    positive: str | None = None

    def __post_init__(self):
        if self.sense not in ("<=", ">="):
            raise ValueError(f"promise {self.name}: sense must be '<=' or '>=', got {self.sense!r}")
        if self.kind not in KINDS:
            raise ValueError(f"promise {self.name}: kind must be one of {', '.join(KINDS)}, "
                             f"got {self.kind!r}")
        if self.rule not in RULES:
            raise ValueError(f"promise {self.name}: rule must be one of {', '.join(RULES)}, "
                             f"got {self.rule!r}")


def no_promise(method: str, why: str) -> Promise:
    """The explicit statement that a model promises nothing (proset, the baselines, ...)."""
    why = why.removeprefix("none: ")
    return Promise(name="none", statement=f"{method} makes no promise: {why}",
                   quantity=Quantity(kind="none"), sense="<=", bound=float("nan"), kind="none",
                   source="-")


@dataclass
class Evidence:
    """What the held-out data says: counts (k, n) of a rate, or (k₁, n₁, k₂, n₂) of a ratio
    or difference (protected first), or a precomputed estimate and interval."""

    k: int = 0
    n: int = 0
    k2: int | None = None
    n2: int | None = None
    estimate: float | None = None
    interval: tuple[float, float] | None = None
    note: str = ""

    def scaled(self, c: float) -> Evidence:
        """The counts multiplied by ``c``: the same shares of every group, label and event on
        a part ``c`` times as large (counts may become non-integer)."""
        return Evidence(self.k * c, self.n * c, None if self.k2 is None else self.k2 * c,
                        None if self.n2 is None else self.n2 * c)


def smallest_scale(ok, max_scale: float, resolution) -> float:
    """The smallest factor c ≥ 1 with ``ok(c)`` (assumed monotone in c), found by doubling to
    a bracket and bisecting it until its width is at most ``resolution(lo)``; 1 when ``ok(1)``,
    ``inf`` when no c up to ``max_scale`` does."""
    if ok(1.0):
        return 1.0
    hi = 2.0
    while not ok(hi):
        if hi >= max_scale:
            return math.inf
        hi *= 2.0
    lo = hi / 2.0
    while hi - lo > resolution(lo):
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass
class Checked:
    """A promise with its held-out check: one row of ``promises.csv``."""

    promise: Promise
    estimate: float
    lower: float
    upper: float
    n: int
    confidence: float
    verdict: str
    beyond: bool | None
    note: str = ""
    extra: dict = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        p = self.promise
        q = {k: v for k, v in asdict(p.quantity).items() if v not in (None, False)}
        return {"promise": p.name, "statement": p.statement, "positive": p.positive,
                "kind": p.kind, "delta": p.delta,
                "rule": p.rule, "source": p.source, "sense": p.sense, "bound": p.bound,
                "quantity": q,
                "estimate": self.estimate, "lower": self.lower, "upper": self.upper,
                "n": self.n, "confidence": self.confidence, "verdict": self.verdict,
                "beyond": self.beyond, "note": "; ".join(x for x in (p.note, self.note) if x),
                **self.extra}


# -- intervals --------------------------------------------------------------------------------
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval for a binomial proportion from k successes in n trials: the
    two one-sided bounds, each at (1 − confidence) / 2.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    confidence : float, default 0.95
        Two-sided confidence level.

    Returns
    -------
    lower, upper : float
        The interval's ends (NaN when ``n`` is 0).
    """
    if n <= 0:
        return float("nan"), float("nan")
    from safeclf.guarantees.bounds import BOUNDS

    a = (1.0 - confidence) / 2.0
    cp = BOUNDS["clopper_pearson"]
    return float(cp.lower(k, n, a)), float(cp.upper(k, n, a))


def wilson(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (two-sided)."""
    from scipy.stats import norm

    if n <= 0:
        return float("nan"), float("nan")
    z = norm.ppf(1 - (1 - confidence) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(k1: float, n1: float, k2: float, n2: float,
                        confidence: float = 0.95) -> tuple[float, float, float]:
    """(estimate, lower, upper) of p₂ − p₁ = k₂/n₂ − k₁/n₁ (privileged minus protected) by
    Newcombe's hybrid score method (Newcombe 1998, method 10): the two Wilson intervals
    combined, d̂ − √((p̂₂ − l₂)² + (u₁ − p̂₁)²), d̂ + √((u₂ − p̂₂)² + (p̂₁ − l₁)²)."""
    if n1 <= 0 or n2 <= 0:
        return float("nan"), float("nan"), float("nan")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, confidence)
    l2, u2 = wilson(k2, n2, confidence)
    d = p2 - p1
    return (d, d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2),
            d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2))


def katz_ratio(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95,
               sides: int = 2) -> tuple[float, float, float]:
    """(estimate, lower, upper) of (k₁/n₁)/(k₂/n₂) by Katz's log method; a zero count is
    replaced by 0.5 for the interval.

    Parameters
    ----------
    k1, n1 : int
        Events and rows of the numerator's group (the protected group of a fairness ratio).
    k2, n2 : int
        Events and rows of the denominator's group (the privileged group).
    confidence : float, default 0.95
        Confidence level.
    sides : {1, 2}, default 2
        2: a two-sided interval; 1: each end a one-sided bound at ``confidence``.

    Returns
    -------
    estimate, lower, upper : float
        The ratio (NaN when ``k2`` is 0) and the interval's ends.
    """
    from scipy.stats import norm

    if n1 <= 0 or n2 <= 0:
        return float("nan"), float("nan"), float("nan")
    est = (k1 / n1) / (k2 / n2) if k2 > 0 else float("nan")
    a, b = max(k1, 0.5), max(k2, 0.5)
    se = math.sqrt(max(1 / a - 1 / n1 + 1 / b - 1 / n2, 0.0))
    z = norm.ppf(1 - (1 - confidence) / sides)
    centre = math.log((a / n1) / (b / n2))
    return est, math.exp(centre - z * se), math.exp(centre + z * se)


# -- evidence from a part ---------------------------------------------------------------------
def _pair(q: Quantity, y_pos, rows):
    """The protected and privileged rows of a group comparison, within its subset and label
    side."""
    from safeclf.guarantees import groups as G

    if q.predicted is not None:
        raise ValueError("a comparison of groups is of rates on fixed rows, not among the "
                         "predicted rows")
    base = counted_rows(q, y_pos, rows)
    prot, priv = G.pair_masks(rows[q.groups], q.privileged, q.protected)
    return prot & base, priv & base


def rate_value(q: Quantity, y_pos, pred, rows) -> float:
    """The exact value of a ``rate``, ``ratio`` or ``difference`` quantity on one part for
    predictions ``pred``: booleans, or probabilities of a positive prediction (then the
    expected rate of the randomised rule, each row's event taken with its probability: a
    ratio of expected counts); nan when undefined. Counted by the rate vocabulary
    (:func:`safeclf.guarantees.rates.rate_counts`)."""
    if q.kind == "rate":
        k, n = rate_counts(q, y_pos, pred, rows)
        return float(k / n) if n > 0 else float("nan")
    if q.kind in GROUP_KINDS:
        prot, priv = _pair(q, y_pos, rows)
        if not prot.any() or not priv.any():
            return float("nan")
        ev = event_values(q, y_pos, pred, rows)
        if q.kind == "difference":
            return float(ev[priv].mean() - ev[prot].mean())
        if ev[priv].mean() <= 0:
            return float("nan")
        return float(ev[prot].mean() / ev[priv].mean())
    raise ValueError(f"quantity {q.kind!r} has no training value here")


def rate_evidence(q: Quantity, y_pos, pred_pos, rows, within=None) -> Evidence:
    """Counts of a ``rate``, ``ratio`` or ``difference`` quantity on one part (y_pos,
    pred_pos: booleans): (k, n) of the rate, or (k₁, n₁, k₂, n₂) of the pair's protected
    group (``q.protected``; None: every row not privileged) and privileged group; ``within``
    (a rate only) restricts the rows further (one group of a per-group table)."""
    if q.kind == "rate":
        return Evidence(*rate_counts(q, np.asarray(y_pos, bool), np.asarray(pred_pos, bool),
                                     rows, within))
    if q.kind in GROUP_KINDS:
        prot, priv = _pair(q, y_pos, rows)
        ev = event_values(q, y_pos, np.asarray(pred_pos, bool), rows) > 0.5
        return Evidence(int((ev & prot).sum()), int(prot.sum()), int((ev & priv).sum()),
                        int(priv.sum()))
    raise ValueError(f"quantity {q.kind!r} needs its plugin's promise_evidence")


def evidence_terms(q: Quantity, y_pos, rows, memo: dict | None = None
                   ) -> tuple[tuple[float, np.ndarray], ...]:
    """The four counts of :func:`rate_evidence` (k, n, k₂, n₂; zeros where it gives None) as
    functions of boolean predictions p: each (c₀, c) with count = c₀ + c · p (every row's
    share depends on its own prediction only, so two evaluations, at p = 0 and p = 1, give
    them).

    ``memo``: a dict kept across calls on the same ``y_pos`` and ``rows``. A comparison's two
    sides are then computed once per group, counted rows and event, and the same arrays
    returned to every quantity that shares them (the k(k − 1) ordered pairs of a
    ``worst_pair`` comparison of k groups share k sides)."""
    y_pos = np.asarray(y_pos, bool)
    if q.kind == "rate":
        zero = (0.0, np.zeros(y_pos.shape[0]))
        return (*rate_terms(q, y_pos, rows), zero, zero)
    if q.kind not in GROUP_KINDS:
        raise ValueError(f"quantity {q.kind!r} needs its plugin's promise_evidence")
    if q.predicted is not None:
        raise ValueError("a comparison of groups is of rates on fixed rows, not among the "
                         "predicted rows")
    from safeclf.guarantees import groups as G

    memo = {} if memo is None else memo

    def once(key, make):
        if key not in memo:
            memo[key] = make()
        return memo[key]

    def events():  # the event at p = 0 and at p = 1 (event_values there)
        a, b = event_coefficients(q, y_pos, rows)
        return a > 0.5, a + b > 0.5

    def group(name):  # the rows of one group (pair_masks' g == name, read off the codes)
        names, codes = group_codes(rows, q.groups, memo)
        at = int(np.searchsorted(names, name))
        return codes == at if at < names.size and names[at] == name else \
            np.zeros(codes.shape, bool)

    counted = ("counted", repr(q.subset), q.label)
    event = ("event", q.event, q.baseline)
    base = once(counted, lambda: counted_rows(q, y_pos, rows))
    ev0, ev1 = once(event, events)

    priv_key = ("group", q.groups, G.label(q.privileged))
    prot_key = ("group", q.groups, G.label(q.protected)) if q.protected is not None else \
        ("not", q.groups, G.label(q.privileged))
    priv = once(priv_key, lambda: group(G.label(q.privileged)))
    prot = once(prot_key, lambda: ~priv if q.protected is None else
                group(G.label(q.protected)))
    zeros = once(("zeros",), lambda: np.zeros(y_pos.shape[0]))

    def side_terms(mask):
        side = mask & base
        k0 = ev0 & side
        return ((float(k0.sum()), (ev1 & side).astype(float) - k0), (float(side.sum()), zeros))

    out = ()
    for key, mask in ((prot_key, prot), (priv_key, priv)):
        out += once(("terms", counted, event, key), lambda m=mask: side_terms(m))
    return out


def group_codes(rows, entry: str, memo: dict) -> tuple[np.ndarray, np.ndarray]:
    """:func:`safeclf.guarantees.groups.codes` of the rows entry ``entry``, computed once per
    ``memo`` (:func:`evidence_terms`'s)."""
    from safeclf.guarantees.groups import codes

    key = ("codes", entry)
    if key not in memo:
        memo[key] = codes(rows[entry])
    return memo[key]


def sizes(q: Quantity, y_pos, rows) -> Evidence:
    """The sizes of quantity ``q`` on one part (the n, or n₁ and n₂, of :func:`rate_evidence`),
    the predictions not looked at: what a held-back part will rest a test on. For a rate among
    the predicted rows (precision), the most it can rest on: every row predicted on that
    side."""
    y_pos = np.asarray(y_pos, bool)
    return rate_evidence(q, y_pos, np.full(y_pos.shape, q.predicted == "positive"), rows)


def verdict(sense: str, bound: float, lower: float, upper: float) -> str:
    """holds / violated / inconclusive from an interval and the promised side of ``bound``."""
    if math.isnan(lower) or math.isnan(upper):
        return "inconclusive"
    if sense == "<=":
        return "holds" if upper <= bound else "violated" if lower > bound else "inconclusive"
    return "holds" if lower >= bound else "violated" if upper < bound else "inconclusive"


def interval(kind: str, ev: Evidence, confidence: float) -> tuple[float, float, float, int]:
    """(estimate, lower, upper, n) of counted evidence: Katz for a ratio, Newcombe for a
    difference (``kind``), Clopper–Pearson for a rate; n the rows the estimate rests on."""
    if ev.k2 is not None:
        if kind == "difference":
            est, lo, hi = newcombe_difference(ev.k, ev.n, ev.k2, ev.n2, confidence)
        else:
            est, lo, hi = katz_ratio(ev.k, ev.n, ev.k2, ev.n2, confidence)
        return est, lo, hi, ev.n + ev.n2
    est = ev.k / ev.n if ev.n > 0 else float("nan")
    lo, hi = clopper_pearson(ev.k, ev.n, confidence)
    return est, lo, hi, ev.n


#: The largest factor by which :func:`n_needed` scales the observed counts.
MAX_SCALE = 1e6


def n_needed(promise: Promise, ev: Evidence, confidence: float, rows: int) -> float:
    """Rows of the checked part that would make an inconclusive verdict conclusive at the
    observed estimate.

    Every count of ``ev`` (k and n of a rate; k₁, n₁, k₂, n₂ of a ratio or difference) is
    multiplied by one factor c — the part grown c-fold with the same shares of every group,
    label and event, so the estimate stays where it is — and the same interval as the
    verdict's (:func:`interval` at ``confidence``; non-integer counts are passed as they are,
    the Clopper–Pearson and Katz bounds being smooth in them) is recomputed. The smallest c
    (bisection on a doubling bracket) at which the verdict is ``holds`` or ``violated``
    gives ``ceil(c · rows)``, ``rows`` the size of the part (so ``n_needed`` counts test rows,
    not only those the quantity rests on). ``inf`` when no c up to :data:`MAX_SCALE` does
    (an estimate exactly on the bound never becomes conclusive); ``nan`` for evidence without
    counts (a plugin's precomputed interval)."""
    if ev.estimate is not None or ev.n <= 0 or (ev.k2 is not None and not ev.n2):
        return float("nan")
    kind = promise.quantity.kind

    def conclusive(c: float) -> bool:
        _, lo, hi, _ = interval(kind, ev.scaled(c), confidence)
        return verdict(promise.sense, promise.bound, lo, hi) != "inconclusive"

    c = smallest_scale(conclusive, MAX_SCALE, lambda lo: max(1e-3 * lo, 0.5 / max(rows, 1)))
    if c == 1.0 or math.isinf(c):
        return float(rows) if c == 1.0 else c
    return float(math.ceil(c * rows))


def judge(promise: Promise, ev: Evidence, confidence: float, rows: int | None = None) -> Checked:
    """The estimate, interval and verdict of ``promise`` from its evidence; with ``rows``
    (the size of the part checked), an inconclusive verdict also records ``n_needed``
    (:func:`n_needed`)."""
    if promise.kind == "none":
        return Checked(promise, float("nan"), float("nan"), float("nan"), 0, confidence,
                       "no promise", None)
    if ev.estimate is not None:
        est = ev.estimate
        lo, hi = ev.interval if ev.interval is not None else (float("nan"), float("nan"))
        n = ev.n
    else:
        est, lo, hi, n = interval(promise.quantity.kind, ev, confidence)
    if not np.isfinite(est) and n == 0:
        return Checked(promise, est, lo, hi, n, confidence, "not checked", None,
                       ev.note or "no held-out rows for this quantity")
    v = verdict(promise.sense, promise.bound, lo, hi)
    beyond = bool(est > promise.bound if promise.sense == "<=" else est < promise.bound) \
        if np.isfinite(est) else None
    extra = {"k": ev.k, "n_protected": ev.n, "k_privileged": ev.k2, "n_privileged": ev.n2} \
        if ev.k2 is not None else {"k": ev.k}
    if v == "inconclusive" and rows is not None:
        extra["n_needed"] = n_needed(promise, ev, confidence, rows)
    return Checked(promise, float(est), float(lo), float(hi), int(n), confidence, v, beyond,
                   ev.note, extra)


def training_check(promise: Promise, estimator, train) -> dict[str, Any]:
    """A ``training`` promise on the rows it is about: ``train_estimate`` (the exact value of
    its rule on the training part: ``predict``, or the expected rate under ``predict_proba``
    for a randomised rule) and ``train_verdict``, ``holds`` when it is on the promised side
    of the bound within the promise's ``tolerance``, else ``violated`` (``not checked``
    when the value is undefined). Empty for other kinds."""
    if promise.kind != "training" or train is None or \
            promise.quantity.kind not in ("rate", *GROUP_KINDS):
        return {}
    classes = np.asarray(estimator.classes_)
    if promise.rule == "randomized":
        pred = np.asarray(estimator.predict_proba(train.X))[:, -1]
    else:
        pred = np.asarray(estimator.predict(train.X)) == classes[-1]
    try:
        value = rate_value(promise.quantity, np.asarray(train.y) == classes[-1], pred,
                           train.rows)
    except (KeyError, ValueError):
        value = float("nan")
    if not np.isfinite(value):
        return {"train_estimate": value, "train_verdict": "not checked"}
    tol = promise.tolerance
    met = value <= promise.bound + tol if promise.sense == "<=" else value >= promise.bound - tol
    return {"train_estimate": value, "train_verdict": "holds" if met else "violated"}


def check(plugin, promises, estimator, task, confidence: float, part: str = "test") -> list[dict]:
    """Check each promise on ``task``'s ``part``; one record per promise (JSON-friendly).
    A ``training`` promise also gets its verdict on the training part
    (:func:`training_check`)."""
    out = []
    train = task.parts().get("train")
    data = task.parts().get(part)
    pred_pos = y_pos = None
    for p in promises:
        if p.kind == "none":
            out.append(judge(p, Evidence(), confidence).record())
            continue
        if data is None:
            out.append(Checked(p, math.nan, math.nan, math.nan, 0, confidence, "not checked",
                               None, f"no {part} part").record())
            continue
        try:
            if p.quantity.kind in ("rate", *GROUP_KINDS):
                if pred_pos is None:
                    classes = np.asarray(estimator.classes_)
                    pred_pos = np.asarray(estimator.predict(data.X)) == classes[-1]
                    y_pos = np.asarray(data.y) == classes[-1]
                ev = rate_evidence(p.quantity, y_pos, pred_pos, data.rows)
            else:
                ev = plugin.promise_evidence(estimator, task, p, part)
        except (KeyError, ValueError) as exc:
            out.append(Checked(p, math.nan, math.nan, math.nan, 0, confidence, "not checked",
                               None, f"cannot be measured on {part}: {exc}").record()
                       | training_check(p, estimator, train))
            continue
        out.append(judge(p, ev, confidence, len(data)).record()
                   | training_check(p, estimator, train))
    return out


def promise_metrics(records: list[dict]) -> dict[str, float]:
    """Per promise, columns for the metrics table (so ``expect`` and ``compare`` reach them):
    ``promise_<name>_estimate``, ``_lower``, ``_upper``, ``_bound``, and 0/1 flags ``_holds``,
    ``_violated`` and ``_beyond`` (the point estimate on the wrong side of the bound; its mean
    over seeds is the Seldonian failure rate, a job without a model counting as 0); for a
    training promise ``_train_estimate`` and the 0/1 ``_train_holds`` of its training
    check."""
    out: dict[str, float] = {}
    for r in records:
        if r["kind"] == "none":
            continue
        key = f"promise_{r['promise']}"
        for field_ in ("estimate", "lower", "upper", "bound"):
            out[f"{key}_{field_}"] = float(r[field_])
        out[f"{key}_holds"] = float(r["verdict"] == "holds")
        out[f"{key}_violated"] = float(r["verdict"] == "violated")
        out[f"{key}_beyond"] = math.nan if r["beyond"] is None else float(r["beyond"])
        if r.get("train_verdict") in ("holds", "violated"):
            out[f"{key}_train_estimate"] = float(r["train_estimate"])
            out[f"{key}_train_holds"] = float(r["train_verdict"] == "holds")
    return out

"""Why a certification found no model, in the promise's own terms.

When the held-back rows do not certify a promise, a user needs three things: which promise
failed, what the held-back rows *do* certify (the confidence limit the test compared with the
promised bound), and what would change the outcome. :func:`shortfall` computes them from the
promise's held-back counts:

* ``certified``: the limit of the test itself. A rate's one-sided bound at level α; for a
  comparison of two groups, the test :func:`safeclf.guarantees.ltt.pair_test` uses: the exact test
  (:mod:`safeclf.guarantees.pairtest`) inverted, the κ (or ε) at which its p-value crosses α, found by
  bisection on the side of the promised bound the test decides (so the limit is on the
  promised side exactly when the promise is certified, even where the p-value is not
  monotone in κ); the union test's L_A(α/2)/U_B(α/2) for a ratio ≥ κ (≤ κ: U_A/L_B), a
  difference s_B − s_A ≤ ε by U_B(α/2) − L_A(α/2) (≥ ε: L_B − U_A). Either way the promise
  is certified at α if and only if ``certified`` is on the promised side of the bound;
* ``n_needed``: the held-back rows (per group for a comparison) at which the *observed* shares
  would certify, every count scaled by one factor c (the smallest, by bisection), like
  :func:`safeclf.guarantees.promises.n_needed` does for a verdict; ``inf`` when the observed estimate is
  itself on the wrong side of the bound (more rows cannot help: only a looser bound or a
  different model);
* ``next_step``: the advice that follows from the two.

:func:`sentence` writes it as one line for the console, ``promises.csv`` and ``report.html``.
"""

from __future__ import annotations

import math

import numpy as np

from safeclf.guarantees import ltt
from safeclf.guarantees.bounds import Bound
from safeclf.guarantees.promises import Evidence, Promise, smallest_scale

#: The largest factor by which the held-back counts are scaled.
MAX_SCALE = 1e4


def certified_limit(p: Promise, ev: Evidence, alpha: float, bound: Bound,
                    test: str | None = None) -> float:
    """The confidence limit on ``p``'s quantity that counts ``ev`` certify at level ``alpha``
    (see the module docstring); NaN without rows. ``test``: a comparison's test, ``exact`` or
    ``union`` (default :func:`safeclf.guarantees.ltt.pair_test`'s for ``bound``); certified
    training's safety test is the union of two one-sided bounds whatever the bound."""
    q = p.quantity
    if q.kind == "rate":
        if not ev.n:
            return math.nan
        f = bound.upper if p.sense == "<=" else bound.lower
        return float(f(ev.k, ev.n, alpha))
    if not ev.n or not ev.n2:
        return math.nan
    if (test or ltt.pair_test(bound)) == "exact":
        return _inverted_limit(p, ev, alpha, bound)
    a = alpha / 2
    lo_a, up_a = float(bound.lower(ev.k, ev.n, a)), float(bound.upper(ev.k, ev.n, a))
    lo_b, up_b = float(bound.lower(ev.k2, ev.n2, a)), float(bound.upper(ev.k2, ev.n2, a))
    if q.kind == "ratio":
        if p.sense == ">=":
            return lo_a / up_b if up_b > 0 else 0.0
        return up_a / lo_b if lo_b > 0 else math.inf
    return up_b - lo_a if p.sense == "<=" else lo_b - up_a


def _pair_certifies(p: Promise, ev: Evidence, b: float, alpha: float, bound: Bound) -> bool:
    """Whether the comparison of ``p`` with its bound set to ``b`` is certified at ``alpha``
    by the counts ``ev`` (rounded to whole rows)."""
    pv = ltt.pair_p_values(p.quantity.kind, round(ev.k), round(ev.n), round(ev.k2),
                           round(ev.n2), p.sense, b, bound, alpha=alpha)
    return bool(pv <= alpha)


def _inverted_limit(p: Promise, ev: Evidence, alpha: float, bound: Bound,
                    steps: int = 30) -> float:
    """The exact test inverted: the bound b at which it stops certifying ``p``'s comparison,
    by bisection between ``p.bound`` and the far end of the side the test decides (the
    estimate when it certifies, the weakest possible bound when not)."""
    ratio, up = p.quantity.kind == "ratio", p.sense == "<="
    est = estimate(p, ev)
    weakest = (1e6 if up else 1e-6) if ratio else (1.0 if up else -1.0)
    if _pair_certifies(p, ev, p.bound, alpha, bound):
        ok, bad = p.bound, est if np.isfinite(est) else (0.0 if up else 1e6)
        if _pair_certifies(p, ev, bad, alpha, bound):
            return float(bad)
    else:
        ok, bad = weakest, p.bound
        if not _pair_certifies(p, ev, ok, alpha, bound):
            return float(ok)
    for _ in range(steps):
        mid = math.sqrt(ok * bad) if ratio and ok > 0 and bad > 0 else (ok + bad) / 2
        ok, bad = (mid, bad) if _pair_certifies(p, ev, mid, alpha, bound) else (ok, mid)
    return float(ok)


def _kept(p: Promise, value: float) -> bool:
    if not np.isfinite(value):
        return False
    return value <= p.bound if p.sense == "<=" else value >= p.bound


def estimate(p: Promise, ev: Evidence) -> float:
    """The observed value of ``p``'s quantity on the counts (NaN when undefined)."""
    if p.quantity.kind == "rate":
        return ev.k / ev.n if ev.n else math.nan
    if not ev.n or not ev.n2:
        return math.nan
    a, b = ev.k / ev.n, ev.k2 / ev.n2
    if p.quantity.kind == "ratio":
        return a / b if b > 0 else math.nan
    return b - a


def scale_needed(p: Promise, ev: Evidence, alpha: float, bound: Bound,
                 test: str | None = None) -> float:
    """The smallest factor c ≥ 1 such that the counts of ``ev`` multiplied by c certify ``p``
    at ``alpha`` (the observed shares kept) by ``test`` (:func:`certified_limit`); ``inf``
    when none up to :data:`MAX_SCALE`."""
    def ok(c: float) -> bool:
        scaled = ev.scaled(c)
        if ev.n2 is not None and (test or ltt.pair_test(bound)) == "exact":
            return bool(scaled.n and scaled.n2) and _pair_certifies(p, scaled, p.bound, alpha,
                                                                    bound)
        return _kept(p, certified_limit(p, scaled, alpha, bound, test))

    if not _kept(p, estimate(p, ev)):
        return math.inf
    return smallest_scale(ok, MAX_SCALE, lambda lo: 1e-3 * lo)


def shortfall(p: Promise, ev: Evidence, alpha: float, bound: Bound, n_rows: int,
              n_train: int | None = None, fraction: float | None = None,
              groups: tuple[str, str] | None = None, test: str | None = None) -> dict:
    """Why ``p`` is not certified by its held-back counts ``ev`` at level ``alpha``.

    Parameters
    ----------
    p : Promise
        The promise that failed.
    ev : Evidence
        Its counts on the held-back rows under the rule tested.
    alpha : float
        The level the promise was tested at (δ for Learn-then-Test; δ/m per one-sided bound
        in certified training, passed as 2δ/m for a comparison).
    bound : Bound
        The one-sided bound of the test.
    n_rows : int
        Held-back rows in all.
    n_train, fraction : int and float, optional
        Training rows and held-back share, to say which ``fraction`` would give the rows.
    groups : (protected, privileged), optional
        The names of a comparison's two groups.
    test : {'exact', 'union'}, optional
        A comparison's test (:func:`certified_limit`): the one that was run.

    Returns
    -------
    dict
        ``promise``, ``statement``, ``sense``, ``target``, ``estimate``, ``certified``,
        ``n_safety``, ``n_needed`` (held-back rows in all), ``n_needed_per_group`` (a
        comparison's two groups), ``next_step``.
    """
    c = scale_needed(p, ev, alpha, bound, test)
    est = estimate(p, ev)
    out = {"promise": p.name, "statement": p.statement, "sense": p.sense,
           "target": float(p.bound), "estimate": est,
           "certified": certified_limit(p, ev, alpha, bound, test), "n_safety": int(n_rows),
           "n_needed": math.ceil(c * n_rows) if np.isfinite(c) else math.inf}
    if ev.n2 is not None:
        prot, priv = groups or ("protected", "privileged")
        out["n_per_group"] = {str(prot): int(ev.n), str(priv): int(ev.n2)}
        out["n_needed_per_group"] = {
            str(prot): math.ceil(c * ev.n) if np.isfinite(c) else math.inf,
            str(priv): math.ceil(c * ev.n2) if np.isfinite(c) else math.inf}
    out["next_step"] = _next_step(p, c, est, n_train, fraction)
    return out


def _next_step(p: Promise, c: float, est: float, n_train, fraction) -> str:
    what = "κ" if p.quantity.kind == "ratio" else "bound"
    if not np.isfinite(est):
        if p.quantity.kind == "ratio":
            return ("another model: it makes no favourable prediction in the privileged group "
                    "on the held-back rows, so the ratio is undefined")
        return "more rows: the held-back part has no row for one side of this promise"
    if not np.isfinite(c):
        return (f"a looser {what}: the held-back estimate {est:.3g} is itself beyond "
                f"{p.bound:g} (more rows would not help this model)")
    if n_train and fraction:
        f = min(1.0, c * fraction)
        if f <= 0.7:
            return f"more held-back rows: fraction {math.ceil(f * 20) / 20:g}, or more rows"
        return f"more rows: about {math.ceil(c * n_train):,} training rows at fraction {fraction:g}"
    return f"more rows: about {c:.2g}× the held-back rows"


def sentence(s: dict, delta: float) -> str:
    """One line: the promise that failed, certified limit against the target, rows needed and
    the next step."""
    op = "≥" if s["sense"] == ">=" else "≤"
    limit = "lower" if s["sense"] == ">=" else "upper"
    per = s.get("n_per_group")
    on = (f"{s['n_safety']} held-back rows (" + ", ".join(f"{g} {n}" for g, n in per.items())
          + ")") if per else f"{s['n_safety']} held-back rows"
    need = s.get("n_needed_per_group")
    if np.isfinite(s["n_needed"]):
        needed = ("n_needed: " + (", ".join(f"{g} {n:,}" for g, n in need.items())
                                  + " held-back rows per group" if need
                                  else f"{s['n_needed']:,} held-back rows")
                  + " would certify the observed effect")
    else:
        needed = "n_needed: none, more rows cannot certify an estimate beyond the bound"
    return (f"{s['promise']} ({s['statement']}) not certified at δ = {delta:g}: on {on} "
            f"the estimate is {s['estimate']:.3g} and its certified {limit} limit "
            f"{s['certified']:.3g}, not {op} {s['target']:g}; {needed}; next: {s['next_step']}")


def pair_names(q, groups) -> tuple[str, str]:
    """(protected, privileged) names of a comparison's pair for a reader: a pair's protected
    group, else the one other group when there are two, else ``not <privileged>``."""
    if q.protected is not None:
        return str(q.protected), str(q.privileged)
    others = sorted(set(np.asarray(groups).astype(str)) - {str(q.privileged)})
    return (others[0] if len(others) == 1 else f"not {q.privileged}"), str(q.privileged)

"""Tightened bounds that contradict each other, and how certified training resolves them.

Certified training asks its candidate for bounds tighter than the promises
(:func:`safeclf.guarantees.certify.training.tightened_rate`, ``tightened_ratio``: twice the
predicted half-width of the safety test), so that the test on the held-back rows has room to
pass. Bounds that constrain the same quantity from two sides can then contradict each other
although the promises do not: a band's lower side tightened above its upper side, or ratio
comparisons that go round a set of groups — r(A) ≥ κ′₁·r(B) and r(B) ≥ κ′₂·r(A) with
κ′₁·κ′₂ > 1, which only rates of 0 meet (``compare: worst_pair`` states every ordered pair,
so κ = 0.8 asks 0.8 ≤ r(A)/r(B) ≤ 1.25, and each side tightened by ~12 % on a few thousand
held-back rows leaves nothing). A candidate at the middle of such a band may still pass the
test easily — the tightening is a margin for candidate selection, not part of the promise.

So the bounds of one family (one quantity but for its pair of groups or its side) are written
as difference constraints x_to − x_from ≥ w — log rates for ratios (r(A) ≥ κ·r(B) is
log r(A) − log r(B) ≥ log κ), rates for differences, a rate and 0 for a rate's own band — and
they hold together exactly when no cycle of the graph has a positive sum of w. Where the
tightened family has one, its bounds on cycles are capped at the centre of the promises: the
point x* that leaves every such bound of the promises the most room (equal rates for a
worst-pair comparison, the middle of a band; the potentials of the maximum cycle mean), and
no tightened bound may ask for more than ``1 − KEEP_SLACK`` of the room a promise leaves at
x*, so x* meets them all and the candidate aims near it: there a safety test on either side
is as likely to pass as the other. Where the promises themselves have a positive cycle, no
model with those rates meets them, and that is the reason given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: share of each cycle's slack under the promises kept when a tightening is given back
KEEP_SLACK = 0.1
#: a cycle sum above this counts as positive (rounding in the bounds is far below it)
CYCLE_TOL = 1e-9


@dataclass(frozen=True)
class _Edge:
    """x_to − x_from ≥ w: ``w0`` under the promise, ``w1`` tightened; ``i`` the promise."""

    frm: str
    to: str
    w0: float
    w1: float
    i: int


def _edge(p, b0: float, b1: float, i: int):
    """The family key and the edge of promise ``p`` with bounds b0 (given) and b1 (tightened),
    None for a promise no other can contradict this way."""
    q = p.quantity
    lower = p.sense == ">="
    if q.kind in ("ratio", "difference") and q.privileged is not None:
        # one family: the quantity but for its pair; "not A" is every row not privileged
        prot = str(q.protected) if q.protected is not None else f"not {q.privileged}"
        priv = str(q.privileged)
        family = repr(replace(q, privileged=None, protected=None))
        if q.kind == "difference":  # r(priv) − r(prot)
            return ("linear", family), (_Edge(prot, priv, b0, b1, i) if lower else
                                        _Edge(priv, prot, -b0, -b1, i))
        if min(b0, b1) <= 0 or not math.isfinite(max(b0, b1)):
            return None
        return ("log", family), (  # r(prot) ≥ b·r(priv), or ≤
            _Edge(priv, prot, math.log(b0), math.log(b1), i) if lower else
            _Edge(prot, priv, -math.log(b0), -math.log(b1), i))
    if q.kind == "rate":
        key = ("linear", repr(q))
        return key, (_Edge("0", "rate", b0, b1, i) if lower else
                     _Edge("rate", "0", -b0, -b1, i))
    return None


def _families(promises, given, tightened) -> dict:
    out: dict = {}
    for i, (p, b0, b1) in enumerate(zip(promises, given, tightened, strict=True)):
        found = _edge(p, float(b0), float(b1), i)
        if found is not None:
            out.setdefault(found[0], []).append(found[1])
    return out


def _longest(edges, weight):
    """(nodes, index, best, first): the largest ``weight`` sums of paths between the nodes
    (-inf where none) and the first edge of each (Floyd–Warshall; a family's groups are few)."""
    nodes = sorted({e.frm for e in edges} | {e.to for e in edges})
    k = len(nodes)
    at = {g: j for j, g in enumerate(nodes)}
    best = [[-math.inf] * k for _ in range(k)]
    first = [[None] * k for _ in range(k)]
    for e in edges:
        a, b = at[e.frm], at[e.to]
        if weight(e) > best[a][b]:
            best[a][b], first[a][b] = weight(e), e
    for m in range(k):
        for a in range(k):
            for b in range(k):
                s = best[a][m] + best[m][b]
                if s > best[a][b] + 1e-15:
                    best[a][b], first[a][b] = s, first[a][m]
    return nodes, at, best, first


def positive_cycle(edges, weight) -> list | None:
    """The edges of a cycle whose ``weight(edge)`` sum exceeds ``CYCLE_TOL``, or None."""
    nodes, at, best, first = _longest(edges, weight)
    for a in range(len(nodes)):
        if best[a][a] > CYCLE_TOL:
            cycle, node = [], a
            while not cycle or (node != a and len(cycle) <= len(nodes)):
                e = first[node][a]
                cycle.append(e)
                node = at[e.to]
            return cycle
    return None


def _on_cycles(edges):
    """The edges that lie on some cycle (both ends in one strongly connected component)."""
    _, at, best, _ = _longest(edges, lambda e: 0.0)
    return [e for e in edges if best[at[e.to]][at[e.frm]] > -math.inf]


def centre(edges) -> dict[str, float]:
    """Potentials x* that maximise the smallest room x_to − x_from − w₀ over ``edges`` (all on
    cycles, no cycle of positive w₀ sum): the largest cycle mean t* of w₀ by bisection, then
    the longest paths in w₀ − t*, which leave every edge at least −t* of room."""
    lo, hi = min(e.w0 for e in edges) - 1.0, 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if positive_cycle(edges, lambda e, t=mid: e.w0 - t) is None \
            else (mid, hi)
    nodes, at, best, _ = _longest(edges, lambda e: e.w0 - hi)
    x = {}
    for comp_root in nodes:  # each component from its first node
        if comp_root in x:
            continue
        r = at[comp_root]
        x[comp_root] = 0.0
        for v in nodes:
            if v not in x and best[r][at[v]] > -math.inf and best[at[v]][r] > -math.inf:
                x[v] = best[r][at[v]]
    return x


def _said(cycle, promises, w, log: bool) -> str:
    """A cycle's constraints in words, with their product (ratios) or sum."""
    if log:
        parts = [f"r({e.to}) ≥ {math.exp(w(e)):.3g}·r({e.frm})" for e in cycle]
        total = f"product {math.exp(sum(w(e) for e in cycle)):.3g} > 1"
    else:
        parts = [f"{e.to} − {e.frm} ≥ {w(e):.3g}".replace("rate − 0", "the rate")
                 .replace("0 − rate", "−the rate") for e in cycle]
        total = f"sum {sum(w(e) for e in cycle):.3g} > 0"
    names = ", ".join(dict.fromkeys(promises[e.i].name for e in cycle))
    return f"{names}: {' and '.join(parts)} ({total})"


@dataclass
class Reconciled:
    """The internal bounds a candidate can meet, the share of its tightening each capped
    bound gave back (promise name → share, 1 = back at the promise's bound), and a reason when
    the promises themselves contradict each other (then ``bounds`` is unused)."""

    bounds: list[float]
    given_back: dict[str, float]
    reason: str = ""


def reconcile(promises, given, tightened) -> Reconciled:
    """See the module docstring: ``given`` the promises' bounds, ``tightened`` the candidate's;
    returns bounds that hold together, each between its given and tightened value (a family
    whose tightened bounds hold together is left as it is)."""
    bounds = [float(b) for b in tightened]
    given_back: dict[str, float] = {}
    for (space, _), edges in _families(promises, given, tightened).items():
        log = space == "log"
        # a tightened bound is stricter (w1 ≥ w0): only a family whose tightened bounds
        # contradict each other can have promises that do
        if positive_cycle(edges, lambda e: e.w1) is None:
            continue
        own = positive_cycle(edges, lambda e: e.w0)
        if own is not None:
            return Reconciled(bounds, given_back, _said(own, promises, lambda e: e.w0, log)
                              + ": the promises contradict each other")
        cyclic = _on_cycles(edges)
        x = centre(cyclic)
        for e in cyclic:
            room = x[e.to] - x[e.frm] - e.w0
            w = min(e.w1, e.w0 + (1.0 - KEEP_SLACK) * max(room, 0.0))
            if w < e.w1:
                bounds[e.i] = _bound(promises[e.i], w, log)
                given_back[promises[e.i].name] = (e.w1 - w) / (e.w1 - e.w0)
    return Reconciled(bounds, given_back)


def _bound(p, w: float, log: bool) -> float:
    """A promise's bound from its edge's weight (the inverse of :func:`_edge`)."""
    lower = p.sense == ">="
    if log:
        return math.exp(w) if lower else math.exp(-w)
    return w if lower else -w

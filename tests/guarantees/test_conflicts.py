"""Tightened bounds that contradict each other (safeclf/guarantees/certify/conflicts.py): ratio
comparisons that go round a cycle of groups with a product above 1 are met only by rates of 0,
and a band whose tightened sides cross by nothing. Certified training caps such bounds at the
centre of the promises instead of fitting a candidate the safety test can only reject."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from group_data import three_groups

from safeclf.data.task import Part, Task
from safeclf.guarantees import promises as P
from safeclf.guarantees.certify import certified_fit
from safeclf.guarantees.certify.conflicts import reconcile


def _pair(prot, priv, bound, sense=">="):
    q = P.Quantity("ratio", "predicted_positive", groups="groups", privileged=priv,
                   protected=prot)
    return P.Promise(f"ratio_{prot}_vs_{priv}", "ratio", q, sense, bound, "training", "test")


def _rate(bound, sense):
    return P.Promise(f"rate_{sense}", "rate", P.Quantity("rate"), sense, bound, "training",
                     "test")


def _lower_form(promises, bounds):
    """Each ratio bound as r(prot) ≥ k·r(priv) (an upper bound r(A) ≤ u·r(B) is
    r(B) ≥ r(A)/u)."""
    out = []
    for p, b in zip(promises, bounds):
        q = p.quantity
        out.append((q.protected, q.privileged, b) if p.sense == ">=" else
                   (q.privileged, q.protected, 1.0 / b))
    return out


def _brute_force_cycle(lower_form, groups):
    """Whether some simple cycle of groups has a product of bounds above 1."""
    best = {}
    for prot, priv, k in lower_form:
        best[(priv, prot)] = max(best.get((priv, prot), 0.0), k)
    for size in range(2, len(groups) + 1):
        for cyc in itertools.permutations(groups, size):
            steps = list(zip(cyc, cyc[1:] + cyc[:1]))
            if all(s in best for s in steps) and math.prod(best[s] for s in steps) > 1 + 1e-9:
                return True
    return False


def _meets(lower_form, rates, slack=0.0):
    return all(rates[prot] >= k * rates[priv] * (1 + slack) - 1e-12
               for prot, priv, k in lower_form)


def _positive_rates(lower_form, groups):
    """Positive rates meeting every r(prot) ≥ k·r(priv), or None (longest paths in log k from
    a source joined to every group; a positive cycle keeps growing them)."""
    pot = {g: 0.0 for g in groups}
    for _ in range(len(groups) + 2):
        for prot, priv, k in lower_form:
            pot[prot] = max(pot[prot], pot[priv] + math.log(k))
    top = max(pot.values())
    rates = {g: 0.5 * math.exp(v - top) for g, v in pot.items()}
    return rates if _meets(lower_form, rates) else None


def _random_family(rng, lo=-0.25, hi=0.05):
    groups = [f"g{i}" for i in range(int(rng.integers(2, 5)))]
    pairs = [p for p in itertools.permutations(groups, 2) if rng.random() < 0.7] or [
        tuple(groups[:2])]
    promises, bounds = [], []
    for prot, priv in pairs:
        k = float(np.exp(rng.uniform(lo, hi)))
        if rng.random() < 0.3:  # the same comparison stated from the other side
            promises.append(_pair(priv, prot, 1.0 / k, "<="))
            bounds.append(1.0 / k)
        else:
            promises.append(_pair(prot, priv, k))
            bounds.append(k)
    return groups, promises, bounds


@pytest.mark.parametrize("seed", range(40))
def test_promises_that_contradict_each_other_are_found_exactly(seed):
    """Bounds on random ordered pairs of 2–4 groups: the reason is given exactly when some
    cycle's product exceeds 1 (a brute force over every cycle), and otherwise positive rates
    meet them all."""
    groups, promises, bounds = _random_family(np.random.default_rng(seed))
    out = reconcile(promises, bounds, bounds)
    form = _lower_form(promises, bounds)
    assert bool(out.reason) == _brute_force_cycle(form, groups)
    if out.reason:
        assert out.reason.endswith("the promises contradict each other")
        assert "product" in out.reason and "> 1" in out.reason
    else:
        assert _positive_rates(form, groups) is not None
        assert out.bounds == bounds and not out.given_back  # nothing to reconcile


@pytest.mark.parametrize("seed", range(40))
def test_reconciled_bounds_hold_together_between_the_promise_and_its_tightening(seed):
    """Promises that hold together (every κ ≤ 1 in both directions), each tightened by a
    random margin: the reconciled bounds admit positive rates, each lies between its promise
    and its tightening (no looser than the promise), a family whose tightened bounds already
    held together is left as it is, and equal rates — the centre of bounds κ ≤ 1 — meet every
    reconciled bound with room to spare."""
    rng = np.random.default_rng(100 + seed)
    groups, promises, given = _random_family(rng, lo=-0.4, hi=-0.01)
    tightened = []
    for p, b in zip(promises, given):
        m = float(np.exp(rng.uniform(0.0, 0.5)))  # stricter by up to 65 %
        tightened.append(b * m if p.sense == ">=" else b / m)
    out = reconcile(promises, given, tightened)
    assert not out.reason
    form = _lower_form(promises, out.bounds)
    assert _positive_rates(form, groups) is not None
    for b0, b1, b in zip(given, tightened, out.bounds):
        lo, hi = sorted((b0, b1))
        assert lo * (1 - 1e-12) <= b <= hi * (1 + 1e-12)
    if _positive_rates(_lower_form(promises, tightened), groups) is not None:
        assert out.bounds == tightened and not out.given_back
    else:
        assert out.given_back and all(0 < v <= 1 for v in out.given_back.values())


@pytest.mark.parametrize("seed", range(30))
def test_the_centre_leaves_every_bound_the_most_room(seed):
    """The potentials the caps are taken at maximise the smallest room of the promises' bounds
    on cycles: their smallest room equals a linear programme's optimum."""
    from scipy.optimize import linprog

    from safeclf.guarantees.certify.conflicts import _families, _on_cycles, centre

    groups, promises, given = _random_family(np.random.default_rng(200 + seed), -0.4, -0.01)
    for edges in _families(promises, given, given).values():
        cyclic = _on_cycles(edges)
        if not cyclic:
            continue
        x = centre(cyclic)
        nodes = sorted(x)
        at = {v: i for i, v in enumerate(nodes)}
        # maximise t: x_from − x_to + t ≤ −w₀ on every edge, x of the first node 0
        A = np.zeros((len(cyclic), len(nodes) + 1))
        for r, e in enumerate(cyclic):
            A[r, at[e.frm]] += 1.0
            A[r, at[e.to]] -= 1.0
            A[r, -1] = 1.0
        res = linprog(np.r_[np.zeros(len(nodes)), -1.0], A_ub=A,
                      b_ub=[-e.w0 for e in cyclic],
                      bounds=[(0, 0)] + [(None, None)] * (len(nodes) - 1) + [(None, None)])
        room = min(x[e.to] - x[e.frm] - e.w0 for e in cyclic)
        assert room == pytest.approx(-res.fun, abs=1e-7)


def test_a_rate_band_crossed_by_its_tightening_aims_at_its_middle():
    """A band 0.2 ≤ rate ≤ 0.3 tightened to 0.33 ≤ rate ≤ 0.17 (crossed): the candidate is
    asked for 0.245 ≤ rate ≤ 0.255, a tenth of the band around its middle."""
    promises = [_rate(0.2, ">="), _rate(0.3, "<=")]
    out = reconcile(promises, [0.2, 0.3], [0.33, 0.17])
    assert out.bounds == pytest.approx([0.245, 0.255])
    assert set(out.given_back) == {"rate_>=", "rate_<="}


def test_the_reason_names_the_promises_and_their_product():
    own = reconcile([_pair("a", "b", 1.2), _pair("b", "a", 0.9)], [1.2, 0.9], [1.2, 0.9])
    assert set(own.reason.split(": ")[0].split(", ")) == {"ratio_a_vs_b", "ratio_b_vs_a"}
    assert "product 1.08 > 1" in own.reason
    # a ratio against every other row (no named protected group) is a group "not b"
    pooled = P.Quantity("ratio", "predicted_positive", groups="groups", privileged="b")
    p = P.Promise("pooled", "ratio", pooled, ">=", 1.1, "training", "test")
    q = P.Quantity("ratio", "predicted_positive", groups="groups", privileged="not b",
                   protected="b")
    back = P.Promise("back", "ratio", q, ">=", 1.1, "training", "test")
    assert "product 1.21" in reconcile([p, back], [1.1, 1.1], [1.1, 1.1]).reason


def _task(n, seed):
    X, y, g = three_groups(n + 6000, seed)
    return Task("three", Part(X[:n], y[:n], {"groups": g[:n]}),
                Part(X[n:], y[n:], {"groups": g[n:]}), info={"privileged_group": "a"})


def test_certified_worst_pair_fits_a_candidate_between_the_pairs():
    """Every ordered pair of three groups at κ = 0.8 on 6,000 held-back rows: tightened by
    twice the test's predicted half-width on each side, the pairs' bounds multiply above 1, so
    only rates of 0 met them and the safety test failed on an undefined ratio. Capped at the
    centre, a candidate with every group's rate defined is fitted and tested: it certifies,
    or its no-solution reason is a finite estimate short of the bound. Where it certifies,
    on 6,000 rows it never saw the smallest group rate is at least 0.8 of the largest. The
    dataset names a privileged group, which the candidate's per-pair constraints do not
    contradict."""
    from safeclf.methods.ramp import plugin

    params = {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8,
                               "compare": "worst_pair"}], "lam": 1e-3}
    task = _task(20000, 0)
    out = certified_fit(plugin, params, task, {"delta": 0.05, "fraction": 0.3}, seed=0)
    given_back = out.record["tightening_given_back"]
    assert len(given_back) >= 2 and all(0 < v <= 1 for v in given_back.values())
    internal = out.record["internal_bounds"]
    assert all(0.8 <= b < 1.0 for b in internal.values())  # between κ and equal rates
    tests = out.record["safety_tests"]
    assert len(tests) == 6 and all(t["bound"] > 0 for t in tests.values())
    if not out.passed:
        assert out.record["reason"].startswith("no model: the safety test failed")
        assert np.isfinite(out.record["failed"]["estimate"])
        return
    pred = out.estimator.predict(task.test.X) == 1
    g = np.asarray(task.test.rows["groups"])
    rates = [pred[g == v].mean() for v in "abc"]
    assert min(rates) >= 0.8 * max(rates)

"""More than two groups: comparisons per pair (each against the privileged group, the worst
pair, pooled), in ramp's constraints, in promises and in the held-out checks; n_needed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from group_data import three_groups

from safeclf.errors import DataError
from safeclf.guarantees import groups as G
from safeclf.guarantees.promises import Evidence, Promise, Quantity, interval, judge, rate_evidence, verdict
from safeclf.guarantees.rate_items import expand_constraints, parse_constraints
from safeclf.guarantees.rates import FitData
from safeclf.methods.ramp.estimator import RampClassifier
from safeclf.methods.ramp.promises import constraint_promises, tightened_params

KAPPA = 0.8


def _group_rates(pred, g):
    return {v: float(pred[g == v].mean()) for v in G.values(g)}


@pytest.fixture(scope="module")
def data():
    return three_groups(1500, 0)


def _fit(X, y, g, **constraint):
    item = {"rate": "fairness_ratio", "kappa": KAPPA, "privileged": "a", **constraint}
    return RampClassifier(constraints=[item], lam=1e-3, random_state=0).fit(X, y, groups=g)


def test_pooling_hides_a_group_that_the_default_catches(data):
    """The case of the issue: with every non-privileged row pooled, the constraint holds
    while the large group b's own ratio is far below κ; the default (each group against the
    privileged one) constrains b and c separately."""
    X, y, g = data
    pooled = _fit(X, y, g, compare="pooled")
    pred = pooled.predict(X) == 1
    rates = _group_rates(pred, g)
    assert pred[g != "a"].mean() / rates["a"] >= KAPPA - 0.01  # the pooled ratio meets κ
    assert rates["b"] / rates["a"] < KAPPA - 0.1  # ... while b's own ratio does not
    default = _fit(X, y, g)
    assert [r["name"] for r in default.constraint_values_] == ["fairness_ratio_b",
                                                                "fairness_ratio_c"]
    pred = default.predict(X) == 1
    rates = _group_rates(pred, g)
    tol = max(r["tolerance"] for r in default.constraint_values_)
    for v in ("b", "c"):
        assert rates[v] / rates["a"] >= KAPPA - tol
    # the promises name their pairs and are checked pair by pair
    promises = constraint_promises(default)
    assert [p.quantity.protected for p in promises] == ["b", "c"]
    assert "s_p(b) ≥ 0.8·s_p(a)" in promises[0].statement
    assert promises[0].statement != promises[1].statement
    ev = rate_evidence(promises[0].quantity, y == 1, pred, {"groups": g})
    assert (ev.k, ev.n) == (int(pred[g == "b"].sum()), int((g == "b").sum()))
    assert (ev.k2, ev.n2) == (int(pred[g == "a"].sum()), int((g == "a").sum()))


def test_worst_pair_bounds_the_smallest_rate_by_the_largest(data):
    X, y, g = data
    est = _fit(X, y, g, compare="worst_pair", privileged=None)
    assert len(est.constraint_values_) == 6  # every ordered pair of three groups
    rates = _group_rates(est.predict(X) == 1, g)
    tol = max(r["tolerance"] for r in est.constraint_values_)
    assert min(rates.values()) / max(rates.values()) >= KAPPA - tol
    # the unconstrained model is far from it, so the constraints did something
    free = _group_rates(RampClassifier(lam=1e-3).fit(X, y).predict(X) == 1, g)
    assert min(free.values()) / max(free.values()) < KAPPA - 0.2


def test_difference_constraint_per_pair(data):
    X, y, g = data
    est = RampClassifier(constraints=[{"rate": "fairness_difference", "max": 0.05,
                                       "privileged": "a"}], lam=1e-3,
                         random_state=0).fit(X, y, groups=g)
    rates = _group_rates(est.predict(X) == 1, g)
    for v in ("b", "c"):
        assert rates["a"] - rates[v] <= 0.05 + est.feasibility_tol
    promises = constraint_promises(est)
    assert {p.quantity.kind for p in promises} == {"difference"}
    assert "s_p(a) − s_p(b) ≤ 0.05" in promises[0].statement


def test_comparisons_vocabulary():
    two = np.array(["M", "F", "M", "F"])
    assert G.comparisons(two, "M") == [G.Pair(None, "M")]  # two groups: today's meaning
    three = np.array(list("aabbcc"))
    assert G.comparisons(three, "a") == [G.Pair("b", "a"), G.Pair("c", "a")]
    assert G.comparisons(three, "a", protected="c") == [G.Pair("c", "a")]
    assert len(G.comparisons(three, compare="worst_pair")) == 6
    with pytest.raises(DataError, match=r"x\.protected 'd' is not a value"):
        G.comparisons(three, "a", protected="d", where="x")
    with pytest.raises(DataError, match="not compared with itself"):
        G.comparisons(three, "a", protected=["a", "b"], where="x")
    with pytest.raises(DataError, match="needs one"):
        G.comparisons(three, None, compare="each")


def test_intersections_are_labelled_and_named_by_parts():
    sex, race = np.array(["F", "M", "F"]), np.array(["x", "y", "y"])
    g = G.intersect([sex, race])
    assert g.tolist() == ["F & x", "M & y", "F & y"]
    assert G.comparisons(g, ["M", "y"]) == [G.Pair("F & x", "M & y"), G.Pair("F & y", "M & y")]


def test_equalized_odds_expands_to_both_label_sides(data):
    X, y, g = data
    cons = parse_constraints([{"rate": "equalized_odds", "kappa": KAPPA, "privileged": "a"}])
    out = expand_constraints(cons, FitData(y == 1, {"groups": g}))
    assert [c.name for c in out] == ["equalized_odds_b_tpr", "equalized_odds_b_fpr",
                                     "equalized_odds_c_tpr", "equalized_odds_c_fpr"]
    assert "negatives of b" in out[1].describe()


def test_statements_name_their_subset():
    a, b = parse_constraints([{"rate": "fairness_ratio", "kappa": 0.8, "subset": {"age": "young"}},
                              {"rate": "fairness_ratio", "kappa": 0.8, "subset": {"age": "old"}}])
    assert a.describe() != b.describe() and "age=young" in a.describe()


def test_tightened_params_per_pair(data):
    X, y, g = data
    est = _fit(X, y, g)
    promises = constraint_promises(est)
    params = {"constraints": [{"rate": "fairness_ratio", "kappa": KAPPA, "privileged": "a"}]}
    out = tightened_params(params, [0.85, 0.9], promises)
    assert out["constraints"] == [
        {"rate": "fairness_ratio", "kappa": 0.85, "privileged": "a", "protected": "b",
         "compare": "each", "name": "fairness_ratio_b"},
        {"rate": "fairness_ratio", "kappa": 0.9, "privileged": "a", "protected": "c",
         "compare": "each", "name": "fairness_ratio_c"}]
    refit = RampClassifier(constraints=out["constraints"], lam=1e-3).fit(X, y, groups=g)
    assert [r["target"] for r in refit.constraint_values_] == [0.85, 0.9]
    with pytest.raises(ValueError, match="2 bounds for 1 constraints"):
        tightened_params(params, [0.9, 1.1])


def test_fairness_metric_with_three_groups_is_the_worst_group_against_the_privileged():
    from safeclf.guarantees.metrics import fairness_ratio

    g = np.array(["a"] * 10 + ["b"] * 10 + ["c"] * 10)
    pred = np.r_[np.ones(5), np.zeros(5), np.ones(3), np.zeros(7), np.ones(8), np.zeros(2)]
    assert fairness_ratio(pred, g, 1, privileged="a") == pytest.approx(0.6)  # b: 0.3 / 0.5
    assert fairness_ratio(pred, g, 1) == pytest.approx(0.3 / 0.8)  # no direction: min / max


@pytest.mark.parametrize("kind,ev,sense,bound", [
    ("rate", Evidence(9, 100), "<=", 0.1),
    ("rate", Evidence(40, 200), ">=", 0.15),
    ("ratio", Evidence(30, 100, 45, 100), ">=", 0.8),
    ("ratio", Evidence(20, 100, 45, 100), ">=", 0.55),
    ("difference", Evidence(30, 100, 45, 100), "<=", 0.1),
])
def test_n_needed_is_the_smallest_conclusive_size(kind, ev, sense, bound):
    """At n_needed rows (the counts scaled by n_needed / rows) the verdict of the same
    interval is conclusive; a little below it, it is not."""
    p = Promise("x", "x", Quantity(kind), sense, bound, "declared", "-")
    rows = 400
    checked = judge(p, ev, 0.95, rows)
    assert checked.verdict == "inconclusive"
    need = checked.extra["n_needed"]
    assert need > rows

    def verdict_at(c):
        scaled = Evidence(ev.k * c, ev.n * c, None if ev.k2 is None else ev.k2 * c,
                          None if ev.n2 is None else ev.n2 * c)
        _, lo, hi, _ = interval(kind, scaled, 0.95)
        return verdict(sense, bound, lo, hi)

    assert verdict_at(need / rows) != "inconclusive"
    assert verdict_at((need - 0.01 * need) / rows) == "inconclusive"


def test_n_needed_is_infinite_on_the_bound():
    p = Promise("x", "x", Quantity("rate"), "<=", 0.1, "declared", "-")
    assert math.isinf(judge(p, Evidence(10, 100), 0.95, 100).extra["n_needed"])
    assert "n_needed" not in judge(p, Evidence(1, 1000), 0.95, 1000).extra  # conclusive


def test_group_thresholds_give_each_group_its_own_threshold_and_ratio(data):
    """The baseline hid the large group's disparity too (pooled: b/a ≈ 0.54 while the pooled
    ratio meets κ); with more than two groups it now thresholds and constrains each group."""
    from safeclf.methods.ramp.group_thresholds import GroupThresholds

    X, y, g = data
    onehot = np.c_[X, (g == "a") * 1.0, (g == "b") * 1.0, (g == "c") * 1.0]
    pooled = GroupThresholds(kappa=KAPPA, privileged="a", compare="pooled").fit(onehot, y,
                                                                                groups=g)
    pred = pooled.predict(onehot) == 1
    rates = _group_rates(pred, g)
    assert pred[g != "a"].mean() / rates["a"] >= KAPPA
    assert rates["b"] / rates["a"] < KAPPA - 0.1
    each = GroupThresholds(kappa=KAPPA, privileged="a").fit(onehot, y, groups=g)
    assert each.compare_ == "each" and set(each.thresholds_) == {"a", "b", "c"}
    rates = _group_rates(each.predict(onehot) == 1, g)
    assert min(rates["b"], rates["c"]) / rates["a"] >= KAPPA  # exact on the training rows

"""Certified training's choice among a plugin's settings
(safeclf/guarantees/certify/training.py): the predicted
safety test, the choice rule, and ramp's ``lam: auto`` as a list of settings."""

from __future__ import annotations

import numpy as np
import pytest
from group_data import two_groups

from safeclf.data.task import Part, Task
from safeclf.guarantees import promises as P
from safeclf.guarantees.bounds import BOUNDS
from safeclf.guarantees.certify import certified_fit
from safeclf.guarantees.certify import training as C


def _ratio_promise(bound=0.8, sense=">="):
    q = P.Quantity("ratio", "predicted_positive", groups="groups", privileged="M")
    return P.Promise("constraint_fairness_ratio", "ratio", q, sense, bound, "training", "test")


def _fair_task(n, seed, test=2000):
    """Two groups, the protected one (F) with fewer positives; a label-driven feature."""
    X, y, g = two_groups(n + test, seed)
    return Task("toy", Part(X[:n], y[:n], {"groups": g[:n]}),
                Part(X[n:], y[n:], {"groups": g[n:]}), info={"privileged_group": "M"})


@pytest.mark.parametrize("sense,bound,ev,rates", [
    (">=", 0.8, P.Evidence(12, 100, 20, 200), (0.12, 0.10)),   # about 0.04: rarely passes
    (">=", 0.8, P.Evidence(30, 100, 20, 200), (0.30, 0.10)),   # about 1
    ("<=", 1.25, P.Evidence(10, 100, 30, 100), (0.10, 0.30)),
    (">=", 0.8, P.Evidence(0, 100, 20, 200), (0.0, 0.10)),     # no protected positive: 0
])
def test_pass_probability_matches_a_simulated_safety_test(sense, bound, ev, rates):
    p, sizes, d = _ratio_promise(bound, sense), P.Evidence(0, 110, 0, 190), 0.025
    exact = C.pass_probability(p, ev, sizes, d)
    rng = np.random.default_rng(0)
    kA, kB = rng.binomial(110, rates[0], 4000), rng.binomial(190, rates[1], 4000)
    simulated = np.mean([C.safety_bound(p, P.Evidence(a, 110, b, 190), d)[1]
                         for a, b in zip(kA, kB, strict=True)])
    assert exact == pytest.approx(simulated, abs=3 * np.sqrt(0.25 / 4000))


def test_pass_probability_of_a_rate_promise():
    q = P.Quantity("rate", "predicted_positive")
    p, d = P.Promise("r", "rate", q, "<=", 0.2, "training", "test"), 0.025
    exact = C.pass_probability(p, P.Evidence(15, 100), P.Evidence(0, 300), d)
    rng = np.random.default_rng(1)
    simulated = np.mean([C.safety_bound(p, P.Evidence(k, 300), d)[1]
                         for k in rng.binomial(300, 0.15, 4000)])
    assert 0.2 < exact < 0.95 and exact == pytest.approx(simulated, abs=3 * np.sqrt(0.25 / 4000))


def test_choice_prefers_the_likeliest_pass_then_the_smaller_error():
    table = [{"error": 0.10, "pass_probability": 0.6}, {"error": 0.20, "pass_probability": 0.9},
             {"error": 0.15, "pass_probability": 0.9},
             {"error": float("nan"), "pass_probability": 0.0}]
    assert C._choose(table) == 2


def test_ramp_lists_one_setting_per_lam_only_where_lam_is_cross_validated():
    from safeclf.methods.ramp import plugin
    from safeclf.methods.ramp.estimator import LAM_AUTO_ROWS

    base = {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8}]}
    small, large = _fair_task(600, 0), _fair_task(LAM_AUTO_ROWS + 10, 0, test=10)
    for lam in ("1/n", 0.01):
        assert plugin.candidate_params({**base, "lam": lam}, small) == [{**base, "lam": lam}]
    assert plugin.candidate_params(base, large) == [base]  # None means 1/n from 2,000 rows
    settings = plugin.candidate_params(base, small)  # None means auto below
    assert [s["lam"] for s in settings] == pytest.approx(
        [10.0 ** e / 600 for e in (0, 0.5, 1, 1.5, 2)])
    grid = plugin.candidate_params({**base, "lam": "auto", "lam_grid": [0.3, 0.01]}, large)
    assert [s["lam"] for s in grid] == [0.01, 0.3]


class _Plugin:
    """The two plugin calls the predicted test makes, around any scikit-learn classifier."""

    def __init__(self, make):
        self.make = make

    def build(self, params, random_state=None):
        return self.make(**params)

    def fit(self, est, task):
        return est.fit(task.train.X, task.train.y)


def test_the_predicted_test_rejects_a_setting_that_predicts_no_positives():
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import LogisticRegression

    task = _fair_task(1500, 1)
    promise, sizes = _ratio_promise(0.3), [P.Evidence(0, 400, 0, 400)]
    # a constant "negative" classifier meets any ratio constraint written s_p(A) ≥ κ s_p(B)
    # in linear form, but no safety test can certify it
    flat = C.predicted_test(_Plugin(DummyClassifier), {"strategy": "constant", "constant": 0},
                            task, [promise], sizes, 0.025, 0)
    fit = C.predicted_test(_Plugin(LogisticRegression), {}, task, [promise], sizes, 0.025, 0)
    assert flat["pass_probability"] == 0.0
    assert fit["pass_probability"] > 0.5 and fit["error"] < flat["error"]


def test_certified_ramp_with_lam_auto_chooses_a_lam_by_its_predicted_safety_test():
    from safeclf.methods.ramp import plugin

    task = _fair_task(2000, 2)
    grid = [1 / 1400, 10 / 1400, 100 / 1400]
    params = {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8}], "lam": "auto",
              "lam_grid": grid}
    out = certified_fit(plugin, params, task, {"delta": 0.05, "fraction": 0.3}, seed=0)
    table = out.record["candidates"]
    assert [r["setting"]["lam"] for r in table] == grid
    assert [r["chosen"] for r in table].count(True) == 1
    chosen = C._choose(table)
    assert table[chosen]["chosen"]
    assert out.record["internal_bounds"]["constraint_fairness_ratio"] == (
        table[chosen]["internal_bounds"][0])
    # the setting most likely to pass; whether this draw passes is a chance event (predicted
    # ~0.7 here), so each outcome is checked for what it must be
    assert table[chosen]["pass_probability"] == max(r["pass_probability"] for r in table)
    if out.passed:
        assert out.estimator.lam_ == grid[chosen] and out.estimator.lam_cv_ is None
    else:
        assert out.estimator is None and out.record["reason"].startswith("no model: the safety test failed")


# -- moved from test_promises: tightening, pass and no solution -------------------------------
def test_tightening_leaves_room_for_the_safety_test():
    t = C.tightened_rate(0.1, "<=", 1000, 0.05)
    h = BOUNDS["clopper_pearson"].upper(t * 1000, 1000, 0.05) - t
    assert t < 0.1 and t + 2 * h == pytest.approx(0.1, abs=1e-6)
    t2 = C.tightened_rate(0.9, ">=", 1000, 0.05)
    assert t2 > 0.9


def test_certified_ramp_passes_with_a_high_confidence_promise():
    from safeclf.methods.ramp import plugin

    task = _fair_task(3000, 0)
    out = certified_fit(plugin, {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8}]},
                        task, {"delta": 0.05, "fraction": 0.3}, seed=0)
    assert out.passed, out.record
    (p,) = out.promises
    assert p.kind == "high_confidence" and p.delta == 0.05 and p.bound == 0.8
    rec = out.record
    assert rec["internal_bounds"]["constraint_fairness_ratio"] > 0.8  # tightened
    assert rec["safety_tests"]["constraint_fairness_ratio"]["bound"] >= 0.8
    assert rec["n_safety"] == 900
    (checked,) = P.check(plugin, out.promises, out.estimator, task, 0.95)
    assert checked["estimate"] >= 0.8 - 0.05


def test_certification_returns_no_solution_when_the_safety_test_cannot_pass():
    from safeclf.methods.ramp import plugin

    # 60 rows: 18 held back, a few per group: no ratio bound at 1 − δ can reach κ = 0.95
    task = _fair_task(60, 1)
    out = certified_fit(plugin, {"constraints": [{"rate": "fairness_ratio", "kappa": 0.95}]},
                        task, {"delta": 0.05, "fraction": 0.3}, seed=0)
    assert not out.passed and out.estimator is None
    assert "reason" in out.record


def test_the_bound_of_certified_training_is_selectable():
    """``certify: {bound: hoeffding}`` reaches the tightening and the safety test: Hoeffding's
    half-widths are wider than Clopper–Pearson's, so it asks the candidate for more (a larger
    κ'), and the record and the promise name the bound."""
    from safeclf.guarantees import bounds as B
    from safeclf.methods.ramp import plugin

    assert C.tightened_rate(0.1, "<=", 1000, 0.05, B.get("hoeffding")) < \
        C.tightened_rate(0.1, "<=", 1000, 0.05)
    task = _fair_task(3000, 0)
    params = {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8}]}
    cp = certified_fit(plugin, params, task, {"delta": 0.05, "fraction": 0.3}, seed=0)
    hf = certified_fit(plugin, params, task,
                       {"delta": 0.05, "fraction": 0.3, "bound": "hoeffding"}, seed=0)
    assert cp.record["bound"] == "clopper_pearson" and hf.record["bound"] == "hoeffding"
    name = "constraint_fairness_ratio"
    assert hf.record["internal_bounds"][name] > cp.record["internal_bounds"][name]
    assert "hoeffding" in hf.promises[0].note


def test_one_entry_chooses_the_route_and_refuses_what_the_route_cannot_certify():
    """The single entry (safeclf.guarantees.certify.certified_fit) routes ramp to training and
    any other scorer to a threshold, fills the defaults, and refuses unknown options and
    declared promises on the training route instead of ignoring them."""
    from safeclf.guarantees.certify import DEFAULTS, route
    from safeclf.methods.ramp import plugin as ramp
    from safeclf.plugins import registry

    logreg = registry.get_method("logreg")
    assert route(ramp) == "training" and route(logreg) == "threshold"
    assert route(ramp, "threshold") == "threshold"
    task = _fair_task(1500, 1)
    out = certified_fit(logreg, {}, task, {"delta": 0.1},
                        [{"rate": "fairness_ratio", "min": 0.8}], seed=1)
    assert out.record["how"] == "threshold"
    assert out.record["fraction"] == DEFAULTS["fraction"] and out.record["delta"] == 0.1
    with pytest.raises(TypeError, match="deltta"):
        certified_fit(logreg, {}, task, {"deltta": 0.1}, seed=1)
    with pytest.raises(ValueError, match="how: threshold"):
        certified_fit(ramp, {"constraints": [{"rate": "fairness_ratio", "kappa": 0.8}]}, task,
                      {}, [{"rate": "fairness_ratio", "min": 0.8}], seed=1)


def test_a_recheck_accepts_rounding_in_p_values_and_limits_and_nothing_else():
    """``evidence.differences``: a p-value or limit moved by 1e-7 relative (what a change of
    the pair test's arithmetic moved them by) re-checks; one moved by 1e-4, or a count, a
    verdict or δ moved at all, does not."""
    import copy

    from safeclf.guarantees.certify.evidence import differences

    stored = {"route": "posthoc", "seed": 0, "fraction": 0.5, "delta": 0.05, "passed": True,
              "p_value": 0.0123456789, "held_back": {"n_train": 100, "n": 50, "sha256": "ab"},
              "statistic": {"fair": {"k": 31, "n": 120, "k2": 40, "n2": 130, "limit": 0.8123,
                                     "passed": True, "p_value": 0.0123456789}}}
    assert differences(stored, copy.deepcopy(stored)) == []

    def moved(path, factor=None, value=None):
        r = copy.deepcopy(stored)
        *head, last = path
        d = r
        for k in head:
            d = d[k]
        d[last] = d[last] * factor if factor is not None else value
        return differences(stored, r)

    for path in (("p_value",), ("statistic", "fair", "p_value"), ("statistic", "fair", "limit")):
        assert moved(path, 1 + 1e-7) == []
        assert len(moved(path, 1 + 1e-4)) == 1
    for path, value in ((("statistic", "fair", "k"), 32), (("statistic", "fair", "passed"), False),
                        (("delta",), 0.05 * (1 + 1e-7)), (("passed",), False)):
        assert len(moved(path, value=value)) == 1

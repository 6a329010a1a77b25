"""The order of post-hoc certification's path (issue 32, item 8): each rule's predicted
probability of passing the held-back test, and the path that tries the surest rules first."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.guarantees import bounds as B
from safeclf.guarantees import declared, ltt
from safeclf.guarantees.certify import threshold as certified
from safeclf.guarantees.certify.threshold import Part, Rule, _front, _group_rules, pass_probabilities, search
from safeclf.guarantees.promises import Evidence

BND = B.get("clopper_pearson")


def band(kappa=0.8, upper=1.25):
    g = np.repeat(["F", "M"], [40, 60])
    return declared.promises([{"rate": "fairness_ratio", "min": kappa, "max": upper}],
                             np.zeros(100, bool), {"groups": g})


def counts_at(rate_f, rate_m, n_f, n_m):
    """One promise's candidate counts (k, n, k2, n2) for rules at the given rates."""
    rate_f, rate_m = np.atleast_1d(rate_f), np.atleast_1d(rate_m)
    return (np.round(rate_f * n_f), np.full(rate_f.shape, float(n_f)),
            np.round(rate_m * n_m), np.full(rate_m.shape, float(n_m)))


def test_the_predicted_pass_probability_is_the_tests_own_on_simulated_parts():
    """A rule whose candidate part is very large knows its true rates; its predicted pass
    probability must then be the share of held-back parts drawn at those rates that the exact
    test certifies (the prediction uses a normal approximation of the test: within 0.08)."""
    promises = band()
    rates = np.array([0.21, 0.22, 0.24, 0.26, 0.27])  # F at M = 0.25: ratio 0.84 … 1.08
    c = counts_at(rates, np.full(5, 0.25), 10**7, 10**7)
    sizes = [Evidence(0, 300, 0, 450)] * 2
    predicted = pass_probabilities(promises, [c, c], sizes, 0.05, BND, draws=4000)
    rng = np.random.default_rng(0)
    for r, pred in zip(rates, predicted, strict=True):
        kf, km = rng.binomial(300, r, 400), rng.binomial(450, 0.25, 400)
        p = np.max([ltt.p_values(p, kf, 300, km, 450, BND) for p in promises], axis=0)
        assert abs(np.mean(p <= 0.05) - pred) < 0.08, (r, pred, np.mean(p <= 0.05))


def test_a_band_passes_only_inside_it_and_surest_at_its_middle():
    promises = band()
    ratio = np.geomspace(0.7, 1.45, 31)
    c = counts_at(0.25 * ratio, np.full(31, 0.25), 20000, 30000)
    sizes = [Evidence(0, 4000, 0, 6000)] * 2
    prob = pass_probabilities(promises, [c, c], sizes, 0.05, BND)
    centre = np.argmin(np.abs(np.log(ratio)))
    assert prob[centre] >= prob.max() - 0.02 and prob[centre] > 0.9
    assert prob[ratio < 0.8].max() < 0.1 and prob[ratio > 1.25].max() < 0.1
    # one draw serves both sides: a rule passes both only when its draw falls inside the band,
    # so the joint probability is at most either side's alone
    low = pass_probabilities(promises[:1], [c], sizes[:1], 0.05, BND)
    high = pass_probabilities(promises[1:], [c], sizes[:1], 0.05, BND)
    assert np.all(prob <= np.minimum(low, high) + 1e-12)


def test_the_candidate_rates_own_noise_lowers_the_probability_of_a_rule_near_the_boundary():
    """The same candidate rates on fewer candidate rows are less certain to hold on the
    population: a rule that is predicted to pass gets a smaller probability."""
    promises = band()[:1]
    big = counts_at(np.array([0.23]), np.array([0.25]), 10**6, 10**6)
    small = counts_at(np.array([0.23]), np.array([0.25]), 300, 450)
    sizes = [Evidence(0, 3000, 0, 4500)]
    p_big, p_small = (pass_probabilities(promises, [c], sizes, 0.05, BND)[0]
                      for c in (big, small))
    assert p_small < p_big - 0.1


def test_the_path_runs_from_the_surest_rule_and_every_step_is_more_accurate():
    rng = np.random.default_rng(1)
    prob, err = rng.random(200), rng.random(200)
    path = _front(prob, err)
    assert path[0] == max(range(200), key=lambda i: (prob[i], -err[i]))
    assert all(prob[a] >= prob[b] for a, b in zip(path, path[1:]))
    assert all(err[a] > err[b] for a, b in zip(path, path[1:]))
    # every rule left out is dominated: some rule of the path is at least as likely to pass
    # and more accurate (or as accurate)
    for i in set(range(200)) - set(path):
        assert any(prob[j] >= prob[i] and err[j] <= err[i] for j in path)


def test_among_equally_sure_rules_the_widest_margin_is_tested_first():
    """Near 1 the predicted probability saturates (and the candidate rates are in-sample,
    so optimistic): the path's first rule, the most accurate of the 'sure' ones, may fail on
    the held-back rows. The rule with the widest margin among them (the surest at a stricter
    level) goes in front, so that a failure of the first does not end with nothing."""
    from safeclf.guarantees.certify.path import with_fallback

    promises = declared.promises([{"rate": "fpr", "max": 0.1}], np.zeros(100, bool), {})
    n = 20000
    fpr = np.array([0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.07])  # safest first
    err = np.array([0.30, 0.27, 0.24, 0.22, 0.20, 0.19, 0.18])
    counts = [(np.round(fpr * n), np.full(7, float(n)), np.zeros(7), np.zeros(7))]
    sizes = [Evidence(0, 300)]
    prob = pass_probabilities(promises, counts, sizes, 0.05, BND)
    assert prob[:5].min() == 1.0 and prob[5] < 1.0  # the first five look equally sure
    order = _front(prob, list(err))
    assert order[0] == 4  # the most accurate of the sure ones
    path = with_fallback(order, list(range(7)), prob, list(err), promises, counts, sizes,
                         0.05, BND)
    assert path[0] == 0 and path[1:] == order  # the widest margin first, then the path
    # nothing to add where the first rule is alone in being that sure
    alone = np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    assert with_fallback(_front(alone, list(err)), list(range(7)), alone, list(err),
                         promises, counts, sizes, 0.05, BND) == _front(alone, list(err))


def adult_like(n, rng):
    """Scores and groups where the group F lags: without per-group thresholds the ratio is
    about 0.4."""
    g = np.where(rng.random(n) < 0.35, "F", "M")
    y = rng.random(n) < np.where(g == "F", 0.12, 0.32)
    score = rng.normal(size=n) + 1.6 * y - 0.3 * (g == "F")
    return Part(score, y, {"groups": g})


def test_the_path_depends_on_the_candidate_part_alone(monkeypatch):
    """Two held-back parts of the same size: the same rules are tested in the same order (the
    validity argument of safeclf.guarantees.certify.threshold needs it)."""
    rng = np.random.default_rng(2)
    cand = adult_like(3000, rng)
    promises = declared.promises([{"rate": "fairness_ratio", "min": 0.8, "max": 1.25}],
                                 cand.y_pos, cand.rows)
    tested: list[list] = []
    real_counts = certified._counts

    def counts(promises_, part, rules):
        if part is not cand:  # a held-back part's counts: the rules the search tests
            tested[-1].append(tuple(rules))
        return real_counts(promises_, part, rules)

    monkeypatch.setattr(certified, "_counts", counts)
    for seed in (3, 4):
        tested.append([])
        search(promises, cand, adult_like(3000, np.random.default_rng(seed)), 0.05)
    first, second = (calls[0] for calls in tested)
    assert len(first) > 10 and first == second


@pytest.mark.parametrize("kappa, levels", [(0.8, 12), (0.9, 11)])
def test_a_band_gets_levels_across_it_and_none_outside(kappa, levels):
    rng = np.random.default_rng(5)
    cand = adult_like(2000, rng)
    promises = declared.promises([{"rate": "fairness_ratio", "min": kappa, "max": 1 / kappa}],
                                 cand.y_pos, cand.rows)
    grid = np.quantile(cand.score, np.linspace(0.05, 0.95, 9))
    rules = _group_rules(promises, cand, grid, "groups")
    f, m = (cand.rows["groups"] == "F"), (cand.rows["groups"] == "M")
    by_ref: dict = {}
    for r in rules:
        pos = r.positive(cand)
        by_ref.setdefault(r.threshold, []).append(pos[f].mean() / pos[m].mean())
    assert all(isinstance(r, Rule) and r.per_group for r in rules)
    # the lagging group at ρ × the top group's rate, ρ from 1/κ down to κ (a candidate rate is
    # a share of rows: within a row of it); levels that give the same thresholds on few
    # positive rows are one rule
    assert max(len(r) for r in by_ref.values()) == levels
    for ratios in by_ref.values():
        assert min(ratios) >= kappa - 0.02 and max(ratios) <= 1 / kappa + 0.02

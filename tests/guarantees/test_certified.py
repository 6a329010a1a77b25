"""Post-hoc certification (Learn-then-Test): the promise holds on the population in at least
1 − δ of training draws, for a rate and for a ratio over three groups; no solution is never an
unsafe model; the wrapper is a scikit-learn meta-estimator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.linear_model import LogisticRegression

from safeclf.guarantees.certify.threshold import CertifiedClassifier, NoSolution

GROUPS = np.array(["a", "b", "c"])


def draw(n, rng):
    """Three groups of unequal size and base rate; the features include the group one-hot."""
    g = GROUPS[rng.choice(3, n, p=[0.6, 0.3, 0.1])]
    x = rng.normal(size=(n, 3)) + (g == "a")[:, None] * 0.8
    y = (x[:, 0] + x[:, 1] + rng.normal(size=n) > 0.8).astype(int)
    return np.c_[x, (g == "a"), (g == "b"), (g == "c")].astype(float), y, g


@pytest.fixture(scope="module")
def population():
    return draw(100_000, np.random.default_rng(12345))


def _fits(promises, seeds, n, delta, **kw):
    from safeclf._utils.blas import one_blas_thread

    for seed in seeds:
        X, y, g = draw(n, np.random.default_rng(seed))
        with one_blas_thread():  # small fits: BLAS threads only spin on a shared machine
            yield CertifiedClassifier(LogisticRegression(), promises, delta=delta,
                                      random_state=seed, **kw).fit(X, y, groups=g)


def _max_failures(trials, delta):
    """Failures allowed at a true rate δ: beyond the 99.9 % binomial quantile is a defect."""
    return int(binom.ppf(0.999, trials, delta))


def test_a_binding_fpr_promise_holds_in_all_but_delta_of_draws(population):
    """The error-optimal rule has FPR ≈ 0.05 here: asking ≤ 0.02 binds, so certified rules
    sit near the bound, where a wrong certificate would show."""
    X, y, _ = population
    delta, trials = 0.1, 100
    fprs = [float(np.mean(m.predict(X)[y == 0] == 1)) for m in
            _fits([{"rate": "fpr", "max": 0.02}], range(trials), 2000, delta) if m.rule_ is not None]
    assert len(fprs) >= 0.8 * trials
    assert sum(f > 0.02 for f in fprs) <= _max_failures(trials, delta)
    assert np.median(fprs) > 0.005  # not certified by predicting nothing (FPR 0)


def test_a_three_group_fairness_ratio_holds_in_all_but_delta_of_draws(population):
    """With three groups a declared ratio is one promise per pair, each group against the
    privileged a (s_p(b) ≥ 0.8 s_p(a) and s_p(c) ≥ 0.8 s_p(a)), certified jointly: a draw
    fails when either pair's population ratio is below κ (the pooled ratio could hide one)."""
    X, y, g = population
    delta, trials = 0.1, 60
    promise = [{"rate": "fairness_ratio", "min": 0.8, "privileged": "a"}]
    plain = LogisticRegression().fit(*draw(2000, np.random.default_rng(0))[:2]).predict(X)
    assert plain[g != "a"].mean() < 0.5 * plain[g == "a"].mean()  # the promise binds
    worst, per_group = [], 0
    for m in _fits(promise, range(trials), 1200, delta):
        assert sorted(p.quantity.protected for p in m.promises_) == ["b", "c"]
        if m.rule_ is None:
            continue
        pred = m.predict(X)
        worst.append(min(pred[g == h].mean() for h in "bc") / pred[g == "a"].mean())
        per_group += bool(m.rule_.per_group)
    assert len(worst) >= 0.8 * trials and per_group >= 0.5 * len(worst)
    assert sum(r < 0.8 for r in worst) <= _max_failures(trials, delta)


def test_a_difference_of_group_rates_holds_in_all_but_delta_of_draws(population):
    """s_p(a) − s_p(g) ≤ 0.1 for g in b, c (the privileged group's rate minus each other's),
    certified by U_a − L_g ≤ ε on the held-back rows."""
    X, y, g = population
    delta, trials = 0.1, 40
    promise = [{"rate": "fairness_difference", "max": 0.1, "privileged": "a"}]
    gaps, positive = [], []
    for m in _fits(promise, range(trials), 1500, delta):
        assert {p.quantity.kind for p in m.promises_} == {"difference"}
        if m.rule_ is None:
            continue
        pred = m.predict(X)
        gaps.append(max(pred[g == "a"].mean() - pred[g == h].mean() for h in "bc"))
        positive.append(pred.mean())
    assert len(gaps) >= 0.8 * trials
    assert sum(d > 0.1 for d in gaps) <= _max_failures(trials, delta)
    assert 0.05 < np.median(positive) < 0.95  # not certified by predicting every row alike


def test_no_rule_passing_is_no_solution_never_an_unsafe_model():
    X, y, g = draw(400, np.random.default_rng(1))
    m = CertifiedClassifier(LogisticRegression(), [{"rate": "fpr", "max": 0.001},
                                                   {"rate": "recall", "min": 0.99}],
                            random_state=0).fit(X, y, groups=g)
    assert m.rule_ is None and "not certified at δ = 0.05" in m.no_solution_
    with pytest.raises(NoSolution, match="no certified model"):
        m.predict(X)


def test_the_score_orders_rows_and_agrees_with_predict():
    X, y, g = draw(2000, np.random.default_rng(2))
    m = CertifiedClassifier(LogisticRegression(), [{"rate": "fpr", "max": 0.1}],
                            random_state=0).fit(X, y, groups=g)
    s = m.decision_function(X)
    assert np.unique(s).size > 0.9 * s.size
    assert np.array_equal(m.predict(X), m.classes_[(s > 0).astype(int)])


def test_promises_are_stated_as_certified():
    X, y, g = draw(1500, np.random.default_rng(3))
    m = CertifiedClassifier(LogisticRegression(), [{"rate": "fpr", "max": 0.1}], delta=0.05,
                            bound="ttest", random_state=0).fit(X, y, groups=g)
    (p,) = m.promises_
    assert p.kind == "high_confidence" and p.delta == 0.05 and "0.95" in p.statement
    assert "approximate" in p.note and m.certificate_["approximate"]


def test_holm_certifies_a_subset_of_a_grid():
    X, y, g = draw(1500, np.random.default_rng(4))
    m = CertifiedClassifier(LogisticRegression(), [{"rate": "fpr", "max": 0.05}], test="holm",
                            random_state=0).fit(X, y, groups=g)
    assert m.rule_ is not None and m.certificate_["test"] == "holm"
    assert m.certificate_["p_value"] <= 0.05


def test_groups_routed_through_a_pipeline():
    import sklearn
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, g = draw(1500, np.random.default_rng(5))
    with sklearn.config_context(enable_metadata_routing=True):
        cc = CertifiedClassifier(LogisticRegression(), [{"rate": "fairness_ratio", "min": 0.8,
                                                         "privileged": "a"}], random_state=0)
        pipe = make_pipeline(StandardScaler(), cc.set_fit_request(groups=True))
        pipe.fit(X, y, groups=g)
    assert pipe[-1].rule_ is not None and pipe[-1].rule_.per_group
    assert pipe.predict(X).shape == y.shape


@pytest.mark.parametrize("bad, message", [
    ({"delta": 1.5}, "delta must be in"), ({"delta": 0}, "delta must be in"),
    ({"fraction": 1.0}, "fraction must be in"), ({"bound": "wilson"}, "unknown bound"),
    ({"thresholds": "each"}, "thresholds must be"), ({"promises": []}, "at least one"),
    ({"allow_degenerate": "yes"}, "allow_degenerate must be True or False"),
])
def test_bad_requests_are_refused(bad, message):
    X, y, g = draw(300, np.random.default_rng(6))
    params = {"promises": [{"rate": "fpr", "max": 0.1}], **bad}
    with pytest.raises(ValueError, match=message):
        CertifiedClassifier(LogisticRegression(), **params).fit(X, y, groups=g)


def test_per_group_thresholds_need_the_group_in_the_features():
    from safeclf.errors import DataError

    X, y, g = draw(600, np.random.default_rng(7))
    with pytest.raises(DataError, match="no feature columns determine the group"):
        CertifiedClassifier(LogisticRegression(), [{"rate": "fairness_ratio", "min": 0.8,
                                                    "privileged": "a"}], thresholds="per_group",
                            random_state=0).fit(X[:, :3], y, groups=g)


def test_the_meta_estimator_follows_the_scikit_learn_contract():
    """get_params / set_params / clone, nested parameters of the wrapped estimator, learned
    attributes after fit only."""
    from sklearn.base import clone

    cc = CertifiedClassifier(LogisticRegression(C=2.0), [{"rate": "fpr", "max": 0.1}],
                             delta=0.1, random_state=3)
    assert cc.get_params()["estimator__C"] == 2.0
    cc.set_params(estimator__C=0.5, delta=0.2)
    twin = clone(cc)
    assert twin.get_params()["estimator__C"] == 0.5 and twin.delta == 0.2
    assert not hasattr(twin, "rule_")
    X, y, g = draw(800, np.random.default_rng(8))
    twin.fit(X, y, groups=g)
    assert hasattr(twin, "rule_") and not hasattr(cc, "rule_")

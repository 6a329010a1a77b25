"""The rate vocabulary (safeclf.guarantees.rates): each rate means one thing wherever it is
used — as ramp's constraint (its linear form and its bound), as a promise checked on held-out
rows, as a metric — and that thing is its textbook definition. A new rate is one class in the
vocabulary and one entry in :data:`DEFINITIONS` here."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.guarantees.metrics import Outputs, evaluate
from safeclf.guarantees.promises import judge, rate_evidence, rate_value
from safeclf.guarantees.rate_items import parse_constraints, parse_objective
from safeclf.guarantees.rates import RATES, FitData


def _share(hit, among):
    return hit[among].sum() / among.sum() if among.any() else np.nan


#: Each rate from its definition: (labels y, predictions p (0/1), deployed model's b) -> value.
DEFINITIONS = {
    "coverage": lambda y, p, b: p.mean(),
    "error": lambda y, p, b: (p != y).mean(),
    "accuracy": lambda y, p, b: (p == y).mean(),
    "egregious": lambda y, p, b: (p == y).mean(),
    "recall": lambda y, p, b: _share(p == 1, y == 1),
    "fpr": lambda y, p, b: _share(p == 1, y == 0),
    "fnr": lambda y, p, b: _share(p == 0, y == 1),
    "churn": lambda y, p, b: (p != b).mean(),
    "precision": lambda y, p, b: _share(y == 1, p == 1),
}


def _draw(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    p = (rng.random(n) < np.where(y == 1, 0.7, 0.25)).astype(int)
    b = (rng.random(n) < 0.5).astype(int)
    return y, p, b


def test_every_rate_has_a_definition_here():
    assert set(RATES) == set(DEFINITIONS)


@pytest.mark.parametrize("kind", sorted(RATES))
def test_a_rate_means_the_same_in_training_held_out_and_in_metrics(kind):
    """Its definition = its value on the training rows (ramp) = its held-out count (promises)
    = its metric; and for a randomised rule the training value is the held-out expected one."""
    rate = RATES[kind]()
    for seed in range(5):
        y, p, b = _draw(seed=seed)
        rows = {"baseline": b}
        data = FitData(y == 1, rows)
        want = DEFINITIONS[kind](y, p, b)
        assert rate.value(data, p) == pytest.approx(want)
        ev = rate_evidence(rate.quantity(), y == 1, p == 1, rows)
        assert ev.k / ev.n == pytest.approx(want)
        if rate.metric is not None:
            out = Outputs(y=y, pred=p, classes=np.array([0, 1]), rows=rows)
            assert evaluate([rate.metric], out, "t")[f"t_{rate.metric}"] == pytest.approx(want)
        soft = np.random.default_rng(seed).uniform(0.05, 0.95, y.size)
        assert rate.value(data, soft) == pytest.approx(rate_value(rate.quantity(), y == 1, soft,
                                                                  rows))


@pytest.mark.parametrize("kind", sorted(RATES))
def test_a_bound_on_a_rate_is_linear_and_exact(kind):
    """ramp's form g(p) ≤ γ of ``rate ≤ t`` / ``rate ≥ t`` holds exactly when the bound does,
    on 0/1 predictions; a rate on fixed rows is itself linear in p."""
    rate = RATES[kind]()
    rng = np.random.default_rng(1)
    y, _, b = _draw(seed=1)
    data = FitData(y == 1, {"baseline": b})
    checked = 0
    for _ in range(200):
        p = (rng.random(y.size) < rng.uniform(0.05, 0.95)).astype(float)
        value, t = rate.value(data, p), rng.uniform(0.05, 0.95)
        if not np.isfinite(value) or abs(value - t) < 1e-9:
            continue
        for sense, holds in (("max", value <= t), ("min", value >= t)):
            g, gamma = rate.bounded(data, sense, t)
            assert (g.value(p) <= gamma + 1e-12) == holds, (sense, value, t)
        if rate.predicted is None:
            assert rate.linear(data).value(p) == pytest.approx(value)
        checked += 1
    assert checked > 150


# -- precision: P(y favourable | predicted favourable) --------------------------------------
def test_precision_counts_the_predicted_positives_and_is_no_objective():
    y, p, b = _draw()
    (c,) = parse_constraints([{"rate": "precision", "min": 0.6}])
    q = c.quantity()
    ev = rate_evidence(q, y == 1, p == 1, {})
    assert (ev.k, ev.n) == (int(((y == 1) & (p == 1)).sum()), int(p.sum()))
    # held out: Clopper–Pearson on (TP, predicted positives); a verdict from the interval
    from safeclf.guarantees.declared import promises
    from safeclf.guarantees.promises import clopper_pearson

    (promise,) = promises([{"rate": "precision", "min": 0.6}], y == 1, {})
    assert promise.quantity == q and promise.sense == ">=" and promise.bound == 0.6
    checked = judge(promise, ev, 0.95)
    assert (checked.lower, checked.upper) == pytest.approx(clopper_pearson(ev.k, ev.n, 0.95))
    assert checked.n == ev.n
    with pytest.raises(ValueError, match=r"^objective\[0\]\.rate"):
        parse_objective([{"rate": "precision"}])


def _imbalanced(n, seed, shift=1.6):
    """A rare positive class, one informative feature: precision rises with the threshold."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.25).astype(int)
    X = rng.normal(size=(n, 3)) + np.c_[shift * y, np.zeros((n, 2))]
    return X, y


#: seeds of ramp's solver in the precision-constraint test, and how many of them must find a
#: rule that predicts someone positive (see the test)
PRECISION_SEEDS, PRECISION_USEFUL = 24, 8


def test_precision_as_a_ramp_constraint_holds_on_the_training_rows():
    """Over 24 seeds of ramp's (non-convex) solver: every returned rule keeps the linear form
    (1 − a)·TP − a·FP ≥ 0 on its training rows, so a rule that predicts anyone positive has
    precision ≥ 0.8 there; the empty rule keeps the form too (precision is then undefined).
    From a zero start the solver lands on the empty rule from about half the starting points
    (11 of these 24 at 24fe668), so the test asks for a third: a solver that made the empty
    rule its usual landing would fail (at a one-in-two chance a seed, 7 or fewer of 24 has
    probability 0.03), a change of path that keeps the one-in-two would not."""
    from safeclf.methods.ramp import RampClassifier

    X, y = _imbalanced(600, 0)
    prec = DEFINITIONS["precision"]
    free = RampClassifier(lam="1/n", random_state=0).fit(X, y)
    assert prec(y, free.predict(X), None) < 0.8 - 0.05  # the constraint has work to do
    useful = 0
    for seed in range(PRECISION_SEEDS):
        est = RampClassifier(lam="1/n", constraints=[{"rate": "precision", "min": 0.8}],
                             random_state=seed).fit(X, y)
        pred = est.predict(X) == 1
        tp, fp = int(np.sum(pred & (y == 1))), int(np.sum(pred & (y == 0)))
        row = est.constraint_values_[0]
        assert (1 - 0.8) * tp - 0.8 * fp >= -row["tolerance"] * max(1, pred.sum())
        if pred.sum() > 10:
            useful += 1
            assert row["train"] >= 0.8 - row["tolerance"]
            assert prec(y, est.predict(X), None) == pytest.approx(row["train"])
    assert useful >= PRECISION_USEFUL, useful


def test_precision_certified_post_hoc_holds_on_fresh_data():
    """CertifiedClassifier with ``precision ≥ 0.9`` at δ = 0.1: on fresh rows the returned
    rule's precision is below 0.9 in at most 3 of 10 seeds (P ≤ 0.013 if each seed fails with
    probability δ), and the plain model misses it (so the certificate did something). The
    held-back test counts the positives among each rule's own predicted positives."""
    from sklearn.linear_model import LogisticRegression

    from safeclf.guarantees.certify.threshold import CertifiedClassifier

    X_new, y_new = _imbalanced(40_000, 99, 2.5)
    prec = DEFINITIONS["precision"]
    assert prec(y_new, LogisticRegression().fit(*_imbalanced(1500, 0, 2.5)).predict(X_new),
                None) < 0.88
    found = failed = 0
    for seed in range(10):
        cc = CertifiedClassifier(LogisticRegression(), [{"rate": "precision", "min": 0.9}],
                                 delta=0.1, random_state=seed).fit(*_imbalanced(1500, seed, 2.5))
        if cc.rule_ is None:
            continue
        found += 1
        pred = cc.predict(X_new)
        assert pred.sum() > 100
        failed += prec(y_new, pred, None) < 0.9
    assert found >= 8
    assert failed <= 3

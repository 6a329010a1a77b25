"""Better than trivial, or say so (issue 32, item 3): the degenerate verdict as a property (a
random rule on random labels is degenerate, a rule with real signal is not, a one-class rule
always is), and certification that never returns a degenerate rule silently."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from safeclf import trivial


def test_the_trivial_rule_is_the_majority_of_the_training_labels():
    y_train = np.array(["no"] * 7 + ["yes"] * 3)
    y = np.array(["yes", "yes", "no", "no", "no"])
    assert trivial.majority(y_train) == "no"
    assert trivial.trivial_error(y_train, y) == pytest.approx(2 / 5)
    # the same test rows, another training majority: the other error
    assert trivial.trivial_error(np.array(["yes"] * 6 + ["no"] * 4), y) == pytest.approx(3 / 5)


def test_the_sign_test_is_the_exact_binomial_tail_on_discordant_rows():
    rng = np.random.default_rng(0)
    model, rule = rng.random(400) < 0.8, rng.random(400) < 0.75
    b, c = int(np.sum(model & ~rule)), int(np.sum(rule & ~model))
    p, n = trivial.sign_test(model, rule)
    assert n == b + c
    assert p == pytest.approx(binom.sf(b - 1, b + c, 0.5))
    assert trivial.sign_test(model, model) == (1.0, 0)


def test_a_random_rule_on_random_labels_is_degenerate_with_high_frequency():
    """Labels and predictions independent (no signal): the model is not better than the
    majority rule, so the one-sided test at 0.05 rejects in at most about 5 % of draws (its
    size); over 200 draws, at least the 99.9 % binomial quantile's complement is flagged."""
    rng = np.random.default_rng(1)
    flagged = 0
    for _ in range(200):
        n = int(rng.integers(200, 3000))
        base = rng.uniform(0.1, 0.5)
        y_train, y = rng.random(n) < base, rng.random(n) < base
        pred = rng.random(n) < rng.uniform(0.05, 0.95)
        flagged += trivial.degenerate(y_train, y, pred).degenerate
    assert flagged >= 200 - binom.ppf(0.999, 200, trivial.LEVEL)


def test_a_rule_with_real_signal_is_not_degenerate():
    """Labels from a score with noise, the rule the score's sign: far better than the majority
    rule, on every draw of a few hundred rows."""
    rng = np.random.default_rng(2)
    for _ in range(50):
        n = int(rng.integers(300, 2000))
        s = rng.normal(size=n)
        y = (s + rng.normal(scale=0.7, size=n)) > 0.4
        v = trivial.degenerate(y, y, s > 0.4)
        assert not v.degenerate, v.reason
        assert v.error < v.trivial_error and v.p_value <= trivial.LEVEL
        assert "is below the majority rule's" in v.reason


@pytest.mark.parametrize("labels", [(0, 1), ("deny", "approve"), (False, True)])
def test_a_one_class_rule_always_is_degenerate(labels):
    """Every row (or all but 1 %) given one class: degenerate whatever the labels, even where
    that class is right more often than the majority rule (labels drawn after the training
    majority changed)."""
    rng = np.random.default_rng(3)
    neg, pos = labels
    for _ in range(30):
        n = int(rng.integers(100, 5000))
        y_train = np.where(rng.random(n) < 0.3, pos, neg)
        y = np.where(rng.random(n) < 0.9, pos, neg)  # mostly positive: all-positive is right
        pred = np.full(n, pos, dtype=y.dtype)
        flip = rng.choice(n, int(n * trivial.NEGLIGIBLE_SHARE), replace=False)
        pred[flip] = neg
        v = trivial.degenerate(y_train, y, pred)
        assert v.degenerate
        word = "positive" if pos is True else f"`{pos}`"
        assert v.reason.startswith(f"predicts {word} for ") and v.reason.endswith("% of rows")


def test_the_reason_names_the_figures():
    """1,000 rows, 171 positive; the model calls 99 rows positive, 50 of them rightly: error
    0.170 against the majority rule's 0.171 on 99 discordant rows, p = P(Bin(99, 1/2) ≥ 50)."""
    y = np.arange(1000) < 171
    pred = np.zeros(1000, bool)
    pred[121:220] = True  # rows 121-170 positive (right), 171-219 negative (wrong)
    v = trivial.degenerate(y, y, pred, rows="the test rows")
    assert v.degenerate and v.discordant == 99
    assert v.p_value == pytest.approx(binom.sf(49, 99, 0.5))
    assert v.reason == ("error 0.170 on the test rows is not below the majority rule's 0.171 "
                        "beyond noise (sign test p = 0.5 on 99 discordant rows)")


def test_job_columns_are_nan_without_test_rows():
    columns, verdict = trivial.job_metrics(np.array([0, 1, 1]), np.array([]), np.array([]))
    assert verdict is None and all(np.isnan(v) for v in columns.values())
    columns, verdict = trivial.job_metrics(np.array([0, 1, 1]), np.array([0, 0]),
                                           np.array([1, 1]))
    assert columns == {"test_trivial_error": 1.0, "degenerate": 1.0} and verdict.degenerate

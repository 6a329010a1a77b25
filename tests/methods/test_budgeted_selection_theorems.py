"""budgeted_selection against the paper's Theorem 2 (the averaged function f̄_T), Proposition
1 (the regret) and the remark after Theorem 3 (the coarse grid over augmented terms)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from safeclf.datasets.nested import load_nested
from safeclf.methods.selection import BudgetedSelection, plugin
from safeclf.methods.selection.penalty import coarse_grid, covers, remark_terms
from safeclf.methods.selection.procedures import regret
from safeclf.methods.selection.wrappers import AveragedRounds

SGD = {"method": "sgd", "params": {"loss": "log_loss", "average": True}}


@pytest.fixture(scope="module")
def nested():
    ds = load_nested(n_samples=9000, decay=1.0, noise=1.5, random_state=5)
    return ds.X[:6000], ds.y[:6000], ds.X[6000:], ds.y[6000:]


class _Task:
    def __init__(self, X, y):
        self.test = type("P", (), {"X": X, "y": y})()


def test_average_output_is_the_mean_of_the_round_functions(nested):
    X, y, Xt, yt = nested
    common = dict(classes=[{**SGD, "features": [2, 6, 12]}], budget=12, quantum=40,
                  random_state=0)
    most = BudgetedSelection(**common).fit(X, y, X_hindsight=Xt, y_hindsight=yt)
    avg = BudgetedSelection(output="average", **common).fit(X, y, X_hindsight=Xt,
                                                            y_hindsight=yt)
    # the same rounds (the output does not change the allocation) ...
    assert np.array_equal(most.path_, avg.path_)
    model = avg.model_
    assert isinstance(model, AveragedRounds) and len(model.rounds) == 12
    assert [avg.model_classes_.index(c) for c, _ in model.rounds] == avg.path_.tolist()
    # ... and f̄_T is their average: the class of round t, with its columns
    p = np.mean([m.predict_proba(X[:, : c.features] if c.features else X)
                 for c, m in model.rounds], axis=0)
    assert np.allclose(avg.predict_proba(X[:50]), p[:50])
    assert np.array_equal(avg.predict(X[:50]), avg.classes_[np.argmax(p[:50], axis=1)])
    # the last round's function of the most often selected class is what "most_selected"
    # returns; the average differs from it (earlier rounds, other classes)
    assert not np.allclose(most.predict_proba(X[:50]), p[:50])


def test_average_output_needs_the_bandit():
    with pytest.raises(ValueError, match="needs procedure 'bandit'"):
        BudgetedSelection(classes=[{**SGD, "features": [1, 2]}], procedure="uniform",
                          output="average", budget=4).fit(np.zeros((20, 2)), np.arange(20) % 2)


def test_promise_text_names_theorem_1_for_the_most_selected_class(nested):
    X, y, Xt, yt = nested
    common = dict(classes=[{**SGD, "features": [2, 12]}], budget=4, quantum=40, random_state=0)
    for output, theorem, other in (("most_selected", "Theorem 1", "Theorem 2 ("),
                                   ("average", "Theorem 2 (f̄_T", "Theorem 1")):
        est = BudgetedSelection(output=output, **common).fit(X, y)
        text = plugin.promises(est, None)[0].statement
        assert theorem in text and other not in text, text


def test_regret_is_the_share_weighted_gap():
    pen = np.array([0.30, 0.20, 0.25])
    assert regret([0, 10, 0], pen) == 0.0                      # all on the best class
    assert regret([1, 1, 1], pen) == pytest.approx((0.10 + 0.05) / 3)   # uniform: mean Δ_i
    assert regret([2, 6, 2], pen) == pytest.approx(0.2 * 0.10 + 0.2 * 0.05)


def test_regret_reported_for_bandit_uniform_and_oracle(nested):
    X, y, Xt, yt = nested
    common = dict(classes=[{**SGD, "features": [1, 2, 4, 12]}], budget=40, quantum=40,
                  random_state=0)
    got = {}
    for proc in ("bandit", "uniform", "oracle"):
        est = BudgetedSelection(procedure=proc, **common).fit(X, y, X_hindsight=Xt,
                                                               y_hindsight=yt)
        rep = plugin.report(est, _Task(Xt, yt))
        pen = np.asarray(est.hindsight_penalized_risk_)
        share = est.allocation_ / est.allocation_.sum()
        assert rep.metrics["regret"] == pytest.approx(float(share @ (pen - pen.min())))
        got[proc] = rep.metrics["regret"]
    assert got["oracle"] == 0.0
    assert got["uniform"] == pytest.approx(np.mean(pen - pen.min()))
    assert got["bandit"] < got["uniform"]  # Proposition 1: the adaptive allocation pays less


def test_covers_agrees_with_the_definition():
    rng = np.random.default_rng(0)
    for _ in range(30):
        K = int(rng.integers(1, 7))
        g = np.cumsum(rng.uniform(0.01, 1.0, K))
        lam = float(rng.uniform(0.1, 2.0))
        for r in range(1, K + 1):
            for S in itertools.combinations(range(K), r):
                by_hand = all(any(j >= i and g[i] <= g[j] <= (1 + lam) * g[i] for j in S)
                              for i in range(K))
                assert covers(list(S), lambda i, s, g=g: g[i], K, lam) == by_hand


def test_remark_terms_add_the_log_i_term_and_the_grid_covers_them():
    per_q, T = np.array([400, 200, 100, 50]), 30
    pen = lambda i, s: math.sqrt((i + 1) / (T * per_q[i] / s))  # noqa: E731
    terms = remark_terms(pen, per_q, T)
    assert terms(0, 2) == pen(0, 2)                             # log 1 = 0
    assert terms(3, 2) == pytest.approx(pen(3, 2) + math.sqrt(math.log(4) / (2 * T * 50)))
    S = coarse_grid(terms, 4, 1.0)
    assert covers(S, terms, 4, 1.0)
    # a grid built on the plain penalties need not cover the augmented terms: the flag says so
    plain = coarse_grid(pen, 4, 0.05)
    assert covers(plain, pen, 4, 0.05)
    assert covers(plain, terms, 4, 0.05) == all(
        any(j >= i and terms(i, len(plain)) <= terms(j, len(plain))
            <= 1.05 * terms(i, len(plain)) + 1e-15 for j in plain) for i in range(4))


def test_remark_metrics_reported(nested):
    X, y, Xt, yt = nested
    est = BudgetedSelection(classes=[{**SGD, "features": list(range(1, 17))}],
                            procedure="coarse_grid", budget=40, quantum=40, oracle=False,
                            random_state=0).fit(X, y)
    rep = plugin.report(est, _Task(Xt, yt))
    assert rep.metrics["coarse_grid_remark"] in (0.0, 1.0)
    assert rep.metrics["coarse_grid_remark"] == float(est.grid_remark_)
    assert 1 <= rep.metrics["coarse_grid_remark_size"] <= 16

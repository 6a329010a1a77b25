"""The one resolver of privileged / protected groups (safeclf.guarantees.groups) and its users."""

import numpy as np
import pytest

from safeclf.errors import DataError
from safeclf.guarantees import groups as G


def test_resolution_order_and_contradiction():
    g = np.array(["a", "a", "b", "b"])
    pos = np.array([1, 0, 1, 1], bool)
    assert G.resolve("a", {"privileged_group": "a"}) == G.Direction("a", "constraint")
    assert G.resolve(None, {"privileged_group": "a"}, g, pos) == G.Direction("a", "dataset")
    fb = G.resolve(None, {}, g, pos)  # no dataset-level reference: chosen on these rows
    assert fb.privileged == "b" and fb.source == G.FALLBACK_ROWS  # b's most often positive
    # the reference chosen once on all the dataset's rows wins over these rows' own choice
    info = {G.REFERENCES: {"groups": {"group": "a", "source": G.FALLBACK}}}
    assert G.resolve(None, info, g, pos) == G.Direction("a", G.FALLBACK)
    # ... and is passed to a model as a Reference, which a constraint may overrule
    ref = G.privileged_of(info)
    assert ref == "a" and ref.source == G.FALLBACK
    assert G.resolve(None, {"privileged_group": ref}, g, pos) == G.Direction("a", G.FALLBACK)
    assert G.resolve("b", {"privileged_group": ref}, g, pos) == G.Direction("b", "constraint")
    assert not G.resolve(None, None).named
    with pytest.raises(DataError, match="constraints\\[0\\].privileged 'b' contradicts"):
        G.resolve("b", {"privileged_group": "a"}, where="constraints[0].privileged")


def test_ratio_is_protected_over_privileged_and_minmax_without_direction():
    g = np.array(["M"] * 4 + ["F"] * 4)
    pred = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    assert G.ratio(pred, g, G.Direction("M", "dataset")) == pytest.approx(0.25 / 0.5)
    assert G.ratio(pred, g, G.Direction("F", "dataset")) == pytest.approx(0.5 / 0.25)
    undirected = G.Direction(None, "none")
    assert G.ratio(pred, g, undirected) == pytest.approx(0.5)
    assert undirected.ratio_name() == G.UNDIRECTED
    assert G.counts(pred, g, "M") == (1, 4, 2, 4)
    # restricted to positives (equal opportunity)
    y = np.array([1, 1, 1, 0, 1, 1, 0, 0], bool)
    assert G.counts(pred, g, "M", base=y) == (1, 2, 2, 3)


def _fair_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(n) < 0.5, "M", "F")
    X = rng.normal(size=(n, 3)) + (g == "M")[:, None] * 0.8
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.4).astype(int)
    return X, y, g


def test_ramp_uses_the_dataset_direction_and_keeps_it_on_test_data():
    from safeclf.data.task import Part, Task
    from safeclf.methods.ramp import RampClassifier, plugin

    X, y, g = _fair_data()
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.8}])
    # the dataset names F (the group with fewer positive labels) as privileged: the constraint
    # that names none must take it rather than the fallback M
    task = Task("toy", Part(X, y, {"groups": g}), Part(X[:200], y[:200], {"groups": g[:200]}),
                info={"privileged_group": "F"})
    est = plugin.fit(est, task) or est
    row = est.constraint_values_[0]
    assert (row["privileged"], row["privileged_source"]) == ("F", "dataset")
    # training value: s_p(M)/s_p(F) ≥ 0.8 (randomised rule), the direction the metric uses too
    p = est.randomized_proba(X)
    assert row["train_randomized"] == pytest.approx(p[g == "M"].mean() / p[g == "F"].mean())
    rep = plugin.report(est, task)
    assert rep.metrics["train_randomized_fairness_ratio"] == pytest.approx(row["train_randomized"])
    # on a test part where the fallback would pick the other group, the direction stays F
    flip = np.where(g[:200] == "M", 0, 1)
    vals = est.rate_values(X[:200], flip, {"groups": g[:200]}, randomized=True)
    assert vals["fairness_ratio"] == pytest.approx(
        p[:200][g[:200] == "M"].mean() / p[:200][g[:200] == "F"].mean())


def test_ramp_constraint_contradicting_the_dataset_is_an_error():
    from safeclf.methods.ramp import RampClassifier

    X, y, g = _fair_data(200)
    est = RampClassifier(constraints=[{"rate": "fairness_ratio", "kappa": 0.8,
                                       "privileged": "M"}])
    with pytest.raises(DataError, match="contradicts the dataset's privileged group 'F'"):
        est.fit(X, y, groups=g, privileged_group="F")


def test_zafar_takes_the_dataset_direction():
    from safeclf.methods.ramp.zafar import ZafarSVM

    X, y, g = _fair_data(300)
    z = ZafarSVM(c=0.1).fit(X, y, groups=g, privileged_group="F")
    assert (z.privileged_, z.privileged_source_) == ("F", "dataset")
    z = ZafarSVM(c=0.1).fit(X, y, groups=g)
    assert (z.privileged_, z.privileged_source_) == ("M", G.FALLBACK_ROWS)

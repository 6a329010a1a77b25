"""Guarantees that survive the scikit-learn toolbox (issue 11, item 6): calibration data through
a Pipeline's transforms, and fit-time rows (groups, ...) through metadata routing."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from group_data import two_groups
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from safeclf.errors import DataError
from safeclf.methods.mcsvm import MultiCostSVM
from safeclf.methods.ramp import RampClassifier
from safeclf.methods.ramp.zafar import ZafarSVM
from safeclf.pipeline import CalibratedPipeline, make_calibrated_pipeline


def raw_units(n, seed):
    """Two classes in raw units far from standardised (means ~800 and −300, sds 50 and 200)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    Z = rng.normal(size=(n, 2)) + np.where(y[:, None] == 1, 1.2, -1.2)
    return Z * [50.0, 200.0] + [800.0, -300.0], y


def fpr(est, X, y):
    """Share of unsafe points (label 0) predicted safe (label 1)."""
    return float(np.mean(est.predict(X[y == 0]) == 1))


@pytest.mark.parametrize("calibration", ["conformal", "probabilistic_scaling"])
def test_mcsvm_calibration_in_a_pipeline_matches_the_scaled_by_hand_fit(calibration):
    X, y = raw_units(600, 0)
    Xc, yc = raw_units(400, 1)
    Xt, yt = raw_units(2000, 2)
    params = dict(calibration=calibration, epsilon=0.05, n_tau=3)
    scaler = StandardScaler().fit(X)
    by_hand = MultiCostSVM(**params).fit(scaler.transform(X), y, X_cal=scaler.transform(Xc),
                                         y_cal=yc)
    pipe = make_calibrated_pipeline(StandardScaler(), MultiCostSVM(**params))
    assert isinstance(pipe, CalibratedPipeline)
    pipe.fit(X, y, X_cal=Xc, y_cal=yc)
    est = pipe[-1]
    assert est.offset_ == pytest.approx(by_hand.offset_, rel=1e-9, abs=1e-12)
    assert est.n_cal_ == 400
    assert np.array_equal(pipe.predict(Xt), by_hand.predict(scaler.transform(Xt)))
    test_fpr = fpr(pipe, Xt, yt)
    assert test_fpr == fpr(by_hand, scaler.transform(Xt), yt)
    assert test_fpr < 0.15  # the calibrated rate, not the 1.0 of raw X_cal


def test_mcsvm_refuses_untransformed_calibration_data_in_a_plain_pipeline():
    X, y = raw_units(300, 0)
    Xc, yc = raw_units(200, 1)
    pipe = make_pipeline(StandardScaler(), MultiCostSVM(calibration="conformal", n_tau=3))
    with pytest.raises(DataError, match="not in X's feature space.*make_calibrated_pipeline"):
        pipe.fit(X, y, multicostsvm__X_cal=Xc, multicostsvm__y_cal=yc)
    # the same through metadata routing, which routes X_cal but does not transform it
    with sklearn.config_context(enable_metadata_routing=True):
        est = MultiCostSVM(calibration="conformal", n_tau=3).set_fit_request(X_cal=True,
                                                                              y_cal=True)
        with pytest.raises(DataError, match="not in X's feature space"):
            make_pipeline(StandardScaler(), est).fit(X, y, X_cal=Xc, y_cal=yc)
    # data already in one space is accepted, a random split included
    MultiCostSVM(calibration="conformal", n_tau=3).fit(X, y, X_cal=Xc, y_cal=yc)


def test_calibrated_pipeline_refuses_step_parameters():
    X, y = raw_units(100, 0)
    pipe = make_calibrated_pipeline(StandardScaler(), MultiCostSVM(n_tau=1))
    with pytest.raises(TypeError, match="last step only"):
        pipe.fit(X, y, standardscaler__sample_weight=np.ones(100))


# -- fit-time rows through metadata routing -----------------------------------------------------
def groups_data(n=240, seed=0):
    """Group B has more positives and is easier to call positive."""
    return two_groups(n, seed, names=("B", "A"), rates=(0.6, 0.3))


class Recorder(RampClassifier):
    """RampClassifier that keeps the groups each fit received (a fold's rows, or none)."""

    seen: list = []

    def fit(self, X, y, groups=None, role=None, baseline=None, privileged_group=None, **rows):
        Recorder.seen.append(None if groups is None else np.asarray(groups).copy())
        return super().fit(X, y, groups=groups, role=role, baseline=baseline,
                           privileged_group=privileged_group, **rows)


FAIR = [{"rate": "fairness_ratio", "kappa": 0.8, "privileged": "B"}]


def test_grid_search_over_ramp_routes_groups_to_every_fit():
    X, y, g = groups_data()
    Recorder.seen = []
    grid = {"lam": [0.01, 0.1]}
    # without routing, groups= goes to the splitter only and every fit refuses, one line
    with pytest.raises(ValueError, match="need rows 'groups'.*enable_metadata_routing"):
        GridSearchCV(Recorder(constraints=FAIR, max_mm_iter=3), grid, cv=KFold(3),
                     error_score="raise").fit(X, y, groups=g)
    Recorder.seen = []
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(Recorder(constraints=FAIR, max_mm_iter=3), grid, cv=KFold(3),
                              error_score="raise").fit(X, y, groups=g)
    assert search.best_params_["lam"] in grid["lam"]
    # 2 values x 3 folds + the refit, each with the groups of exactly its own rows
    assert len(Recorder.seen) == 7 and all(s is not None for s in Recorder.seen)
    folds = [test for _, test in KFold(3).split(X)]
    for k, test in enumerate(folds):
        train = np.setdiff1d(np.arange(len(y)), test)
        assert any(np.array_equal(s, g[train]) for s in Recorder.seen[:6]), k
    assert np.array_equal(Recorder.seen[-1], g)
    # the refit model meets (randomised) its training constraint: ratio protected / privileged
    assert search.best_estimator_.constraint_values_[0]["train_randomized"] >= 0.8 - 0.02


def test_cross_val_score_routes_groups_to_ramp_zafar_and_a_group_splitter():
    X, y, g = groups_data()
    with sklearn.config_context(enable_metadata_routing=True):
        for est in (RampClassifier(constraints=FAIR, max_mm_iter=3),
                    ZafarSVM(c=0.05, privileged="B")):
            scores = cross_val_score(est, X, y, cv=KFold(3), params={"groups": g})
            assert scores.shape == (3,) and np.all(scores > 0.5)
        # a group splitter wants its own groups (clusters kept out of each other's folds):
        # an alias routes the sensitive groups to the estimator under another name
        clusters = np.arange(len(y)) % 6
        est = ZafarSVM(c=0.05, privileged="B").set_fit_request(groups="sensitive")
        scores = cross_val_score(est, X, y, cv=GroupKFold(3),
                                 params={"groups": clusters, "sensitive": g})
        assert scores.shape == (3,) and np.all(scores > 0.5)


def test_fairlearn_eg_takes_groups_through_routing():
    """With the bench extra, FairlearnEG takes its groups through metadata routing; without
    it (a default install), fitting it names the extra to install instead of failing deep."""
    import importlib.util

    from safeclf.methods.ramp.fairlearn_eg import FairlearnEG

    X, y, g = groups_data()
    if importlib.util.find_spec("fairlearn") is None:
        with pytest.raises(Exception, match="fairlearn") as err:
            FairlearnEG(max_iter=5).fit(X, y, groups=g)
        assert "\n" not in str(err.value)
        return
    with pytest.raises(ValueError, match="needs groups.*enable_metadata_routing"):
        cross_val_score(FairlearnEG(max_iter=5), X, y, cv=KFold(2), error_score="raise")
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(FairlearnEG(max_iter=5), X, y, cv=KFold(2),
                                 params={"groups": g})
    assert scores.shape == (2,) and np.all(scores > 0.5)

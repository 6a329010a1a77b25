"""Guarantees that survive the scikit-learn toolbox (issue 11, item 6): calibration data through
a Pipeline's transforms, and fit-time rows (groups, ...) through metadata routing."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from safeclf.errors import DataError
from safeclf.methods.mcsvm import MultiCostSVM
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

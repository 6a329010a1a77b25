"""Reference baseline: fairlearn's ExponentiatedGradient reduction with DemographicParity
(Agarwal et al. 2018) around logistic regression; needs the ``bench`` extra (fairlearn)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from safeclf.errors import SpecError
from safeclf.routing import ROUTING_HINT, requested
from safeclf.solver_status import iteration_status, settle


def _fairlearn():
    try:
        from fairlearn.reductions import (
            DemographicParity,
            EqualizedOdds,
            ExponentiatedGradient,
            TruePositiveRateParity,
        )
    except ImportError:
        raise SpecError("method fairlearn_eg needs the fairlearn package: install the bench "
                        "extra (pip install 'safeclf[bench]')") from None
    return ExponentiatedGradient, {"demographic_parity": DemographicParity,
                                   "equal_opportunity": TruePositiveRateParity,
                                   "equalized_odds": EqualizedOdds}


class FairlearnEG(ClassifierMixin, BaseEstimator):
    """ExponentiatedGradient(LogisticRegression(C), <constraint>(difference_bound=eps)), or
    ``<constraint>(ratio_bound=ratio_bound)`` when ``ratio_bound`` is given (fairlearn: every
    group's rate within a factor r of the overall rate, both ways, so s_p(protected) /
    s_p(privileged) ≥ r² on the training data: the training-only promise it declares).

    ``predict`` is fairlearn's randomized rule (drawn with ``random_state``);
    ``predict_proba`` its mixture probabilities."""

    _parameter_constraints = {
        "eps": [Interval(Real, 0, None, closed="neither")],
        "constraint": [StrOptions({"demographic_parity", "equal_opportunity", "equalized_odds"})],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "ratio_bound": [Interval(Real, 0, 1, closed="right"), None],
        "random_state": ["random_state"],
    }

    __metadata_request__fit = requested("groups")

    def __init__(self, eps=0.01, constraint="demographic_parity", C=1.0, max_iter=50,
                 ratio_bound=None, random_state=None):
        self.eps = eps
        self.ratio_bound = ratio_bound
        self.constraint = constraint
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        _fairlearn()

    def fit(self, X, y, groups=None):
        from sklearn.linear_model import LogisticRegression

        self._validate_params()
        EG, moments = _fairlearn()
        if groups is None:
            raise ValueError(f"FairlearnEG needs groups: {ROUTING_HINT}")
        self.model_ = EG(LogisticRegression(C=self.C, max_iter=1000),
                         constraints=moments[self.constraint](
                             **({"ratio_bound": self.ratio_bound} if self.ratio_bound
                                else {"difference_bound": self.eps})),
                         max_iter=self.max_iter)
        self.model_.fit(X, y, sensitive_features=np.asarray(groups))
        self.n_iter_ = int(self.model_.last_iter_) + 1  # EG's iterations are counted from 0
        # EG stops early once its gap is within its tolerance, else after max_iter
        self.solver_status_ = str(settle(iteration_status(self.n_iter_ < self.max_iter),
                                         "fairlearn_eg", detail=f"reached max_iter={self.max_iter}"))
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        check_is_fitted(self)
        return self.model_._pmf_predict(X)

    def predict(self, X):
        check_is_fitted(self)
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        return self.model_.predict(X, random_state=seed)

"""Reference baseline: fairlearn's ExponentiatedGradient reduction with DemographicParity
(Agarwal et al. 2018) around logistic regression; needs the ``bench`` extra (fairlearn)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from safeclf._utils.routing import ROUTING_HINT, requested
from safeclf.errors import SpecError
from safeclf.methods._solvers.status import iteration_status, settle


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
    ``predict_proba`` its mixture probabilities. The fitted rule is kept as what those two
    need, the logistic regressions fairlearn mixes (``predictors_``) and their weights
    (``weights_``), not fairlearn's own object, whose pandas internals a saved model (skops)
    cannot hold.

    Examples
    --------
    fairlearn is not a dependency of safeclf (the ``bench`` extra installs it), so this example is
    not run by the test suite:

    >>> import numpy as np
    >>> from safeclf.estimators import FairlearnEG
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.choice(["A", "B"], size=300)
    >>> y = (rng.random(300) < np.where(groups == "B", 0.6, 0.3)).astype(int)
    >>> X = rng.normal(size=(300, 2)) + np.c_[1.2 * (2 * y - 1), 0.8 * (groups == "B")]
    >>> model = FairlearnEG(eps=0.05, random_state=0)
    >>> model.fit(X, y, groups=groups).predict(X[:5])  # doctest: +SKIP
    array([1, 1, 1, 0, 1])
    """

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
        model = EG(LogisticRegression(C=self.C, max_iter=1000),
                   constraints=moments[self.constraint](
                       **({"ratio_bound": self.ratio_bound} if self.ratio_bound
                          else {"difference_bound": self.eps})),
                   max_iter=self.max_iter)
        model.fit(X, y, sensitive_features=np.asarray(groups))
        weights = np.asarray(model.weights_, dtype=float)
        used = np.flatnonzero(weights > 0)  # fairlearn predicts 0 for a predictor of weight 0
        self.predictors_ = [model.predictors_.iloc[t] for t in used]
        self.weights_ = weights[used]
        self.n_iter_ = int(model.last_iter_) + 1  # EG's iterations are counted from 0
        # EG stops early once its gap is within its tolerance, else after max_iter
        self.solver_status_ = str(settle(iteration_status(self.n_iter_ < self.max_iter),
                                         "fairlearn_eg", detail=f"reached max_iter={self.max_iter}"))
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        """P(ŷ = 1 | x) of the mixture: Σ_h weight_h · h(x) (fairlearn's ``_pmf_predict``)."""
        check_is_fitted(self)
        positive = np.zeros(len(X))
        for weight, predictor in zip(self.weights_, self.predictors_):
            positive += weight * predictor.predict(X)
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X):
        """One draw of the mixture per row, as fairlearn's ``predict``."""
        seed = self.random_state if isinstance(self.random_state, Integral) else 0
        positive = self.predict_proba(X)[:, 1]
        return (positive >= check_random_state(seed).rand(positive.size)) * 1

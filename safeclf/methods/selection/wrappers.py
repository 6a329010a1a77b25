"""Small estimators: a feature-prefix classifier and "class i of a hierarchy" for halving."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted


class FeaturePrefix(ClassifierMixin, BaseEstimator):
    """``estimator`` trained on the first ``n_features`` columns of X (all when None): the
    class "logistic regression on the first d_i features"."""

    def __init__(self, estimator=None, n_features=None):
        self.estimator = estimator
        self.n_features = n_features

    def _cols(self, X):
        return X if self.n_features is None else X[:, : self.n_features]

    def fit(self, X, y, **kw):
        self.estimator_ = clone(self.estimator).fit(self._cols(X), y, **kw)
        self.classes_ = self.estimator_.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.estimator_.predict(self._cols(X))


class ClassChoice(ClassifierMixin, BaseEstimator):
    """Class ``index`` of a resolved hierarchy ``classes`` (a list of
    :class:`~safeclf.methods.selection.classes.ModelClass`), fitted from scratch: the
    candidate that scikit-learn's HalvingGridSearchCV searches over."""

    def __init__(self, classes=None, index=0, random_state=None):
        self.classes = classes
        self.index = index
        self.random_state = random_state

    def fit(self, X, y):
        """Train as the other procedures do: one ``partial_fit`` pass for an incremental class
        (so m samples cost m/n_i quanta), a plain fit otherwise."""
        cls = self.classes[self.index]
        self.model_ = cls.build(self.random_state)
        if cls.incremental == "partial_fit":
            self.model_.partial_fit(cls.columns(X), y, classes=np.unique(y))
        else:
            self.model_.fit(cls.columns(X), y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.model_.predict(self.classes[self.index].columns(X))

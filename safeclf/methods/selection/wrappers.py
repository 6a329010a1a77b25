"""Small estimators: a feature-prefix classifier, "class i of a hierarchy" for halving, and
Theorem 2's averaged function f̄_T."""

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


class AveragedRounds(ClassifierMixin, BaseEstimator):
    """Theorem 2's f̄_T = (1/T) Σ_t f_t: the average of the functions Algorithm 1 holds after
    each round t = 1..T (f_t the model of the class queried at round t, on that class's
    columns). Averaged are the class probabilities (``predict_proba``) when every round model
    has them, else the binary decision functions; ``predict`` takes the largest average
    probability (the sign of the average score). Built by the estimator, not by users.

    Parameters
    ----------
    rounds : list of (ModelClass, fitted model)
        One entry per round, in order.
    classes : ndarray
        The labels, in the order the round models' ``classes_`` use.
    """

    def __init__(self, rounds=None, classes=None):
        self.rounds = rounds
        self.classes = classes

    @property
    def classes_(self):
        return np.asarray(self.classes)

    def _uses_proba(self):
        return all(hasattr(m, "predict_proba") for _, m in self.rounds)

    def predict_proba(self, X):
        if not self._uses_proba():
            raise AttributeError("a round model has no predict_proba")
        return np.mean([m.predict_proba(cls.columns(X)) for cls, m in self.rounds], axis=0)

    def decision_function(self, X):
        return np.mean([m.decision_function(cls.columns(X)) for cls, m in self.rounds], axis=0)

    def predict(self, X):
        if self._uses_proba():
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

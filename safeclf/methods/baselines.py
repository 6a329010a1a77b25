"""Baseline plugins: ``svm`` (LinearSVC, or SVC for a non-linear kernel), ``logreg``, and
``sgd`` (a linear model trained by stochastic gradient descent, with ``partial_fit``)."""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.svm import SVC, LinearSVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from safeclf.methods._solvers.status import of_estimator
from safeclf.plugins.contract import MethodPlugin


class SVMClassifier(ClassifierMixin, BaseEstimator):
    """Soft-margin SVM: ``LinearSVC`` for ``kernel="linear"``, ``SVC`` otherwise.

    Parameters
    ----------
    C : float > 0, default 1.0
        Inverse regularisation strength, as in scikit-learn.
    kernel : {"linear", "rbf", "poly", "sigmoid"}, default "linear"
        ``"linear"`` fits ``LinearSVC``; the others ``SVC`` with that kernel.
    gamma, degree, coef0
        The kernel's parameters, as in ``SVC``.
    class_weight : dict, "balanced" or None
        As in scikit-learn.
    max_iter : int, default 10000
        Iteration limit of the solver.
    random_state : int or None
        Seeds ``LinearSVC``'s coordinate descent.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from safeclf.estimators import SVMClassifier
    >>> X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    >>> SVMClassifier(C=1.0, random_state=0).fit(X, y).predict(X[:5])
    array([1, 1, 0, 0, 0])
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"linear", "rbf", "poly", "sigmoid"})],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Real],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0,
                 class_weight=None, max_iter=10000, random_state=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        if self.kernel == "linear":
            model = LinearSVC(C=self.C, class_weight=self.class_weight, max_iter=self.max_iter,
                              random_state=self.random_state)
        else:
            model = SVC(C=self.C, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                        coef0=self.coef0, class_weight=self.class_weight,
                        random_state=self.random_state)
        self.model_ = model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        self.n_features_in_ = self.model_.n_features_in_
        self.n_iter_ = self.model_.n_iter_
        self.solver_status_ = of_estimator(self.model_)[0]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def decision_function(self, X):
        check_is_fitted(self)
        return self.model_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self)
        return self.model_.predict(X)


svm = MethodPlugin(
    name="svm",
    estimator=SVMClassifier,
    summary="soft-margin SVM baseline (LinearSVC, or SVC with a kernel)",
)

logreg = MethodPlugin(
    name="logreg",
    estimator=LogisticRegression,
    summary="logistic regression baseline (scikit-learn LogisticRegression)",
)

sgd = MethodPlugin(
    name="sgd",
    estimator=SGDClassifier,
    summary="linear model trained by SGD (scikit-learn SGDClassifier; incremental via partial_fit)",
)

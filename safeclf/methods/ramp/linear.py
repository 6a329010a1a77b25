"""What the ramp family's linear models share: two classes in, f(x) = ⟨w, x⟩ + b out."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data


class LinearBinaryClassifier(ClassifierMixin, BaseEstimator):
    """Base of RampClassifier, ZafarSVM and ThresholdedSVM: validation of a two-class problem
    (dense or CSR X), and the linear score with learned ``coef_`` (d,) and ``intercept_``."""

    def _check_binary(self, X, y):
        """Validated ``X`` (float64, dense or CSR) and ``y``; sets ``classes_`` (two labels,
        the positive class last)."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target "
                             f"is {y_type}.")
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y has only one class ({self.classes_[0]!r}); a binary "
                             "classifier needs two classes")
        return X, y

    def decision_function(self, X):
        """f(x) = ⟨w, x⟩ + b, shape (n,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def predict(self, X):
        """The positive class where f(x) > 0."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

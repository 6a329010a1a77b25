"""The churn study's baseline (Goh et al. 2016, Section 4.2 and Figure 3): an unconstrained
SVM trained on the labeled rows, then thresholded — its bias shifted — so that its recall on
a subset reaches a target (the deployed model's recall on D2), making no effort on churn."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import Interval

from safeclf.errors import DataError
from safeclf.guarantees.rate_items import parse_constraints, parse_monitors
from safeclf.guarantees.rates import FitData
from safeclf.methods._solvers.status import iteration_status
from safeclf.methods.ramp.linear import LinearBinaryClassifier


class ThresholdedSVM(LinearBinaryClassifier):
    """LinearSVC (hinge, C) on the rows selected by ``train_subset``, then the bias is shifted
    so that the recall on ``recall_subset`` is ``recall_min`` (a number or ``baseline``: the
    deployed model's recall there, rows ``baseline``): the two are compared at equal recall.

    Parameters
    ----------
    C : float > 0, default 1.0
        The SVM's C.
    train_subset : mapping or None
        The rows trained on (a subset in the ramp vocabulary; None: all).
    recall_subset : mapping or None
        The rows the recall is reached on.
    recall_min : float or "baseline", default "baseline"
        The recall to reach; ``"baseline"``: the deployed model's recall there (rows
        ``baseline``).
    report : list of mappings or None
        Constraints in the ramp vocabulary, evaluated for the report only, under the ramp
        method's metric names.
    monitor : list of mappings or None
        Rates evaluated for the report only.
    random_state : int or None
        Seeds ``LinearSVC``.

    Examples
    --------
    A recall of 0.9 on the positive rows whose ``role`` is ``d2`` (any row entry passed to
    ``fit`` can name a subset):

    >>> import numpy as np
    >>> from safeclf.estimators import ThresholdedSVM
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random(400) < 0.3).astype(int)
    >>> X = rng.normal(size=(400, 3)) + np.c_[y, np.zeros((400, 2))]
    >>> role = rng.choice(["d1", "d2"], size=400)
    >>> model = ThresholdedSVM(recall_subset={"role": "d2"}, recall_min=0.9, random_state=0)
    >>> model.fit(X, y, role=role).predict(X[:5])
    array([0, 1, 1, 1, 0])
    >>> round(float(model.predict(X[(role == "d2") & (y == 1)]).mean()), 3)
    0.905
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "train_subset": [dict, None],
        "recall_subset": [dict, None],
        "recall_min": [Interval(Real, 0, 1, closed="both"), str, None],
        "report": [list, None],
        "monitor": [list, None],
        "random_state": ["random_state"],
    }

    def __init__(self, C=1.0, train_subset=None, recall_subset=None, recall_min="baseline",
                 report=None, monitor=None, random_state=None):
        self.C = C
        self.train_subset = train_subset
        self.recall_subset = recall_subset
        self.recall_min = recall_min
        self.report = report
        self.monitor = monitor
        self.random_state = random_state

    def _parsed(self):
        """The recall constraint, reported constraints and monitors; a ``ValueError`` naming
        the parameter's path."""
        rec = [] if self.recall_min is None else parse_constraints(
            [{"rate": "recall", "min": self.recall_min,
              **({"subset": self.recall_subset} if self.recall_subset else {})}],
            where="recall_min")
        return rec, parse_constraints(self.report, where="report"), parse_monitors(self.monitor)

    def _validate_params(self):
        super()._validate_params()
        self._parsed()

    def rows_needed(self):
        rec, _, _ = self._parsed()
        need = set(self.train_subset or {})
        return need.union(*(c.rows_needed() for c in rec))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, **rows):
        if "sample_weight" in rows:
            raise TypeError("ThresholdedSVM.fit does not take sample_weight")
        self._validate_params()
        X, y = self._check_binary(X, y)
        data = FitData(y == self.classes_[1], rows)
        try:
            train = data.mask(self.train_subset, "train_subset")
        except ValueError as exc:
            raise DataError(f"thresholded_svm: {exc}") from None
        self.svm_ = LinearSVC(C=self.C, random_state=self.random_state).fit(X[train], y[train])
        self.coef_ = self.svm_.coef_.ravel()
        self.n_iter_ = int(self.svm_.n_iter_)  # LinearSVC warns itself when it stops short
        self.solver_status_ = str(iteration_status(self.n_iter_ < self.svm_.max_iter))
        b = float(self.svm_.intercept_[0])
        rec, _, _ = self._parsed()
        if rec:
            c = rec[0]
            target = c.target(data)
            on = data.mask(c.rate.subset, "recall_subset") & data.positive
            scores = np.sort(np.asarray(X[on] @ self.coef_).ravel())[::-1]
            k = int(np.ceil(target * scores.size - 1e-9))
            if k > 0:  # shift the bias so that exactly the k largest positive scores are > 0
                b = -scores[k - 1] + 1e-9
            self.recall_target_ = target
        self.intercept_ = b
        return self

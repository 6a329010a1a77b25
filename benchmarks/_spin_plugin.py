"""A method plugin for ``benchmarks/runner_overhead.py`` only: its fit is a fixed pure-Python
loop (no BLAS call, no numpy work to speak of), so that the runner's parallel efficiency can be
measured on jobs whose speed does not depend on a BLAS thread setting (issue 37, item 5).

The benchmark registers it for its own process and workers through a ``dist-info`` folder in
a temporary directory (as a third-party package would); it is not an entry point of safeclf.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval

from safeclf.plugins.contract import MethodPlugin


def spin(n: int) -> int:
    """``n`` steps of integer arithmetic in the interpreter."""
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


class SpinClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the majority class after spinning ``iterations`` loop steps in ``fit``.

    Parameters
    ----------
    iterations : int >= 0
        Steps of :func:`spin` per fit (the benchmark sets them so that a fit lasts as long as
        its realistic job's).
    """

    _parameter_constraints = {"iterations": [Interval(Integral, 0, None, closed="left")]}

    def __init__(self, iterations=100_000):
        self.iterations = iterations

    def fit(self, X, y):
        self._validate_params()
        self.classes_, counts = np.unique(np.asarray(y), return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        self.spun_ = spin(self.iterations)
        self.solver_status_ = "optimal"
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


method = MethodPlugin(name="bench_spin", estimator=SpinClassifier,
                      summary="benchmark only: a fixed pure-Python loop, then the majority class")

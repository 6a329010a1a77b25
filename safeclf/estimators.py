"""Every method's scikit-learn estimator, importable from one place.

>>> from safeclf.estimators import RampClassifier, MultiCostSVM   # doctest: +SKIP

Each class follows scikit-learn's contract (parameters stored verbatim by the constructor,
``fit(X, y, **fit_params)``, learned attributes ending in ``_``, ``get_params`` /
``set_params``), so it works in a :class:`~sklearn.pipeline.Pipeline`,
:func:`~sklearn.model_selection.cross_val_score` or a grid search. Extra inputs (groups,
uncertainty, calibration rows) are keyword arguments of ``fit``, as fairlearn's
``sensitive_features``.

A class is imported on first use only (its solver stack can be heavy): ``import
safeclf.estimators`` costs nothing until a name is taken from it.
"""

from __future__ import annotations

import importlib

#: Public name -> module that defines it (the method family's package).
_WHERE = {
    # robust chance-constrained SOCP classifiers (Ben-Tal et al. 2011), plugin robust_socp
    "RobustSOCPClassifier": "safeclf.methods.robust_socp.estimator",
    # Multi Cost SVM with calibrated offset and ε-safe regions (Carlevaro et al. 2024), mcsvm
    "MultiCostSVM": "safeclf.methods.mcsvm.estimator",
    # ramp-loss classifier with dataset constraints (Goh et al. 2016), ramp, and its peers
    "RampClassifier": "safeclf.methods.ramp.estimator",
    "ThresholdedSVM": "safeclf.methods.ramp.thresholded",
    "ZafarSVM": "safeclf.methods.ramp.zafar",
    "GroupThresholds": "safeclf.methods.ramp.group_thresholds",
    "FairlearnEG": "safeclf.methods.ramp.fairlearn_eg",
    # prototype set classifier (Ruf), proset
    "ProsetClassifier": "safeclf.methods.proset.model",
    # model selection under a compute budget (Agarwal et al. 2011), budgeted_selection
    "BudgetedSelection": "safeclf.methods.selection.estimator",
    # baselines: svm (logreg and sgd are scikit-learn's own classes)
    "SVMClassifier": "safeclf.methods.baselines",
    # any scoring classifier's decision threshold certified on held-back rows (the post-hoc route)
    "CertifiedClassifier": "safeclf.guarantees.certify.threshold",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'safeclf.estimators' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

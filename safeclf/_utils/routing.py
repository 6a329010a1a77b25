"""Fit-time rows (``groups``, ...) through scikit-learn's metadata routing.

A fairness estimator needs per-row data beside X and y. scikit-learn's meta-estimators
(``GridSearchCV``, ``cross_val_score``, ``Pipeline``) pass such rows to ``fit``, split per fold,
only through metadata routing (``sklearn.set_config(enable_metadata_routing=True)``); without
it, ``GridSearchCV.fit(X, y, groups=g)`` gives ``groups`` to the CV splitter alone. The
estimators here declare those keywords in their ``fit`` signature (so ``set_fit_request``
exists for them) and request them by default (:func:`requested`), so with routing on they
reach every fit without a ``set_fit_request`` call; a missing row names this in its error.
"""

from __future__ import annotations

ROUTING_HINT = ("pass it to fit; under GridSearchCV or cross_val_score turn on scikit-learn "
                "metadata routing (sklearn.set_config(enable_metadata_routing=True)), without "
                "which groups= goes to the CV splitter only")


#: the per-row keywords ramp's fit names (others go to fit directly)
ROUTED_ROWS = ("groups", "role", "baseline")


def requested(*keys: str) -> dict[str, bool]:
    """The ``__metadata_request__fit`` of an estimator whose fit consumes ``keys``."""
    return {k: True for k in keys}

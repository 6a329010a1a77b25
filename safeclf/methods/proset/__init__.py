"""Prototype set classifier (Ruf), plugin ``proset``.

Modules: :mod:`.objective` (the batch likelihood, its gradient and the chunked kernel sums),
:mod:`.sampling` (candidate bins, Algorithm alg_bins, condition eq_min_cases_2), :mod:`.model`
(the estimator: greedy batch fit, clean-up, predict_proba, export, explain) and :mod:`.search`
(the report's two-stage hyperparameter selection).
"""

from safeclf.methods.proset.model import ProsetClassifier
from safeclf.methods.proset.plugin import plugin

__all__ = ["ProsetClassifier", "plugin"]

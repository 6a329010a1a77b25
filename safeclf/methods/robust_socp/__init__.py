"""Robust chance-constrained SOCP classifiers (Ben-Tal et al. 2011): Bernstein (MM-SBMV, …)
and Chebyshev (MM-MC) relaxations, plugin ``robust_socp``.

Modules: :mod:`.nu` (the ν function), :mod:`.formulations` (the problems as data),
:mod:`.cvxpy_model` (readable model), :mod:`.clarabel_path` (fast path), :mod:`.evaluation`
(uncertain test points, error measures, Monte-Carlo check), :mod:`.estimator` (the
scikit-learn estimator). The uncertainty model (partial information, normalisation, checks)
is :mod:`safeclf.data.uncertainty`, shared with the uncertain-data loaders.
"""

from safeclf.data.uncertainty import Uncertainty
from safeclf.methods.robust_socp.estimator import RobustSOCPClassifier
from safeclf.methods.robust_socp.formulations import FORMULATIONS
from safeclf.methods.robust_socp.nu import nu
from safeclf.methods.robust_socp.plugin import plugin

__all__ = ["FORMULATIONS", "RobustSOCPClassifier", "Uncertainty", "nu", "plugin"]

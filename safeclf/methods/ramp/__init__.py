"""The ``ramp`` method: ramp-loss linear classifiers with dataset constraints (Goh et al.,
NIPS 2016) — rate expressions (``rates``), majorization–minimization (``mm``), the
cutting-plane dual (``cutting_plane``), or with one constraint on large inputs the multiplier
solved with the SVM's duals (``joint``, ``joint_qp``), the inner weighted SVM (``svm``), the
estimator
(``estimator``), and the baselines of the paper's fairness study (``zafar``,
``fairlearn_eg``)."""

from __future__ import annotations

from safeclf.methods.ramp.estimator import RampClassifier
from safeclf.methods.ramp.plugin import RampPlugin, plugin

__all__ = ["RampClassifier", "RampPlugin", "plugin"]

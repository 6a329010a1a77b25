"""Multi Cost SVM with a calibrated offset and exact ε-safe regions (Carlevaro et al. 2024).

Modules: ``kernels`` (kernels and the shared row cache), ``dual`` (decomposition solver for the
dual, Prop. 5), ``primal`` (the primal through Clarabel for explicit feature maps),
``calibration`` (the four offsets of section 3.2), ``safe_region`` (exact Gaussian ε-safe
regions, Prop. 3 and Appendix A), ``estimator`` (the scikit-learn estimator), ``experiments``
(the paper's experiments beyond a plain job) and ``plugin`` (what a job needs and reports).
"""

from __future__ import annotations

from safeclf.methods.mcsvm.estimator import MultiCostSVM
from safeclf.methods.mcsvm.plugin import plugin

__all__ = ["MultiCostSVM", "plugin"]

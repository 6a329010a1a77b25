"""Multi Cost SVM with a calibrated offset and exact ε-safe regions (Carlevaro et al. 2024).

Modules: ``kernels`` (kernels and the shared row cache), ``dual`` (decomposition solver for the
dual, Prop. 5), ``primal`` (the primal through Clarabel for explicit feature maps),
``calibration`` (the four offsets of section 3.2), ``safe_region`` (exact Gaussian ε-safe
regions, Prop. 3 and Appendix A), ``estimator`` (the scikit-learn estimator) and ``report``
(metrics and the paper's experiments).
"""

from __future__ import annotations

from safeclf.methods.mcsvm.estimator import MultiCostSVM
from safeclf.plugin import MethodPlugin, Report


class MCSVMPlugin(MethodPlugin):
    """Passes the calibration split; a model with ``calibration: none`` needs none."""

    def needs_for(self, params):
        return () if params.get("calibration") == "none" else self.needs

    def report(self, estimator, task) -> Report:
        from safeclf.methods.mcsvm.report import report

        return report(estimator, task)


plugin = MCSVMPlugin(
    name="mcsvm",
    estimator=MultiCostSVM,
    summary="Multi Cost SVM: w from m τ-weighted SVMs, offset calibrated for ε-safe regions",
    needs=("calibration",),
)

__all__ = ["MultiCostSVM", "plugin"]

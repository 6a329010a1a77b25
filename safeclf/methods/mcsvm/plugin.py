"""The ``mcsvm`` plugin: what a Multi Cost SVM job needs and reports beyond the shared metrics."""

from __future__ import annotations

import numpy as np

from safeclf.methods.mcsvm import experiments
from safeclf.methods.mcsvm.estimator import MultiCostSVM
from safeclf.methods.mcsvm.plots import PLOTS
from safeclf.plugins.contract import MethodPlugin, Report


class MCSVMPlugin(MethodPlugin):
    """Passes the calibration split (a model with ``calibration: none`` needs none) and reports
    the offset, the guarantee and the paper's experiments (:mod:`.experiments`): the exact
    ε-safe region when the dataset carries its true law (``info["gaussians"]``), the
    recalibration draws (``guarantee_draws``), and, when the dataset gives a ``source`` row
    with two sources or more (``gaussian_priors`` with ``compare_sources: true``), one model per
    source and the largest angle between their w (Example 2)."""

    def needs_for(self, params):
        return () if params.get("calibration") == "none" else self.needs

    def metric_names(self, params):
        """The offset and the solver's figures; the exact-region, recalibration-draw and
        per-source figures where the dataset gives what they need (:mod:`.experiments`)."""
        return ("offset", "n_tau", "n_support", "kkt_gap", "safe_region_box_fraction",
                "{part}_unsafe_share",
                "exact_region_fpr", "exact_region_fpr_se", "exact_region_rho",
                "test_exact_region_*", "draws_*", "w_angle_deg")

    def promise_names(self, params):
        """The calibration's promise (:meth:`MultiCostSVM.safeclf_promises`)."""
        calibration = self.build(params).calibration
        return {"probabilistic_scaling": ("joint_fp_rate",), "conformal": ("fpr",),
                "conformal_all": ("joint_fp_rate",)}.get(
            calibration, ())

    def report(self, estimator, task) -> Report:
        est = estimator
        metrics: dict[str, float] = {
            "offset": float(np.clip(est.offset_, -1e300, 1e300)),
            "n_tau": float(est.tau_.size),
        }
        details: dict = {
            "guarantee": est.guarantee_,
            "calibration": est.calibration,
            "calibration_details": {k: (experiments.finite(v) if isinstance(v, float) else v)
                                    for k, v in est.calibration_details_.items()},
            "offset": experiments.finite(est.offset_),
            "tau": est.tau_.tolist(),
            "intercepts": est.intercepts_.tolist(),
            "solver": est.solver_,
        }
        if est.solver_ == "dual":
            metrics["n_support"] = float(est.support_.size)
            metrics["kkt_gap"] = float(est.kkt_gap_)
        if getattr(est, "w_", None) is not None and est.kernel == "linear":
            details["w"] = est.w_.tolist()
        metrics["safe_region_box_fraction"] = experiments.safe_box_fraction(est, task)
        for name, part in task.parts().items():
            metrics[f"{name}_unsafe_share"] = experiments.unsafe_share(est, part)
        grid = experiments.safe_grid(est, task)
        if grid is not None:
            details["safe_grid"] = grid

        def add(found):
            metrics.update(found[0])
            details.update(found[1])

        g = task.info.get("gaussians") if isinstance(task.info, dict) else None
        if g is not None:
            details["gaussians"] = {k: np.asarray(v).tolist() for k, v in g.items()}
            if experiments.coordinates_match(task, g):
                add(experiments.exact_region(est, task, g))
                if est.guarantee_draws > 0:
                    add(experiments.guarantee_draws(est, task, g))
            else:
                details["exact_region"] = ("skipped: the features do not look like draws from "
                                           "info['gaussians'] (transformed by preprocessing?)")
        src = task.train.rows.get("source") if task.train.rows else None
        if src is not None and np.unique(np.asarray(src)).size >= 2:
            add(experiments.per_source_angle(est, task.train.X, task.train.y, np.asarray(src)))
        return Report(metrics=metrics, details=details)


plugin = MCSVMPlugin(
    name="mcsvm",
    estimator=MultiCostSVM,
    summary="Multi Cost SVM: w from m τ-weighted SVMs, offset calibrated for ε-safe regions",
    needs=("calibration",),
    uses=("source",),
    plots=PLOTS,
)

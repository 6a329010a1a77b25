"""The ``robust_socp`` plugin: what a robust SOCP job needs and reports beyond the shared
metrics."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from safeclf.methods.robust_socp.estimator import RobustSOCPClassifier
from safeclf.methods.robust_socp.formulations import kappa
from safeclf.plugins.contract import MethodPlugin, Report


class RobustSOCPPlugin(MethodPlugin):
    """Passes the uncertainty rows; reports the margin, the objective (with the bounds a
    re-solve must meet), κ(ε), the radius ratios of the Bernstein and Chebyshev sets, the
    Monte-Carlo check of the chance constraint and the error measures on the train and test
    parts (:meth:`RobustSOCPClassifier.evaluate`)."""

    def metric_names(self, params):
        errors = ("nominal_error", "robust_error", "undecided_rate", "realised_error")
        return ("margin", "objective", "objective_lo", "objective_hi", "kappa", "radius_ratio",
                "radius_ratio_min", "radius_ratio_max", "max_violation", "violation_excess",
                *(f"{part}_{e}" for part in ("train", "test") for e in errors))

    def promise_names(self, params):
        """The chance constraint, for the formulations that impose it
        (:meth:`RobustSOCPClassifier.safeclf_promises`)."""
        from safeclf.methods.robust_socp.formulations import FORMULATIONS

        f = FORMULATIONS[self.build(params).formulation]
        return () if f.radius == "none" and f.mean != "support" else ("chance_constraint",)

    def report(self, estimator, task) -> Report:
        check_is_fitted(estimator)
        obj = float(estimator.objective_)
        metrics = {"margin": estimator.margin_, "objective": obj,
                   "objective_lo": obj - estimator.OBJECTIVE_RTOL * abs(obj),
                   "objective_hi": obj + estimator.OBJECTIVE_RTOL * abs(obj),
                   "kappa": kappa(estimator.epsilon)}
        details = {"formulation": estimator.formulation, "w": estimator.coef_.tolist(),
                   "b": float(-estimator.intercept_),
                   "box_binding": bool(getattr(estimator, "box_binding_", False))}
        train, test = task.train, task.test
        unc_tr = train.rows.get("uncertainty")
        if unc_tr is not None:
            ratios = estimator.radius_ratios(train.X, unc_tr)
            if ratios.size:
                metrics.update(radius_ratio=float(np.median(ratios)),
                               radius_ratio_min=float(ratios.min()),
                               radius_ratio_max=float(ratios.max()))
            if estimator.n_monte_carlo > 0:
                viol = estimator.chance_check(train.X, train.y, unc_tr)
                worst = max(viol.values())
                se = np.sqrt(estimator.epsilon * (1 - estimator.epsilon) / estimator.n_monte_carlo)
                metrics.update(max_violation=worst,
                               violation_excess=worst - (estimator.epsilon + 3 * se))
                details["violation_by_law"] = viol
        for part_name, part in (("train", train), ("test", test)):
            if part is None or len(part) == 0:
                continue
            ev = estimator.evaluate(part.X, part.y, part.rows.get("uncertainty"),
                               part.rows.get("realisations"))
            for key, val in ev.items():
                metrics[f"{part_name}_{key}"] = val
        return Report(metrics=metrics, details=details)


plugin = RobustSOCPPlugin(
    name="robust_socp",
    estimator=RobustSOCPClassifier,
    summary="chance-constrained SOCP classifiers for uncertain data (Bernstein MM-SBMV…, "
            "Chebyshev MM-MC, SVM)",
    needs=("uncertainty",),
    scaling=False,  # the uncertainty rows are in X's units: a scaler would leave them behind
)

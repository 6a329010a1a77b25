"""The ``ramp`` plugin: the rows a constraint set needs, and what a ramp job reports beyond the
shared metrics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from numbers import Real

import numpy as np

from safeclf.guarantees.metrics import Outputs, evaluate
from safeclf.guarantees.rates import RatioConstraint
from safeclf.methods.ramp.estimator import RampClassifier
from safeclf.methods.ramp.plots import PLOTS
from safeclf.methods.ramp.rows import RowsPlugin
from safeclf.plugins.contract import PRIVILEGED, Report


class RampPlugin(RowsPlugin):
    """Passes the rows entries the estimator's constraints name; reports each constraint's
    value (deterministic and randomised) on every part, the multipliers and the solver's
    iteration counts and duality gap."""

    def metric_names(self, params):
        """What :meth:`report` gives: the solver's figures, each constraint's target,
        multiplier, activity and value (deterministic and randomised, with the miss to its
        target) on every part, the objective and each monitor on every part, and the shared
        metrics of the randomised rule."""
        est = self.build(params)
        cons, _ = est._parsed()
        names = ["mm_iterations", "cp_iterations", "duality_gap", "solver_seconds", "lam",
                 "threshold", "{part}_objective", "{part}_objective_randomized"]
        names += [f"{{part}}_randomized_{m}" for m in _RANDOMIZED_SHARED]
        names += [f"{{part}}_zero_threshold_{m}" for m in _ZERO_THRESHOLD_SHARED]
        # a comparison of several pairs of groups is one constraint per pair, named
        # <name>_<pair> once the groups are known (RatioConstraint.expanded)
        cons = [replace(c, name=n) for c in cons
                for n in ((c.name, f"{c.name}_*") if isinstance(c, RatioConstraint) else (c.name,))]
        for c in cons:
            names += [f"train_constraint_{c.name}_violation",
                      f"train_constraint_{c.name}_randomized_violation",
                      f"constraint_{c.name}_target", f"constraint_{c.name}_multiplier",
                      f"constraint_{c.name}_active"]
            names += [f"{{part}}_constraint_{c.name}{r}{m}" for r in ("", "_randomized")
                      for m in ("", "_miss")]
        for name, _ in est.monitors():
            names += [f"{{part}}_monitor_{name}", f"{{part}}_monitor_{name}_randomized"]
        return names

    def counts_favourable(self, params):
        """The constraints whose rate depends on which label is favourable
        (:func:`safeclf.guarantees.outcome.counted`)."""
        from safeclf.guarantees.outcome import counted

        cons, _ = self.build(params)._parsed()
        return counted(cons, "params.")

    def promise_names(self, params):
        """One promise per constraint (:func:`~safeclf.methods.ramp.promises.constraint_promises`)."""
        cons, _ = self.build(params)._parsed()
        return [f"constraint_{c.name}{s}" for c in cons
                for s in (("", "_*") if isinstance(c, RatioConstraint) else ("",))]

    def report(self, estimator, task) -> Report:
        metrics: dict[str, float] = {
            "mm_iterations": float(estimator.n_mm_iter_),
            "cp_iterations": float(sum(estimator.n_cp_iter_)),
            "duality_gap": float(estimator.duality_gap_),
            "solver_seconds": float(estimator.fit_seconds_),
            "lam": float(estimator.lam_),
            "threshold": float(estimator.threshold_),
        }
        targets = {row["name"]: row["target"] for row in estimator.constraint_values_}
        for row in estimator.constraint_values_:
            name = row["name"]
            metrics[f"train_constraint_{name}_randomized_violation"] = max(
                0.0, -row["slack_randomized"])
            # of the returned rule (predict's), in the linear form feasibility_tol bounds
            metrics[f"train_constraint_{name}_violation"] = max(0.0, -row["slack"])
            metrics[f"constraint_{name}_target"] = float(row["target"])
            metrics[f"constraint_{name}_multiplier"] = row["multiplier"]
            metrics[f"constraint_{name}_active"] = float(row["multiplier"] > 0)
        for part_name, part in task.parts().items():
            for randomized in (False, True):
                suffix = "_randomized" if randomized else ""
                values = estimator.rate_values(part.X, part.y, part.rows, randomized)
                for name, value in values.items():
                    key = name if name == "objective" or name.startswith("monitor_") else (
                        f"constraint_{name}")
                    metrics[f"{part_name}_{key}{suffix}"] = float(value)
                    if name in targets:
                        metrics[f"{part_name}_{key}{suffix}_miss"] = float(
                            abs(value - targets[name]))
            metrics.update(_randomized_shared(estimator, part, part_name, task.info))
            metrics.update(_zero_threshold_shared(estimator, part, part_name, task.info))
        details = {
            "multipliers": {r["name"]: r["multiplier"] for r in estimator.constraint_values_},
            "constraints": estimator.constraint_values_,
            "mm_iterations": estimator.n_mm_iter_,
            "cp_iterations": estimator.n_cp_iter_,
            "duality_gap": estimator.duality_gap_,
            "lambda": estimator.lam_,
            "lambda_cv": estimator.lam_cv_,
            "bias": ("regularised: weight of a constant feature s = "
                     f"{estimator.intercept_scaling}" if estimator.fit_intercept else "none"),
            "history": estimator.history_,
            "train_objective": estimator.objective_value_,
        }
        return Report(metrics, details)  # the runner makes details JSON-plain

    def promises(self, estimator, task):
        """One training-only promise per constraint (:mod:`safeclf.methods.ramp.promises`)."""
        from safeclf.guarantees.promises import no_promise
        from safeclf.methods.ramp.promises import constraint_promises

        return constraint_promises(estimator) or [
            no_promise(self.name, "no constraints: the plain ramp-loss classifier")]

    def candidate_params(self, params, task) -> list[dict]:
        """The settings certified training chooses among on ``task``'s training rows: one per
        λ of the grid when ``lam`` would be chosen by cross-validation there (each with its
        own tightened bounds and its predicted safety test, :mod:`safeclf.guarantees.certify.training`), else
        ``[params]``."""
        est = self.build(params)
        y = np.asarray(task.train.y)
        if isinstance(est.lam, Real) or not est._lam_by_cv(y):
            return [params]
        return [{**params, "lam": lam} for lam in est._lam_values(y.shape[0])]

    def untightenable(self, params) -> str | None:
        """Why certified training cannot take ``params`` (the parameter and the reason), or
        None: the in-training tightening and its safety test know rates and ratios, not a
        difference constraint (``*_difference``), which post-hoc certification takes."""
        for i, item in enumerate(params.get("constraints") or []):
            rate = item.get("rate") if isinstance(item, Mapping) else None
            if isinstance(rate, str) and rate.endswith("_difference"):
                return (f"constraints[{i}]: certified training tightens rates and ratios, not "
                        f"a difference ('{rate}')")
        return None

    def tightened_params(self, params, bounds, promises=None):
        """Parameters with each constraint's bound replaced (for certified training); with a
        comparison of several pairs of groups, one bound per pair and the ``promises`` they
        are for (:func:`~safeclf.methods.ramp.promises.tightened_params`)."""
        from safeclf.methods.ramp.promises import tightened_params

        return tightened_params(params, bounds, promises)


#: The shared metrics :func:`_randomized_shared` may report (the fairness ratio under its
#: undirected name where no group is privileged).
_RANDOMIZED_SHARED = ("error", "positive_rate", "fairness_ratio", "fairness_ratio_minmax", "churn")


def _randomized_shared(est, part, part_name, info):
    """The shared metrics (:mod:`safeclf.guarantees.metrics`) for the randomised rule: their expected
    values under σ; the fairness ratio and churn where the part has their rows."""
    names = ["error", "positive_rate"]
    names += [n for n, row in (("fairness_ratio", "groups"), ("churn", "baseline"))
              if row in part.rows]
    outputs = Outputs(y=np.asarray(part.y), pred=est.predict(part.X), classes=est.classes_,
                      rows=part.rows, info=info, randomized=est.randomized_proba(part.X))
    return evaluate(names, outputs, f"{part_name}_randomized")


#: The shared metrics :func:`_zero_threshold_shared` may report.
_ZERO_THRESHOLD_SHARED = ("error", "positive_rate", "recall", "fairness_ratio",
                          "fairness_ratio_minmax", "churn")


def _zero_threshold_shared(est, part, part_name, info):
    """The shared metrics of the paper's deterministic rule, Problem 2's solution thresholded
    at zero (Goh et al. 2016, Figures 2 and 3: "deterministically thresholded at zero"):
    positive where ⟨w, x⟩ + b > 0 with b the solution's own bias (``ramp_intercept_``), where
    ``predict`` moves it by ``threshold_`` (the same rule when ``threshold_`` is 0). Named
    ``<part>_zero_threshold_<metric>``."""
    names = ["error", "positive_rate", "recall"]
    names += [n for n, row in (("fairness_ratio", "groups"), ("churn", "baseline"))
              if row in part.rows]
    z = est.decision_function(part.X) + float(getattr(est, "threshold_", 0.0))
    outputs = Outputs(y=np.asarray(part.y), pred=est.classes_[(z > 0).astype(int)],
                      classes=est.classes_, rows=part.rows, info=info)
    return evaluate(names, outputs, f"{part_name}_zero_threshold")


plugin = RampPlugin(
    name="ramp",
    estimator=RampClassifier,
    summary="ramp-loss linear classifier with dataset constraints (Goh et al. 2016)",
    needs=(PRIVILEGED,),
    plots=PLOTS,
    path_params=("kappa", "target"),
)

"""The ``budgeted_selection`` plugin: what a budgeted selection job needs and reports beyond
the shared metrics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_is_fitted

from safeclf.errors import DataError
from safeclf.methods.selection.estimator import BudgetedSelection
from safeclf.methods.selection.penalty import grid_size_bound
from safeclf.methods.selection.plots import budget_share
from safeclf.plugins.contract import MethodPlugin, Report


@dataclass(frozen=True)
class SelectionPlugin(MethodPlugin):
    """Checks the classes' widths against the data before anything runs, and gives the
    estimator the test part as hindsight data (the oracle of eq. (5) and the excess risk;
    only ``procedure: oracle`` uses it to choose)."""

    def check_task(self, params, task, preprocess=None):
        super().check_task(params, task, preprocess)
        width = task.train.X.shape[1]
        for m in self.estimator(**params).check_spec():
            if m.features is not None and m.features > width:
                raise DataError(f"asks for classes[{m.index}].features={m.features}, more than "
                                f"the {width} features of the dataset")

    def fit(self, estimator, task):
        return estimator.fit(task.train.X, task.train.y, X_hindsight=task.test.X,
                             y_hindsight=task.test.y)

    def metric_names(self, params):
        return ("budget", "n_model_classes", "chosen_class", "chosen_complexity",
                "chosen_test_risk", "coarse_grid_size", "coarse_grid_size_per_log_k",
                "compute_spent", "compute_ratio", "oracle_class", "oracle_test_risk",
                "excess_risk", "suboptimal_share", "picked_oracle", "regret",
                "coarse_grid_remark", "coarse_grid_remark_size")

    def promise_names(self, params):
        return ()

    def report(self, estimator, task) -> Report:
        check_is_fitted(estimator)
        K, T = len(estimator.model_classes_), int(estimator.budget)
        test_risk = float(np.mean(estimator.predict(task.test.X) != task.test.y))
        metrics = {
            "budget": float(T),
            "n_model_classes": float(K),
            "chosen_class": float(estimator.chosen_ + 1),
            "chosen_complexity": float(estimator.model_classes_[estimator.chosen_].complexity),
            "chosen_test_risk": test_risk,
            "coarse_grid_size": float(len(estimator.grid_)),
            "coarse_grid_size_per_log_k": float(len(estimator.grid_) / np.log(K)) if K > 1
            else float("nan"),
            "compute_spent": float(estimator.compute_spent_),
            "compute_ratio": float(estimator.compute_spent_ / T),
            "coarse_grid_remark": float(estimator.grid_remark_),
            "coarse_grid_remark_size": float(estimator.grid_remark_size_),
        }
        h = (estimator.full_penalty_ / max(estimator.full_penalty_[0], 1e-300)).tolist()
        details = {
            "procedure": estimator.procedure,
            "output": estimator.output,
            "class_names": [m.name for m in estimator.model_classes_],
            "complexity": [m.complexity for m in estimator.model_classes_],
            "incremental": [m.incremental for m in estimator.model_classes_],
            "per_quantum": [int(v) for v in estimator.per_quantum_],
            "quanta": estimator.allocation_.tolist(),
            "path": [int(i) + 1 for i in estimator.path_],
            "grid": [int(i) + 1 for i in estimator.grid_],
            "grid_size_bound": grid_size_bound(h[0], h[-1], float(estimator.lam)),
            "chosen_class": estimator.chosen_ + 1,
            "penalty_full_budget": estimator.full_penalty_.tolist(),
            **{k: v for k, v in estimator.selection_.extra.items()},
        }
        if hasattr(estimator, "oracle_class_"):
            o = estimator.oracle_class_
            oracle_risk = estimator.hindsight_risk_[o]
            share = 1.0 - estimator.allocation_[o] / max(estimator.allocation_.sum(), 1e-300)
            metrics.update({
                "oracle_class": float(o + 1),
                "oracle_test_risk": float(oracle_risk),
                "excess_risk": test_risk - float(oracle_risk),
                "suboptimal_share": float(share),
                "picked_oracle": float(estimator.chosen_ == o),
                "regret": float(estimator.regret_),
            })
            details["oracle_class"] = o + 1
            details["hindsight_risk"] = [float(v) for v in estimator.hindsight_risk_]
            details["oracle_in_grid"] = bool(o in estimator.grid_)
        return Report(metrics=metrics, details=details)

    def promises(self, estimator, task):
        """No checkable promise: Theorems 1-3 are oracle inequalities whose constants (C, the
        κ's of Assumption A) and class risks R*_i are unknown, so no bound on held-out data
        follows; the report's excess risk against the hindsight oracle is a measurement."""
        from safeclf.guarantees.promises import no_promise

        if estimator.procedure == "bandit" and estimator.output == "most_selected":
            why = ("Theorem 1 (Algorithm 1's most often selected class) bounds the quanta a "
                   "suboptimal class receives by O(log T) with unknown constants C, κ₂ and "
                   "unknown gaps Δ_i; it bounds no risk, so nothing can be checked on held-out "
                   "data (Theorem 2's risk bound is for the averaged function f̄_T, output: "
                   "average)")
        else:
            theorem = {"bandit": "Theorem 2 (f̄_T, the average of Algorithm 1's round "
                                 "functions)", "coarse_grid": "Theorem 3 (12)"}.get(
                estimator.procedure)
            why = ("a baseline procedure without a theorem" if theorem is None else
                   f"{theorem} bounds the risk by min_i [R*_i + γ_i] + O(√(log K / T n)) with "
                   "unknown constants and unknown class risks R*_i, so nothing can be checked "
                   "on held-out data (the report's excess risk against the hindsight oracle is "
                   "a measurement, not a promise)")
        return [no_promise("budgeted_selection", why)]


plugin = SelectionPlugin(
    name="budgeted_selection",
    estimator=BudgetedSelection,
    summary="choose a model class under a compute budget: UCB bandit (Alg. 1), coarse grid "
            "(12), uniform, oracle, successive halving",
    plots={"budget_share": budget_share},
)

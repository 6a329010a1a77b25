"""Model selection under a compute budget: Algorithm 1 (UCB bandit) and the coarse grid of
Agarwal, Duchi, Bartlett and Levrard (2011), with uniform, oracle and successive-halving
baselines. The plugin wraps any registered method plugin (``classes`` in the spec)."""

from __future__ import annotations

from dataclasses import dataclass

from safeclf.errors import DataError
from safeclf.methods.selection.estimator import PROCEDURES, BudgetedSelection
from safeclf.methods.selection.plots import budget_share
from safeclf.plugin import MethodPlugin, Report


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

    def report(self, estimator, task) -> Report:
        return estimator.safeclf_report(task)

    def promises(self, estimator, task):
        """No checkable promise: Theorems 1-3 are oracle inequalities whose constants (C, the
        κ's of Assumption A) and class risks R*_i are unknown, so no bound on held-out data
        follows; the report's excess risk against the hindsight oracle is a measurement."""
        from safeclf.promises import no_promise

        theorem = {"bandit": "Theorem 2 (Algorithm 1)", "coarse_grid": "Theorem 3 (12)"}.get(
            estimator.procedure)
        why = ("a baseline procedure without a theorem" if theorem is None else
               f"{theorem} bounds the risk by min_i [R*_i + γ_i] + O(√(log K / T n)) with "
               "unknown constants and unknown class risks R*_i, so nothing can be checked on "
               "held-out data (the report's excess risk against the hindsight oracle is a "
               "measurement, not a promise)")
        return [no_promise("budgeted_selection", why)]


plugin = SelectionPlugin(
    name="budgeted_selection",
    estimator=BudgetedSelection,
    summary="choose a model class under a compute budget: UCB bandit (Alg. 1), coarse grid "
            "(12), uniform, oracle, successive halving",
    plots={"budget_share": budget_share},
)

__all__ = ["BudgetedSelection", "PROCEDURES", "plugin"]

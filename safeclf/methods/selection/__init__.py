"""Model selection under a compute budget: Algorithm 1 (UCB bandit) and the coarse grid of
Agarwal, Duchi, Bartlett and Levrard (2011), with uniform, oracle and successive-halving
baselines. The plugin wraps any registered method plugin (``classes`` in the spec)."""

from __future__ import annotations

from dataclasses import dataclass

from safeclf.errors import SpecError
from safeclf.methods.selection.estimator import PROCEDURES, BudgetedSelection
from safeclf.methods.selection.plots import budget_share
from safeclf.plugin import MethodPlugin, Report


@dataclass(frozen=True)
class SelectionPlugin(MethodPlugin):
    """Checks the wrapped classes before anything runs, and gives the estimator the test part
    as hindsight data (the oracle of eq. (5) and the excess risk; only ``procedure: oracle``
    uses it to choose)."""

    def check_params(self, params, where):
        super().check_params(params, where)
        try:
            self.estimator(**params).check_spec(where)
        except SpecError:
            raise
        except (TypeError, ValueError) as exc:  # pragma: no cover - defensive
            raise SpecError(f"{where}: {exc}") from None

    def fit(self, estimator, task):
        return estimator.fit(task.train.X, task.train.y, X_hindsight=task.test.X,
                             y_hindsight=task.test.y)

    def report(self, estimator, task) -> Report:
        return estimator.safeclf_report(task)


plugin = SelectionPlugin(
    name="budgeted_selection",
    estimator=BudgetedSelection,
    summary="choose a model class under a compute budget: UCB bandit (Alg. 1), coarse grid "
            "(12), uniform, oracle, successive halving",
    plots={"budget_share": budget_share},
)

__all__ = ["BudgetedSelection", "PROCEDURES", "plugin"]

"""A plugin whose ``fit`` passes the dataset ``rows`` entries the estimator asks for
(``estimator.rows_needed()``): which rows a constraint set needs depends on its parameters,
so it cannot be a fixed ``needs`` tuple."""

from __future__ import annotations

from safeclf.errors import DataError
from safeclf.plugin import MethodPlugin


class RowsPlugin(MethodPlugin):
    def fit(self, estimator, task):
        need = sorted(estimator.rows_needed())
        missing = [k for k in need if k not in task.train.rows]
        if missing:
            raise DataError(
                f"method '{self.name}': the constraints need rows '{missing[0]}' but dataset "
                f"'{task.dataset}' provides {sorted(task.train.rows) or 'nothing beyond X and y'}"
            )
        return estimator.fit(task.train.X, task.train.y,
                             **privileged_keyword(estimator, task),
                             **{k: task.train.rows[k] for k in need})


def privileged_keyword(estimator, task) -> dict:
    """``{"privileged_group": <the dataset's>}`` when ``estimator.fit`` takes it, so ratio
    constraints that name no privileged group use the dataset's (:mod:`safeclf.groups`)."""
    import inspect

    if "privileged_group" not in inspect.signature(estimator.fit).parameters:
        return {}
    return {"privileged_group": task.info.get("privileged_group")}

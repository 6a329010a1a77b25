"""A plugin whose needs are the dataset ``rows`` entries its estimator's parameters name
(``estimator.rows_needed()``): which rows a constraint set needs depends on its parameters, so
it cannot be a fixed ``needs`` tuple. The runner's preflight and ``fit`` both ask
:meth:`~safeclf.plugin.MethodPlugin.needs_for`, so what is missing is found before any job."""

from __future__ import annotations

from safeclf.plugin import MethodPlugin


class RowsPlugin(MethodPlugin):
    def needs_for(self, params):
        return tuple(sorted(self.estimator(**params).rows_needed()))

    def fit(self, estimator, task):
        params = estimator.get_params(deep=False)
        return estimator.fit(task.train.X, task.train.y, **privileged_keyword(estimator, task),
                             **self.fit_params(task, params))


def privileged_keyword(estimator, task) -> dict:
    """``{"privileged_group": <the dataset's>}`` when ``estimator.fit`` takes it, so ratio
    constraints that name no privileged group use the dataset's (:mod:`safeclf.groups`)."""
    import inspect

    if "privileged_group" not in inspect.signature(estimator.fit).parameters:
        return {}
    return {"privileged_group": task.info.get("privileged_group")}

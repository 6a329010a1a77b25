"""A plugin whose needs include the dataset ``rows`` entries its estimator's parameters name
(``estimator.rows_needed()``): which rows a constraint set needs depends on its parameters, so
it cannot be a fixed ``needs`` tuple. The runner's preflight and ``fit`` both ask
:meth:`~safeclf.plugins.contract.MethodPlugin.needs_for`, so what is missing is found before any job;
the groups its constraints name are checked against the data there too, by expanding each
comparison of groups into its pairs as the fit will (:func:`~safeclf.guarantees.rates.
expand_constraints`), which also gives ``validate`` the comparisons it lists."""

from __future__ import annotations

import numpy as np

from safeclf.errors import DataError
from safeclf.guarantees.groups import privileged_of
from safeclf.guarantees.rate_items import expand_constraints
from safeclf.guarantees.rates import FitData, RatioConstraint
from safeclf.plugins.contract import MethodPlugin


class RowsPlugin(MethodPlugin):
    def needs_for(self, params):
        return tuple(self.needs) + tuple(sorted(self.estimator(**params).rows_needed()))

    def _group_constraints(self, params) -> list[RatioConstraint]:
        parsed = self.estimator(**params)._parsed()
        return [c for part in parsed if isinstance(part, list) for c in part
                if isinstance(c, RatioConstraint)]

    def named_groups(self, params):
        """The privileged groups named by the estimator's ratio constraints."""
        from safeclf.guarantees.groups import label

        return [(f"{c.where}.privileged", c.groups, label(c.privileged))
                for c in self._group_constraints(params) if c.privileged is not None]

    def _pairs(self, params, task) -> list[RatioConstraint]:
        """The group comparisons of ``params`` expanded on ``task``'s training rows."""
        cons = self._group_constraints(params)
        if not cons or any(c.groups not in task.train.rows for c in cons):
            return []
        y = np.asarray(task.train.y)
        rows = {k: v for k, v in task.train.rows.items() if not isinstance(v, dict)}
        data = FitData(y == np.unique(y)[-1], rows)
        try:
            return expand_constraints(cons, data, privileged_of(task.info))
        except ValueError as exc:
            raise DataError(str(exc)) from None

    def check_task(self, params, task, preprocess=None) -> None:
        """The checks of every plugin, then each group comparison expanded on the training
        rows: a protected group the data lacks, a privileged group named as protected, a pair
        with no training rows is refused here."""
        super().check_task(params, task, preprocess)
        self._pairs(params, task)

    def comparisons(self, params, task) -> list[str]:
        """One line per compared pair: ``constraints[0] (fairness_group_b): fairness_ratio:
        s_p(group_b) ≥ 0.8·s_p(group_a)``, small groups said so."""
        from safeclf.guarantees import groups as G

        out = []
        for c in self._pairs(params, task):
            sizes = G.sizes(task.train.rows[c.groups], c.base(FitData(
                np.asarray(task.train.y) == np.unique(task.train.y)[-1],
                {k: v for k, v in task.train.rows.items() if not isinstance(v, dict)})))
            side = [c.privileged] + ([c.protected] if c.protected is not None else [])
            few = [f"{g}: {sizes.get(str(g), 0)} training rows" for g in side
                   if sizes.get(str(g), 0) < G.MIN_GROUP_SIZE]
            note = (f" (small group, below {G.MIN_GROUP_SIZE}: {'; '.join(few)}; compared "
                    "on its own, not pooled)") if few else ""
            out.append(f"{c.where} ({c.name}): {c.describe()}{note}")
        return out

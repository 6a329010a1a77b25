"""A plugin whose needs include the dataset ``rows`` entries its estimator's parameters name
(``estimator.rows_needed()``): which rows a constraint set needs depends on its parameters, so
it cannot be a fixed ``needs`` tuple. The runner's preflight and ``fit`` both ask
:meth:`~safeclf.plugin.MethodPlugin.needs_for`, so what is missing is found before any job;
the privileged groups its constraints name are checked against the data there too."""

from __future__ import annotations

from safeclf.methods.ramp.rates import RatioConstraint
from safeclf.plugin import MethodPlugin


class RowsPlugin(MethodPlugin):
    def needs_for(self, params):
        return tuple(self.needs) + tuple(sorted(self.estimator(**params).rows_needed()))

    def named_groups(self, params):
        """The privileged groups named by the estimator's ratio constraints."""
        parsed = self.estimator(**params)._parsed()
        return [(f"{c.where}.privileged", c.groups, c.privileged)
                for part in parsed if isinstance(part, list) for c in part
                if isinstance(c, RatioConstraint) and c.privileged is not None]

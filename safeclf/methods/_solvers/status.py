"""How an optimiser ended, in one vocabulary (after cvxpy's status groups and scikit-learn's
``utils/optimize.py::_check_optimize_result``).

Every solver path (Clarabel called directly, cvxpy, scipy, a loop of our own with an
iteration limit) maps its own status into :class:`SolverStatus` and hands it to
:func:`settle`, which is the one place that decides what follows:

========== =============================================== ==================================
status     meaning                                         what :func:`settle` does
========== =============================================== ==================================
optimal    converged to the requested tolerances           returns
inaccurate stopped short (Clarabel's AlmostSolved, cvxpy's warns ``ConvergenceWarning`` (the
           optimal_inaccurate, an iteration limit reached  job records it) and returns
           with a usable iterate)
infeasible the problem has no feasible point               raises :class:`InfeasibleError`
error      anything else (numerical failure, unbounded,    raises :class:`SolverError`
           a limit reached without a usable point)
========== =============================================== ==================================

Estimators keep the status as ``solver_status_`` (its string value) beside ``n_iter_``; the
runner writes both as columns of the metrics table.
"""

from __future__ import annotations

import enum
import warnings

from sklearn.exceptions import ConvergenceWarning

from safeclf.errors import InfeasibleError, SolverError


class SolverStatus(str, enum.Enum):
    OPTIMAL = "optimal"
    INACCURATE = "inaccurate"
    INFEASIBLE = "infeasible"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


_S = SolverStatus

#: Clarabel's ``SolverStatus`` names and cvxpy's status strings.
_KNOWN = {
    # Clarabel
    "Solved": _S.OPTIMAL,
    "AlmostSolved": _S.INACCURATE,
    "PrimalInfeasible": _S.INFEASIBLE,
    "AlmostPrimalInfeasible": _S.INFEASIBLE,
    "DualInfeasible": _S.ERROR,  # unbounded: a modelling error, not the data's
    "AlmostDualInfeasible": _S.ERROR,
    "MaxIterations": _S.ERROR,
    "MaxTime": _S.ERROR,
    "NumericalError": _S.ERROR,
    "InsufficientProgress": _S.ERROR,
    # cvxpy (cvxpy.settings)
    "optimal": _S.OPTIMAL,
    "optimal_inaccurate": _S.INACCURATE,
    "infeasible": _S.INFEASIBLE,
    "infeasible_inaccurate": _S.INFEASIBLE,
    "unbounded": _S.ERROR,
    "unbounded_inaccurate": _S.ERROR,
    "infeasible_or_unbounded": _S.ERROR,
    "user_limit": _S.ERROR,
    "solver_error": _S.ERROR,
}


def as_status(raw) -> SolverStatus:
    """The :class:`SolverStatus` of a status of ours, Clarabel's or cvxpy's (a status object
    or its text); one this module does not know is an error."""
    if isinstance(raw, SolverStatus):
        return raw
    text = str(raw)
    return _S(text) if text in _S._value2member_map_ else _KNOWN.get(text, _S.ERROR)


def iteration_status(converged: bool) -> SolverStatus:
    """The status of a loop of our own: optimal when it met its tolerance, inaccurate when
    it stopped at its iteration limit with its last (or best) iterate."""
    return _S.OPTIMAL if converged else _S.INACCURATE


def settle(raw, what: str, *, detail: str | None = None,
           infeasible: str | None = None) -> SolverStatus:
    """Map ``raw`` into :class:`SolverStatus` and act on it: warn for inaccurate, raise for
    infeasible and error. Messages name ``what`` (the problem) and say ``detail`` (how a loop
    stopped) or the raw status; ``infeasible`` is what infeasibility means for the user's
    data. Returns the status."""
    status = as_status(raw)
    if status is _S.INACCURATE:
        said = detail or f"the solver stopped short of its tolerances (status '{raw}')"
        warnings.warn(f"{what}: {said}; the result may be inaccurate", ConvergenceWarning,
                      stacklevel=2)
    elif status is _S.INFEASIBLE:
        raise InfeasibleError(f"{what}: {infeasible or f'infeasible (status {raw!r})'}")
    elif status is _S.ERROR:
        raise SolverError(f"{what}: {detail or f'the solver ended with status {raw!r}'}, "
                          "not optimal")
    return status


def worst(statuses) -> SolverStatus:
    """The worst of several (the status of a fit made of several solves); optimal for none."""
    order = list(SolverStatus)
    return max((as_status(s) for s in statuses), key=order.index, default=_S.OPTIMAL)


def of_estimator(est) -> tuple[str | None, int | None]:
    """A fitted estimator's ``(solver_status_, n_iter_)``, ``n_iter_`` as one number (summed
    when it is per class, batch or stage). An estimator without ``solver_status_`` but with
    ``n_iter_`` and a positive ``max_iter`` (scikit-learn's own) is optimal when it stopped
    before its limit, the rule behind scikit-learn's ``ConvergenceWarning``; ``None`` for
    what the estimator does not say."""
    import numpy as np

    n_iter = getattr(est, "n_iter_", None)
    status = getattr(est, "solver_status_", None)
    if status is None and n_iter is not None:
        limit = getattr(est, "max_iter", None)
        if isinstance(limit, int | np.integer) and limit > 0:
            status = str(iteration_status(int(np.max(n_iter)) < limit))
    return status, None if n_iter is None else int(np.sum(n_iter))

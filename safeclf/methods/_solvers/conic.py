"""The one way the methods call Clarabel on a conic problem they built themselves."""

from __future__ import annotations

from safeclf.methods._solvers.status import SolverStatus, settle


def solve_conic(P, q, A, b, cones, what: str, infeasible: str | None = None,
                **settings) -> tuple[object, SolverStatus]:
    """Clarabel's solution of min ½xᵀPx + qᵀx s.t. Ax + s = b, s ∈ ``cones``, and its
    :class:`~safeclf.methods._solvers.status.SolverStatus`, settled by
    :func:`~safeclf.methods._solvers.status.settle` (inaccurate warns; infeasible raises
    :class:`InfeasibleError` saying ``infeasible``; anything else raises
    :class:`SolverError` naming ``what``). Quiet, with the qdldl factorisation (the README's
    robust_socp section says why); ``settings`` override Clarabel's."""
    import clarabel

    opts = clarabel.DefaultSettings()
    opts.verbose = False
    opts.direct_solve_method = "qdldl"
    for key, val in settings.items():
        setattr(opts, key, val)
    sol = clarabel.DefaultSolver(P, q, A, b, cones, opts).solve()
    return sol, settle(sol.status, what, infeasible=infeasible)

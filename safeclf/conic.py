"""The one way the methods call Clarabel on a conic problem they built themselves."""

from __future__ import annotations

from safeclf.errors import SolverError


def solve_conic(P, q, A, b, cones, what: str, accept=("Solved",), **settings):
    """Clarabel's solution of min ½xᵀPx + qᵀx s.t. Ax + s = b, s ∈ ``cones``, and its status
    as text. Quiet, with the qdldl factorisation (Clarabel's "auto" picks faer for some small
    problems, 20× slower on ours and on two threads); ``settings`` override Clarabel's. A
    status outside ``accept`` raises :class:`SolverError` naming ``what`` and the status."""
    import clarabel

    opts = clarabel.DefaultSettings()
    opts.verbose = False
    opts.direct_solve_method = "qdldl"
    for key, val in settings.items():
        setattr(opts, key, val)
    sol = clarabel.DefaultSolver(P, q, A, b, cones, opts).solve()
    status = str(sol.status)
    if status not in accept:
        raise SolverError(f"{what}: Clarabel ended with status '{status}', not optimal")
    return sol, status

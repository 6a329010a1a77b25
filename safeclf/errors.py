"""Errors a user can cause.

Every error raised for a user's mistake (bad spec, bad data, infeasible constraints, a solver
that did not reach optimality) is a :class:`SafeclfError` whose message is one sentence naming
the place. The CLI prints that sentence and exits with :attr:`SafeclfError.exit_code`; anything
else is a bug and gets a traceback.
"""

from __future__ import annotations


class SafeclfError(Exception):
    """A problem the user can fix; ``str(err)`` is a one-line explanation."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class SpecError(SafeclfError, ValueError):
    """The experiment spec is malformed or names things that do not exist (exit code 2)."""

    exit_code = 2


class DataError(SafeclfError, ValueError):
    """Data cannot be used as given: missing file, NaN, one class only, inconsistent bounds.
    Found before any job runs, it stops the run with exit code 2, like a bad spec; inside a
    job it marks that job failed."""

    exit_code = 2


class InfeasibleError(SafeclfError):
    """A constrained problem has no feasible point on the training data."""


class SolverError(SafeclfError):
    """An optimisation solver ended with a status other than optimal."""


def closest(name: str, known) -> str:
    """Return `` (did you mean 'x'?)`` for the known name nearest to ``name``, or ``''``."""
    import difflib

    match = difflib.get_close_matches(str(name), [str(k) for k in known if str(k) != str(name)],
                                      n=1, cutoff=0.5)
    return f" (did you mean '{match[0]}'?)" if match else ""


class CertificateError(SafeclfError):
    """A certificate does not re-check (``safeclf verify``, ``safeclf deploy``): its model
    file, data, records or test differ from what it states (exit code 2)."""

    exit_code = 2

"""methods/_solvers."""

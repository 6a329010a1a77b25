"""Thread limits for a block of code, where the matrices are too small for threads."""

from __future__ import annotations

import contextlib
import sys

_controller = None
_modules = 0
#: A job whose training matrix has fewer cells (rows × columns) runs at one BLAS thread: its
#: products are too small for threads, which then only spin. Measured (benchmarks/NOTES.md,
#: "Runner"): a logistic regression on breast cancer (569 × 30) spends 25× the CPU at two
#: OpenBLAS threads under load, and `--jobs 1` kept both cores busy.
SMALL_CELLS = 1_000_000


def limit_threads(limits, user_api=None):
    """A context manager limiting the thread pools of the loaded native libraries (threadpoolctl;
    ``user_api`` "blas" or "openmp", None for both) to ``limits`` threads (None: unchanged).

    The controller, which scans the process's loaded libraries (~1-2 ms, as much as a small
    fit's first iterations), is kept, and built again only when modules have been imported
    since (a native library, such as scipy's own OpenBLAS, comes with an import)."""
    global _controller, _modules
    if _controller is None or len(sys.modules) != _modules:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
        _modules = len(sys.modules)
    return _controller.limit(limits=limits, user_api=user_api)


def one_blas_thread():
    """One BLAS thread: for small factors and matrix–vector products extra BLAS threads only
    spin, taking CPU from the other jobs of a run."""
    return limit_threads(1, "blas")


def job_threads(X):
    """The BLAS thread limit of a job whose training matrix is ``X``: one thread below
    :data:`SMALL_CELLS` cells, else the limit the process already has (the runner's workers
    are bounded to cores // workers by joblib)."""
    shape = getattr(X, "shape", ())
    cells = shape[0] * (shape[1] if len(shape) > 1 else 1) if shape else 0
    return one_blas_thread() if cells < SMALL_CELLS else contextlib.nullcontext()

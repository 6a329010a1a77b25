"""Thread limits for a block of code, where the matrices are too small for threads."""

from __future__ import annotations

_controller = None


def limit_threads(limits, user_api=None):
    """A context manager limiting the thread pools of the loaded native libraries (threadpoolctl;
    ``user_api`` "blas" or "openmp", None for both) to ``limits`` threads (None: unchanged).

    The controller, which scans the process's loaded libraries (~1-2 ms, as much as a small
    fit's first iterations), is built once and kept."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller.limit(limits=limits, user_api=user_api)


def one_blas_thread():
    """One BLAS thread: for small factors and matrix–vector products extra BLAS threads only
    spin, taking CPU from the other jobs of a run."""
    return limit_threads(1, "blas")

"""One BLAS thread for a block of code, where the matrices are too small for threads."""

from __future__ import annotations

_controller = None


def one_blas_thread():
    """A context manager limiting BLAS to one thread (threadpoolctl). For small factors and
    matrix–vector products extra BLAS threads only spin, taking CPU from the other jobs of a
    run; the controller (which scans the loaded libraries once) is kept."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")

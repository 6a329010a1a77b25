"""safeclf._utils.blas: one BLAS thread inside the block, the previous limits restored after it."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from safeclf._utils.blas import one_blas_thread


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_one_blas_thread_limits_and_restores():
    np.ones((4, 4)) @ np.ones(4)  # BLAS loaded
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        # a single-threaded BLAS build (loaded by some package) stays at 1; any other is at 2
        assert 2 in before and all(n in (1, 2) for n in before)
        with one_blas_thread():
            assert all(n == 1 for n in _blas_threads())
        assert _blas_threads() == before

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


def test_a_small_job_runs_at_one_blas_thread_and_a_large_one_keeps_the_limit_it_has():
    import scipy.sparse as sp

    from safeclf._utils.blas import SMALL_CELLS, job_threads

    np.ones((4, 4)) @ np.ones(4)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with job_threads(np.zeros((100, 30))):
            assert all(n == 1 for n in _blas_threads())
        with job_threads(sp.csr_matrix((SMALL_CELLS // 10 + 1, 10))):
            assert _blas_threads() == before
        assert _blas_threads() == before


def test_the_thread_limit_reaches_a_blas_library_loaded_after_the_first_limit():
    """The kept controller is rebuilt when modules were imported since it was built, so a
    library that arrives with an import (scipy's OpenBLAS, loaded by scipy.linalg) is limited."""
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from safeclf._utils.blas import one_blas_thread\n"
            "with one_blas_thread(): pass\n"
            "import scipy.linalg, scipy.optimize\n"
            "from threadpoolctl import threadpool_info\n"
            "with one_blas_thread():\n"
            "    print(sorted({p['num_threads'] for p in threadpool_info() "
            "if p['user_api'] == 'blas'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "2"},
                         check=True).stdout
    assert out.strip() == "[1]", out

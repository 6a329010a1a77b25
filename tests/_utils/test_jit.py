"""The numba compile timer behind the job records' ``compile_seconds`` and the run's log line."""

from __future__ import annotations

import time

from numba import njit

from safeclf._utils import jit


def test_compile_seconds_counts_each_compilation_once():
    jit.compile_seconds()  # numba is imported: the timer listens from here

    @njit  # not cached: compiled in this process, whatever the cache holds
    def inner(x):
        return x * 2.0

    @njit
    def outer(x):
        return inner(x) + 1.0

    before = jit.compile_seconds()
    t0 = time.perf_counter()
    assert outer(1.0) == 3.0
    wall = time.perf_counter() - t0
    spent = jit.compile_seconds() - before
    # inner compiles inside outer's compilation: counted once, so within the call's wall time
    assert 0.0 < spent <= wall
    again = jit.compile_seconds()
    assert outer(2.0) == 5.0  # compiled already: nothing more
    assert jit.compile_seconds() == again

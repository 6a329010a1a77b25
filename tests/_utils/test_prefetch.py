"""The prefetch hint: compiled into an LLVM prefetch, no value changes, only 1-D arrays."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from safeclf._utils.prefetch import prefetch


@njit
def _gather_sum(values, order, ahead):
    total = 0.0
    for t in range(order.size):
        if t + ahead < order.size:
            prefetch(values, order[t + ahead])
        total += values[order[t]]
    return total


def test_prefetch_changes_no_value_and_reaches_llvm():
    rng = np.random.default_rng(0)
    values = rng.normal(size=10_000)
    order = rng.permutation(values.size)
    expected = 0.0
    for i in order:  # the same order of additions, in Python
        expected += values[i]
    assert _gather_sum(values, order, 8) == expected
    assert _gather_sum(values, order, 0) == expected
    ir = next(iter(_gather_sum.inspect_llvm().values()))
    assert "llvm.prefetch" in ir


def test_prefetch_of_one_past_the_end_is_harmless():
    values = np.arange(4.0)

    @njit
    def past_end(a):
        prefetch(a, a.size)  # an empty last CSR row points here
        return a.sum()

    assert past_end(values) == 6.0


def test_prefetch_types_only_one_dimensional_arrays():
    @njit
    def on_matrix(a):
        prefetch(a, 0)

    with pytest.raises(TypingError):
        on_matrix(np.zeros((2, 2)))

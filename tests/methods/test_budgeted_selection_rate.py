"""The log T script of budgeted_selection (benchmarks/reproduce_budgeted_selection_rate.py)
asserts Theorem 1's rate: a procedure that spends linearly on suboptimal classes fails it
(exit status 1), one that spends C·log T passes (issue 34: it used to assert nothing)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce_budgeted_selection_rate.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("reproduce_budgeted_selection_rate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _procedure(quanta):
    """A stand-in for Algorithm 1 that gives ``quanta(T)`` quanta to suboptimal classes."""
    return lambda T, seed: (quanta(T) / T, 1.0, 0.0)


@pytest.mark.parametrize("share", [0.05, 0.3])
def test_a_procedure_that_spends_linearly_fails(script, capsys, share):
    assert script.main(["--seeds", "2"], procedure=_procedure(lambda T: share * T)) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "expectations met: 0/1" in out and "paper 0/1" in out


@pytest.mark.parametrize("c", [5.0, 40.0])
def test_a_procedure_that_spends_log_t_passes(script, capsys, c):
    assert script.main(["--seeds", "2"], procedure=_procedure(lambda T: c * math.log(T))) == 0
    assert "expectations met: 1/1" in capsys.readouterr().out


def test_growth_tells_the_two_rates_apart_at_the_published_figures(script):
    # the counts docs/methods/budgeted_selection.md reports (T = 200 ... 3200): about +50 per
    # doubling, a log T rate; doubled increments are the linear one
    T = [200, 400, 800, 1600, 3200]
    assert script.growth_per_doubling(T, [92, 136, 187, 236, 289]) <= script.MAX_GROWTH
    assert script.growth_per_doubling(T, [92, 184, 368, 736, 1472]) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="three budgets"):
        script.growth_per_doubling([100, 200, 400], [1, 2, 3])

"""The multiplier search of Algorithm 2 (m = 1) and the tolerances of inexact MM steps, on
dual functions built here (no SVM): a concave z(v) given by its supergradient g(v)."""

from __future__ import annotations

import numpy as np
import pytest

from safeclf.methods.ramp import mm
from safeclf.methods.ramp.cutting_plane import BRACKET_WIDTH, G_TOL, cutting_plane


def _dual(g_of_v, noise=0.0, seed=0):
    """evaluate(v, gap) for the concave z with z' = g (integrated numerically), exact lower
    bounds; ``noise`` perturbs g as an inexact inner solve would."""
    rng = np.random.default_rng(seed)
    calls = []

    def z(v):
        grid = np.linspace(0.0, v, 2001)
        vals = np.array([g_of_v(x) for x in grid])
        return float(np.sum((vals[1:] + vals[:-1]) / 2 * np.diff(grid)))

    def evaluate(v, gap):
        calls.append(float(v[0]))
        val = z(v[0])
        g = g_of_v(v[0]) + noise * rng.standard_normal()
        return val, val, np.array([g]), None

    return evaluate, calls


@pytest.mark.parametrize("root, slope", [(0.09, -6.0), (0.5, -1.0), (3.0, -0.2)])
def test_search_settles_on_the_feasible_side_of_the_window(root, slope):
    evaluate, calls = _dual(lambda v: max(-1.0, slope * (v - root)))
    cp = cutting_plane(evaluate, 1, 100.0, 1e-4, 30)
    g = [c.grad[0] for c in cp.cuts]
    assert any(-G_TOL <= x <= 0.0 for x in g)  # a tight point from the feasible side
    assert cp.iterations < 30


def test_a_point_just_above_gamma_does_not_settle_the_search():
    # g(v0) = +G_TOL/2 is inside the old two-sided window; the search must go on to g <= 0
    root, slope = 1.0, -1.0
    v0 = root - 0.5 * G_TOL / -slope
    evaluate, calls = _dual(lambda v: slope * (v - root))
    cp = cutting_plane(evaluate, 1, 100.0, 1.0, 30, v_start=np.array([v0]))
    assert len(calls) > 1
    assert min(c.grad[0] for c in cp.cuts) <= 0.0


def test_a_slope_hint_reaches_the_window_in_one_step():
    root, slope = 0.2, -4.0
    evaluate, calls = _dual(lambda v: slope * (v - root))
    cp = cutting_plane(evaluate, 1, 100.0, 1.0, 30, v_start=np.array([0.15]), slope=slope)
    # the Newton step aims at the window's middle, so the second point is tight
    assert len(calls) == 2
    assert -G_TOL <= cp.cuts[-1].grad[0] <= 0.0


def test_a_jump_over_the_window_closes_the_bracket():
    # g jumps from +0.01 to -0.01 at v = 0.3: no v is tight; without the bracket rule the
    # search ran to max_cp_iter
    evaluate, calls = _dual(lambda v: 0.01 if v < 0.3 else -0.01)
    cp = cutting_plane(evaluate, 1, 100.0, 1e-4, 60)
    assert cp.iterations < 60
    above = max(c.v[0] for c in cp.cuts if c.grad[0] > 0)
    below = min(c.v[0] for c in cp.cuts if c.grad[0] < 0)
    assert below - above <= BRACKET_WIDTH * below
    assert above < 0.3 <= below


def test_noisy_g_near_the_root_still_ends_before_the_iteration_limit():
    evaluate, calls = _dual(lambda v: -3.0 * (v - 0.16), noise=2e-3, seed=3)
    cp = cutting_plane(evaluate, 1, 100.0, 1e-4, 40)
    assert cp.iterations < 40


def test_step_tolerances_loosen_with_the_gain_and_return_to_the_base():
    base = 1e-4
    eps0, g0 = mm.step_tolerances(np.inf, np.array([0.2]), base)
    assert eps0 == pytest.approx(30 * base) and g0 == pytest.approx(30 * G_TOL)
    eps1, g1 = mm.step_tolerances(0.0, np.array([0.2]), base)
    assert eps1 == base and g1 == G_TOL
    # in between: what a loose step can leave is at most a quarter of the last gain
    gain, v = 4e-3, np.array([0.5])
    eps, g_tol = mm.step_tolerances(gain, v, base)
    assert base < eps <= 0.25 * gain + 1e-15
    assert G_TOL < g_tol and v[0] * g_tol <= 0.25 * gain + 1e-15
    # an inactive constraint (v = 0) cannot lose anything to slack: the cap
    assert mm.step_tolerances(gain, np.array([0.0]), base)[1] == pytest.approx(30 * G_TOL)

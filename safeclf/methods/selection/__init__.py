"""Model selection under a compute budget: Algorithm 1 (UCB bandit) and the coarse grid of
Agarwal, Duchi, Bartlett and Levrard (2011), with uniform, oracle and successive-halving
baselines. The plugin wraps any registered method plugin (``classes`` in the spec)."""

from __future__ import annotations

from safeclf.methods.selection.estimator import PROCEDURES, BudgetedSelection
from safeclf.methods.selection.plugin import plugin

__all__ = ["BudgetedSelection", "PROCEDURES", "plugin"]

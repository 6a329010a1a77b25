"""Plot kinds the ramp method adds: the paper's Figures 2 and 3.

Each is ``fn(table, details, fig, **options)`` on the run's metrics table (one row per job).
Rows of the ramp method are recognised by their randomised metrics; every other method is
drawn from its deterministic metrics, so baselines (svm, zafar, fairlearn_eg,
thresholded_svm) appear beside it under their spec labels.

* ``fairness_tradeoff`` — Figure 2 (left): error against the observed fairness ratio
  s_p(protected)/s_p(privileged) (:mod:`safeclf.guarantees.groups`; the paper plots the inverse), ramp
  deterministic (predict's moved threshold, and the paper's threshold at zero where reported)
  and randomised, every other method's points, the
  unconstrained SVM as a horizontal line. Options: ``part`` (test).
* ``fairness_target`` — Figure 2 (right): the observed ratio against the target κ.
* ``churn_tradeoff`` — Figure 3: churn on D3 (left) and error on D1 ∪ D2 (right) against the
  churn target, training (dotted) and test (dashed). Options: ``churn`` (the constraint
  name, default churn), ``error`` (a monitored rate's name, default error_d12).
"""

from __future__ import annotations

import numpy as np


def _num(frame, col):
    import pandas as pd

    if col not in frame:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(frame[col], errors="coerce")


def _is_ramp(frame, part):
    return _num(frame, f"{part}_randomized_error").notna()


def _mean_by(frame, key, cols):
    data = frame.assign(**{f"_{c}": _num(frame, c) for c in cols}, _k=key)
    return data.groupby("_k")[[f"_{c}" for c in cols]].mean().sort_index()


def fairness_tradeoff(t, details, fig, part="test", x=None, y=None):
    ax = fig.add_subplot(1, 1, 1)
    xr, yr = x or f"{part}_fairness_ratio", y or f"{part}_error"
    ramp = t[_is_ramp(t, part)]
    styles = {"deterministic": ("o", "C0"), "randomized": ("s", "C1")}
    for method, g in ramp.groupby("method", sort=False):
        ax.plot(_num(g, xr), _num(g, yr), styles["deterministic"][0],
                color=styles["deterministic"][1], label=f"{method} (deterministic, moved threshold)")
        zx, zy = _num(g, f"{part}_zero_threshold_fairness_ratio"), _num(g, f"{part}_zero_threshold_error")
        if zy.notna().any() and x is None and y is None:
            ax.plot(zx, zy, "D", color="C3", mfc="none",
                    label=f"{method} (deterministic, threshold 0: the paper's)")
        ax.plot(_num(g, f"{part}_randomized_fairness_ratio"), _num(g, f"{part}_randomized_error"),
                styles["randomized"][0], color=styles["randomized"][1], mfc="none",
                label=f"{method} (randomised)")
    others = t[~_is_ramp(t, part)]
    for method, g in others.groupby("method", sort=False):
        xs, ys = _num(g, xr), _num(g, yr)
        if g["params"].nunique() == 1:  # one setting: a reference line, not a trade-off
            ax.axhline(float(ys.mean()), ls="--", color="C2", lw=1,
                       label=f"{method} (error {ys.mean():.3f} at ratio {xs.mean():.2f})")
        else:
            ax.plot(xs, ys, "^", label=method, alpha=0.85)
    ax.set_xlabel("fairness ratio s_p(protected)/s_p(privileged)" + f" ({part})")
    ax.set_ylabel(f"{part} error rate")
    ax.set_title("Figure 2 (left): error vs fairness ratio")
    ax.legend(fontsize=7)


def fairness_target(t, details, fig, part="test"):
    ax = fig.add_subplot(1, 1, 1)
    ramp = t[_is_ramp(t, part)]
    target = _num(ramp, "constraint_fairness_ratio_target")
    if target.isna().all():
        target = _num(ramp, "param.kappa")
    lines = [(f"{part}_fairness_ratio", "C0", "-", "deterministic (moved), " + part),
             (f"{part}_zero_threshold_fairness_ratio", "C3", "-", "deterministic (at 0), " + part),
             (f"{part}_randomized_fairness_ratio", "C1", "-", "randomised, " + part),
             ("train_fairness_ratio", "C0", ":", "deterministic, train"),
             ("train_randomized_fairness_ratio", "C1", ":", "randomised, train")]
    for col, color, ls, label in lines:
        if col in ramp:
            stats = _mean_by(ramp, target.to_numpy(), [col])
            ax.plot(stats.index, stats.iloc[:, 0], marker="o", ls=ls, color=color, label=label)
    if len(target.dropna()):
        lo, hi = float(target.min()), float(target.max())
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="observed = target")
    ax.set_xlabel("target κ")
    ax.set_ylabel("observed fairness ratio s_p(protected)/s_p(privileged)")
    ax.set_title("Figure 2 (right): observed ratio vs κ (the paper: its inverse vs 1/κ)")
    ax.legend(fontsize=7)


def churn_tradeoff(t, details, fig, churn="churn", error="error_d12"):
    ramp = t[_is_ramp(t, "test")]
    others = t[~_is_ramp(t, "test")]
    target = _num(ramp, f"constraint_{churn}_target")
    panels = [(f"constraint_{churn}", "churn on D3"), (f"monitor_{error}", "error rate on D1 ∪ D2")]
    for k, (metric, label) in enumerate(panels, start=1):
        ax = fig.add_subplot(1, 2, k)
        for part, ls in (("test", "--"), ("train", ":")):
            for suffix, color, name in (("", "C0", "deterministic"),
                                        ("_randomized", "C1", "randomised")):
                col = f"{part}_{metric}{suffix}"
                if col in ramp and len(ramp):
                    stats = _mean_by(ramp, target.to_numpy(), [col])
                    ax.plot(stats.index, stats.iloc[:, 0], marker="o", ls=ls, color=color,
                            label=f"{name}, {part}")
            for method, g in others.groupby("method", sort=False):
                col = f"{part}_{metric}"
                if col in g and len(target.dropna()):
                    v = float(_num(g, col).mean())
                    ax.plot([target.min(), target.max()], [v, v], ls=ls, color="C2",
                            label=f"{method}, {part}")
        if k == 1 and len(target.dropna()):
            lo, hi = float(target.min()), float(target.max())
            ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, label="churn = target")
        ax.set_xlabel("churn target")
        ax.set_ylabel(label)
        ax.set_title(f"Figure 3: {label}")
        ax.legend(fontsize=6)


PLOTS = {
    "fairness_tradeoff": fairness_tradeoff,
    "fairness_target": fairness_target,
    "churn_tradeoff": churn_tradeoff,
}

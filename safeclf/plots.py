"""matplotlib figures written into a run folder (PNG and SVG).

Built-in kinds work on the metrics table: ``bar`` (a metric by method, mean ± std, one panel per
dataset), ``scatter`` (metric against metric, one point per method and parameter setting) and
``line`` (a metric against a parameter or metric, mean ± std over seeds, a line per method).
Methods add kinds through ``MethodPlugin.plots``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from safeclf.spec import PlotEntry, Spec


def _figure(n_panels: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(n_panels, 3)
    rows = int(np.ceil(n_panels / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n_panels])


def _label(method: str, params: str, varying: list[str]) -> str:
    """The method's label with the parameters that vary between its own rows."""
    p = json.loads(params)
    shown = [f"{k}={p[k]}" for k in varying if k in p]
    return method + (f" ({', '.join(shown)})" if shown else "")


def _ok(frame):
    return frame[frame["status"] == "ok"]


def _numeric(frame, col):
    import pandas as pd

    return pd.to_numeric(frame[col], errors="coerce")


def bar(frame, spec: PlotEntry, fig_axes):
    fig, axes = fig_axes
    metric = spec.model_extra.get("metric", "test_error")
    from safeclf.runs import varying_by_method

    varying = varying_by_method(frame)
    for ax, (dataset, grp) in zip(axes, _ok(frame).groupby("dataset", sort=False)):
        labels, means, stds = [], [], []
        for (method, params), g in grp.groupby(["method", "params"], sort=False):
            v = _numeric(g, metric).dropna() if metric in g else []
            labels.append(_label(method, params, varying[method]))
            means.append(np.mean(v) if len(v) else np.nan)
            stds.append(np.std(v, ddof=1) if len(v) > 1 else 0.0)
        x = np.arange(len(labels))
        ax.bar(x, means, yerr=stds, capsize=3, color="tab:blue", alpha=0.8)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(str(dataset))
        ax.set_ylabel(metric)
    return fig


def _xy_points(frame, x, y):
    """Mean and std of x and y per (dataset, method, params)."""
    out = []
    for (dataset, method, params), g in _ok(frame).groupby(["dataset", "method", "params"], sort=False):
        xs, ys = _numeric(g, x), _numeric(g, y)
        keep = xs.notna() & ys.notna()
        if keep.any():
            several = keep.sum() > 1
            out.append((dataset, method, params, xs[keep].mean(), xs[keep].std(ddof=1) if several else 0,
                        ys[keep].mean(), ys[keep].std(ddof=1) if several else 0))
    return out


def scatter(frame, spec: PlotEntry, fig_axes):
    fig, axes = fig_axes
    x, y = spec.model_extra["x"], spec.model_extra["y"]
    points = _xy_points(frame, x, y)
    datasets = list(dict.fromkeys(frame["dataset"]))
    for ax, dataset in zip(axes, datasets):
        for method in dict.fromkeys(p[1] for p in points):
            pts = [p for p in points if p[0] == dataset and p[1] == method]
            if pts:
                ax.errorbar([p[3] for p in pts], [p[5] for p in pts], xerr=[p[4] for p in pts],
                            yerr=[p[6] for p in pts], fmt="o", capsize=2, label=method, alpha=0.8)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(str(dataset))
        ax.legend(fontsize=8)
    return fig


def line(frame, spec: PlotEntry, fig_axes):
    fig, axes = fig_axes
    x, y = spec.model_extra["x"], spec.model_extra["y"]
    ok = _ok(frame)
    for ax, (dataset, grp) in zip(axes, ok.groupby("dataset", sort=False)):
        for method, g in grp.groupby("method", sort=False):
            if x not in g or y not in g:
                continue
            data = g.assign(_x=_numeric(g, x), _y=_numeric(g, y)).dropna(subset=["_x", "_y"])
            if data.empty:
                continue
            stats = data.groupby("_x")["_y"].agg(["mean", "std"]).sort_index()
            ax.plot(stats.index, stats["mean"], marker="o", label=method)
            ax.fill_between(stats.index, stats["mean"] - stats["std"].fillna(0),
                            stats["mean"] + stats["std"].fillna(0), alpha=0.2)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(str(dataset))
        if spec.model_extra.get("logx"):
            ax.set_xscale("log")
        ax.legend(fontsize=8)
    return fig


BUILTIN = {"bar": bar, "scatter": scatter, "line": line}


def _filtered(frame, options: dict):
    """Rows of the methods and datasets an option lists (``methods: [a, b]``, ``datasets:``)."""
    for key, col in (("methods", "method"), ("datasets", "dataset")):
        if options.get(key):
            frame = frame[frame[col].isin(list(options[key]))]
    return frame


def write_plots(spec: Spec, frame, details: dict, folder: Path) -> list[str]:
    """Draw every plot of the spec into ``folder``; returns one line per plot that failed
    (a plot problem never loses the run's results)."""
    from safeclf import registry

    if frame.empty or not spec.plots:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    plugin_kinds, wanted = {}, list(spec.plots)
    for m in spec.methods:
        plugin = registry.get_method(m.method)
        plugin_kinds.update(plugin.plots)
        for kind in plugin.auto_plots:
            if all(p.kind != kind for p in wanted):
                wanted.append(PlotEntry(kind=kind))
    problems = []
    import matplotlib.pyplot as plt

    for i, p in enumerate(wanted):
        name = p.name or (f"{p.kind}_{p.model_extra.get('metric') or p.model_extra.get('y') or i}")
        try:
            if p.kind in BUILTIN:
                rows = _filtered(frame, p.model_extra)
                if rows.empty:
                    raise ValueError("its methods/datasets filter selects no rows")
                fig = BUILTIN[p.kind](rows, p, _figure(rows["dataset"].nunique()))
            else:
                fig = plt.figure(figsize=(5.2, 3.8))
                plugin_kinds[p.kind](frame, details, fig, **p.model_extra)
            fig.tight_layout()
            for ext in ("png", "svg"):
                fig.savefig(folder / f"{name}.{ext}", dpi=120)
            plt.close(fig)
        except Exception as exc:  # a broken plot must not lose the run
            plt.close("all")
            problems.append(f"plots[{i}] ({p.kind}): {type(exc).__name__}: {exc}")
    return problems

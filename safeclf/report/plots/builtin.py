"""matplotlib figures written into a run folder (PNG and SVG).

Built-in kinds work on the metrics table: ``bar`` (a metric by method, mean ± std, one panel per
dataset), ``scatter`` (metric against metric, one point per method and parameter setting) and
``line`` (a metric against a parameter or metric, mean ± std over seeds, a line per method).
Two more read the spec as well: ``frontier`` (a metric against a metric, each method's
settings with intervals, certified methods marked, the settings no other beats ringed:
:mod:`safeclf.report.plots.frontier`) and ``seldonian`` (failure rate, solution rate and test error against
training-set size: :mod:`safeclf.report.plots.seldonian`). Methods add kinds through
``MethodPlugin.plots``. Every figure is drawn in :func:`safeclf.report.plots.style.context`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from safeclf.report.plots.axes import (  # noqa: F401  (kinds of plugins use them too)
    PARTS,
    SYMBOLS,
    WORDS,
    _figure,
    _label,
    _legend,
    _log_axis,
    _log_if_decades,
    _numeric,
    _sort_key,
    _Styles,
    _value_text,
    _words,
    axis_label,
)
from safeclf.spec.schema import PlotEntry, Spec
from safeclf.store.result import ok_rows


def bar(frame, spec: PlotEntry, fig_axes):
    fig, axes = fig_axes
    metric = spec.model_extra.get("metric", "test_error")
    from safeclf.store.folder import mean_std, varying_by_method

    varying = varying_by_method(frame)
    order = list(dict.fromkeys(frame["method"]))
    for ax, (dataset, grp) in zip(axes, frame.groupby("dataset", sort=False)):
        labels, means, stds = [], [], []
        settings = sorted(grp.groupby(["method", "params"], sort=False),
                          key=lambda kv: (order.index(kv[0][0]), _sort_key(kv[0][1], varying[kv[0][0]])))
        for (method, params), g in settings:
            v = _numeric(g, metric).dropna() if metric in g else []
            labels.append(_label(method, params, varying[method]))
            mean, std = mean_std(v, few=0.0)
            means.append(mean)
            stds.append(std)
        x = np.arange(len(labels))
        ax.bar(x, means, yerr=stds, capsize=3, color="C0", alpha=0.8)
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_title(str(dataset))
        ax.set_ylabel(axis_label(metric))
        _log_if_decades(ax, means, "y")
        _bound_line(ax, spec)
    return fig


def _bound_line(ax, spec: PlotEntry) -> None:
    """The promised bound on the plotted quantity (options ``bound`` and ``bound_label``)."""
    bound = spec.model_extra.get("bound")
    if bound is None:
        return
    ax.axhline(float(bound), color="C1", ls="--", lw=1.2,
               label=spec.model_extra.get("bound_label") or f"bound {bound:g}")
    ax.legend(fontsize=7)


def _xy_points(frame, x, y):
    """Mean and std of x and y per (dataset, method, params)."""
    from safeclf.store.folder import mean_std

    out = []
    for (dataset, method, params), g in frame.groupby(["dataset", "method", "params"], sort=False):
        xs, ys = _numeric(g, x), _numeric(g, y)
        keep = xs.notna() & ys.notna()
        if keep.any():
            out.append((dataset, method, params, *mean_std(xs[keep], few=0.0),
                        *mean_std(ys[keep], few=0.0)))
    return out


def scatter(frame, spec: PlotEntry, fig_axes):
    """A point per method and setting (mean ± std over seeds). Points are coloured by method
    and its non-numeric varying parameters (e.g. a formulation); numeric ones label the points
    when the panel is small enough to read them."""
    fig, axes = fig_axes
    x, y = spec.model_extra["x"], spec.model_extra["y"]
    from safeclf.store.folder import varying_by_method

    varying = varying_by_method(frame)
    points = _xy_points(frame, x, y)
    datasets = list(dict.fromkeys(p[0] for p in points))
    style = _Styles()

    def split(method, params):
        values = json.loads(params)
        kinds = [k for k in varying[method] if not _is_number(values.get(k))]
        numbers = [k for k in varying[method] if k not in kinds]
        return _label(method, params, kinds), _label("", params, numbers).strip(" ()")

    for ax, dataset in zip(axes, datasets):
        pts = [p for p in points if p[0] == dataset]
        series: dict[str, list] = {}
        for p in sorted(pts, key=lambda p: _sort_key(p[2], varying[p[1]])):
            series.setdefault(split(p[1], p[2])[0], []).append(p)
        for label, mine in series.items():
            ax.errorbar([p[3] for p in mine], [p[5] for p in mine], xerr=[p[4] for p in mine],
                        yerr=[p[6] for p in mine], fmt=style(label)["marker"], capsize=2,
                        label=label, alpha=0.8, color=style(label)["color"])
            if len(pts) <= 24:
                for p in mine:
                    text = split(p[1], p[2])[1]
                    if text:
                        ax.annotate(text, (p[3], p[5]), fontsize=6, alpha=0.8,
                                    xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel(axis_label(y))
        ax.set_title(str(dataset))
        _log_if_decades(ax, [p[3] for p in pts], "x")
        _log_if_decades(ax, [p[5] for p in pts], "y")
    _legend(fig, axes)
    return fig


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def line(frame, spec: PlotEntry, fig_axes):
    fig, axes = fig_axes
    x, y = spec.model_extra["x"], spec.model_extra["y"]
    from safeclf.store.folder import varying_keys

    ok = frame
    style = _Styles()
    single = ok["method"].nunique() == 1
    for ax, (dataset, grp) in zip(axes, ok.groupby("dataset", sort=False)):
        xs, ys = [], []
        for method, g in grp.groupby("method", sort=False):
            if x not in g or y not in g:
                continue
            data = g.assign(_x=_numeric(g, x), _y=_numeric(g, y)).dropna(subset=["_x", "_y"])
            if data.empty:
                continue
            # every other parameter that varies gets its own line (never averaged together)
            others = [k for k in varying_keys(data["params"]) if f"param.{k}" != x]
            data = data.assign(_setting=[
                json.dumps({k: json.loads(p).get(k) for k in others}, sort_keys=True, default=str)
                for p in data["params"]])
            for setting, d in sorted(data.groupby("_setting", sort=False),
                                     key=lambda kv: _sort_key(kv[0], others)):
                stats = d.groupby("_x")["_y"].agg(["mean", "std"]).sort_index()
                label = _label(method, setting, others)
                if single and others:  # one method: its name adds nothing to each label
                    label = label[len(method):].strip(" ()")
                ax.plot(stats.index, stats["mean"], label=label, **style(label))
                ax.fill_between(stats.index, stats["mean"] - stats["std"].fillna(0),
                                stats["mean"] + stats["std"].fillna(0), alpha=0.15,
                                color=style(label)["color"])
                xs += list(stats.index)
                ys += list(stats["mean"])
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel(axis_label(y))
        ax.set_title(str(dataset))
        if spec.model_extra.get("logx") and xs and min(xs) > 0:
            _log_axis(ax, "x", xs)
        else:
            _log_if_decades(ax, xs, "x")
        _log_if_decades(ax, ys, "y")
    _legend(fig, axes)
    return fig


BUILTIN = {"bar": bar, "scatter": scatter, "line": line}


_FILTERS = (("methods", "method"), ("datasets", "dataset"))


def _filtered(frame, options: dict, ok_only: bool = True):
    """The successful jobs' rows (every job's with ``ok_only`` false) of the methods and
    datasets an option lists (``methods: [a, b]``, ``datasets:``): what every plot, built-in
    or a plugin's, draws."""
    frame = ok_rows(frame) if ok_only else frame
    for key, col in _FILTERS:
        if options.get(key):
            frame = frame[frame[col].isin(list(options[key]))]
    return frame


def _in_spec_order(frame, spec: Spec):
    """Rows ordered by the spec's datasets and methods (the table sorts them by name)."""
    dorder = {spec.dataset_label(i): i for i in range(len(spec.datasets))}
    morder = {spec.method_label(i): i for i in range(len(spec.methods))}
    key = frame["dataset"].map(dorder).fillna(len(dorder)) * (len(morder) + 1) \
        + frame["method"].map(morder).fillna(len(morder))
    return frame.iloc[np.argsort(key.to_numpy(), kind="stable")]


def _plotted(p: PlotEntry) -> list[str]:
    from safeclf.spec.schema import BUILTIN_PLOT_KEYS

    extra = p.model_extra or {}
    if p.kind == "bar":
        return [extra.get("metric", "test_error")]
    return [extra[k] for k in BUILTIN_PLOT_KEYS[p.kind]]


def _with_values(rows, p: PlotEntry):
    """The successful rows that have every plotted column, so no panel is drawn empty."""
    cols = _plotted(p)
    if any(c not in rows.columns for c in cols):
        return rows.iloc[0:0]
    keep = rows["status"] == "ok"
    for c in cols:
        keep &= _numeric(rows, c).notna()
    return rows[keep]


def _kinds(spec: Spec) -> tuple[dict, list[PlotEntry]]:
    """The plot kinds the spec's method plugins add, and the plots to draw: the spec's, then
    each plugin's automatic ones the spec does not draw already."""
    from safeclf.plugins import registry

    plugin_kinds, wanted = {}, list(spec.plots)
    for m in spec.methods:
        plugin = registry.get_method(m.method)
        plugin_kinds.update(plugin.plots)
        for kind in plugin.auto_plots:
            if all(p.kind != kind for p in wanted):
                wanted.append(PlotEntry(kind=kind))
    return plugin_kinds, wanted


def wanted_plots(spec: Spec, frame) -> list[PlotEntry]:
    """The plots a run draws for a results table (none for an empty one), each by
    :func:`write_plot`."""
    if frame.empty or not spec.plots:
        return []
    return _kinds(spec)[1]


def write_plot(spec: Spec, frame, details: dict, folder: Path, i: int) -> list[str]:
    """Draw plot ``i`` of :func:`wanted_plots` into ``folder`` (each plot on its own, so a
    run's plots can be drawn side by side in worker processes); its problem as a list of at
    most one line."""
    plugin_kinds, wanted = _kinds(spec)
    p = wanted[i]
    folder.mkdir(parents=True, exist_ok=True)
    from safeclf.report.plots import style as plot_style

    with plot_style.context():
        problem = _write_one(spec, frame, details, folder, p, i, plugin_kinds)
    return [f"plots[{i}] ({p.kind}): {problem}"] if problem else []


def _spec_kinds():
    """Built-in kinds drawn from the spec as well as the table (certified methods, δ,
    training-set sizes): ``kind -> (draw(frame, entry, spec), all statuses?)``."""
    from safeclf.report.plots.frontier import frontier
    from safeclf.report.plots.seldonian import seldonian

    return {"frontier": (frontier, False), "seldonian": (seldonian, True)}


def _write_one(spec: Spec, frame, details: dict, folder: Path, p: PlotEntry, i: int,
               plugin_kinds: dict) -> str | None:
    """Draw plot entry ``p`` (the spec's ``plots[i]``) into ``folder``; the problem in one
    line, or ``None``."""
    import matplotlib.pyplot as plt

    name = p.name or (f"{p.kind}_{p.model_extra.get('metric') or p.model_extra.get('y') or i}")
    spec_kinds = _spec_kinds()
    try:
        every_status = p.kind in spec_kinds and spec_kinds[p.kind][1]
        rows = _filtered(frame, p.model_extra, ok_only=not every_status)
        if rows.empty:
            raise ValueError("its methods/datasets filter selects no "
                             + ("job" if every_status else "successful job"))
        if p.kind in BUILTIN or p.kind in spec_kinds:
            rows = _in_spec_order(rows, spec)
            if not every_status:
                rows = _with_values(rows, p)
                if rows.empty:
                    raise ValueError("no successful job reports " + " and ".join(_plotted(p)))
        if p.kind in spec_kinds:
            fig = spec_kinds[p.kind][0](rows, p, spec)
        elif p.kind in BUILTIN:
            fig = BUILTIN[p.kind](rows, p, _figure(rows["dataset"].nunique()))
        else:
            fig = plt.figure(figsize=(5.2, 3.8))
            options = {k: v for k, v in p.model_extra.items() if k not in dict(_FILTERS)}
            plugin_kinds[p.kind](rows, details, fig, **options)
        fig.tight_layout()
        # the tight box once for both files (``bbox_inches="tight"`` draws the figure again
        # for each), padded as "tight" pads it
        box = fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
        for ext in ("png", "svg"):
            fig.savefig(folder / f"{name}.{ext}", dpi=120, bbox_inches=box)
        plt.close(fig)
    except Exception as exc:  # a broken plot must not lose the run
        plt.close("all")
        return f"{type(exc).__name__}: {exc}"
    return None

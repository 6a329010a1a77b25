"""The ``frontier`` plot kind: what a promise costs, method by method.

``{kind: frontier, x: test_fairness_ratio, y: test_error}`` draws, per dataset, each job as a
faint dot and each method's parameter setting as its mean with a confidence interval over the
seeds on both axes (Student t at the spec's ``confidence``); a method's settings are joined in
order of x (a κ grid traces its own frontier). Certified methods (``certify`` on their entry)
are drawn with hollow markers. The settings no other setting beats on both axes are ringed
and joined by a grey dashed line: the frontier. Better is, per axis, nearer one for a ratio
of group rates, smaller for an error, a loss, a false-positive or -negative rate, larger
otherwise; ``better: {x: max|min|one, y: ...}`` says it. ``bound: 0.8`` draws the promised bound on x
(``bound_label`` names it, e.g. ``κ``).
"""

from __future__ import annotations

import numpy as np

from safeclf.report.plots.axes import _figure, _label, _legend, _numeric, _sort_key, _Styles, axis_label


def mean_interval(values, confidence: float) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its Student-t interval at ``confidence``
    (0 for a single value)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    if v.size == 1:
        return float(v[0]), 0.0
    half = stats.t.ppf(0.5 + confidence / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), float(half)


#: How a value is better on an axis: larger, smaller, or nearer one (a ratio of group rates
#: is fairest at 1: a ratio of 1.6 is no fairer than one of 1/1.6).
BETTER = {"max": lambda v: v, "min": lambda v: -v,
          "one": lambda v: min(v, 1 / v) if v > 0 else v}


def better_default(column: str) -> str:
    """``one`` for a ratio of group rates, ``min`` for an error or loss, else ``max``."""
    if "ratio" in column:
        return "one"
    return "min" if any(w in column for w in ("error", "loss", "fpr", "fnr", "seconds")) \
        else "max"


def pareto(points: list[tuple[float, float]], better_x: str = "max",
           better_y: str = "min") -> list[int]:
    """Indices of the points no other point beats on both axes (ties kept), each axis
    judged by :data:`BETTER`."""
    fx, fy = BETTER[better_x], BETTER[better_y]
    scored = [(fx(x), fy(y)) for x, y in points]
    out = []
    for i, (x, y) in enumerate(scored):
        beaten = any(u >= x and v >= y and (u, v) != (x, y) for u, v in scored)
        if not beaten:
            out.append(i)
    return out


def certified_labels(spec) -> set[str]:
    """Labels of the spec's methods that certify their promises."""
    return {spec.method_label(j) for j, m in enumerate(spec.methods)
            if getattr(m, "certify", None) is not None}


def frontier(frame, p, spec, fig_axes=None):
    """Draw the frontier of ``frame`` (the successful jobs) as plot entry ``p`` says."""
    from safeclf.store.folder import varying_by_method

    extra = p.model_extra or {}
    x, y = extra["x"], extra["y"]
    better = extra.get("better") or {}
    better_x, better_y = better.get("x") or better_default(x), better.get("y") or better_default(y)
    confidence = getattr(spec, "confidence", 0.95)
    certified = certified_labels(spec)
    fig, axes = fig_axes or _figure(frame["dataset"].nunique())
    varying = varying_by_method(frame)
    style = _Styles()
    for ax, (dataset, grp) in zip(axes, frame.groupby("dataset", sort=False)):
        means = []
        for method, g in grp.groupby("method", sort=False):
            settings = sorted(g.groupby("params", sort=False),
                              key=lambda kv: _sort_key(kv[0], varying[method]))
            line = []
            for params, h in settings:
                xs, ys = _numeric(h, x), _numeric(h, y)
                label = _label(method, params, varying[method])
                colour = style(method)["color"]
                ax.plot(xs, ys, ".", color=colour, alpha=0.25, ms=4)
                mx, hx = mean_interval(xs, confidence)
                my, hy = mean_interval(ys, confidence)
                if not (np.isfinite(mx) and np.isfinite(my)):
                    continue
                hollow = method in certified
                ax.errorbar([mx], [my], xerr=[hx], yerr=[hy], fmt=style(method)["marker"],
                            color=colour, mfc="white" if hollow else colour, mew=1.4,
                            label=method + (" (certified)" if hollow else ""), zorder=3)
                if len(settings) > 1:
                    text = _label("", params, varying[method]).strip(" ()")
                    ax.annotate(text, (mx, my), fontsize=7, xytext=(4, 4),
                                textcoords="offset points", color=colour)
                line.append((mx, my))
                means.append((mx, my, label))
            if len(line) > 1:
                line.sort()
                ax.plot(*zip(*line), "-", color=style(method)["color"], alpha=0.6, lw=1)
        front = [means[i] for i in pareto([m[:2] for m in means], better_x, better_y)]
        if front:
            front.sort()
            ax.plot([f[0] for f in front], [f[1] for f in front], "o--", ms=13, mfc="none",
                    mec="0.4", mew=1, color="0.5", lw=1, zorder=2,
                    label="frontier (not beaten on both axes)")
        bound = extra.get("bound")
        if bound is not None:
            ax.axvline(float(bound), color="0.2", ls=":", lw=1.2,
                       label=f"{extra.get('bound_label') or 'bound'} = {float(bound):g}")
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel(axis_label(y))
        ax.set_title(f"{dataset}: mean and {confidence:.0%} interval over seeds")
    _legend(fig, axes)
    return fig


"""The ``seldonian`` plot kind: the Seldonian experiment (Thomas et al. 2019, Fig. 3).

``{kind: seldonian, failure: promise_constraint_fairness_ratio_beyond, error: test_error}``
draws three panels against the training-set size, one line per method: the **failure rate**
(the share of trials whose returned model breaks its promise on the test rows: the mean of
the ``failure`` column, 0 or 1 per job; a ``no_solution`` job returned no model, so it is
not a failure), the **solution rate** (the share of trials that returned a model: status not
``no_solution``), and the **test error** of the models returned. The two rates carry exact
binomial (Clopper–Pearson) intervals at the spec's ``confidence``, not std/√n; the error its
mean's Student-t interval. The failure panel draws each certified method's δ.

The training-set size of a dataset entry is its ``split.train_rows``: give the same data at
several sizes as several dataset entries (``adult_1k``, ``adult_3k``, ...). Jobs that failed
(an error, not ``no_solution``) are left out and counted in the figure's note.
"""

from __future__ import annotations

import numpy as np

from safeclf.report.plots.axes import _figure, _Styles, axis_label
from safeclf.report.plots.frontier import mean_interval


def _failure_words(column: str) -> str:
    """``promise_<name>_beyond`` as "<name> beyond its bound (test)"."""
    if column.startswith("promise_") and column.endswith("_beyond"):
        return f"{column[len('promise_'):-len('_beyond')]} beyond its bound (test)"
    return axis_label(column)

#: The plot's keys that name columns of the metrics table.
KEYS = ("failure", "error")


def sizes(spec, datasets=None) -> dict[str, int]:
    """Training-set size per dataset label (:func:`safeclf.spec.check.train_rows`)."""
    from safeclf.spec.check import train_rows

    return train_rows(spec, datasets, "the Seldonian plot draws against training-set size")


def _deltas(spec) -> dict[str, float]:
    return {spec.method_label(j): m.certify.delta for j, m in enumerate(spec.methods)
            if getattr(m, "certify", None) is not None}


def curves(frame, p, spec):
    """Per method, per training-set size: ``(n, trials, failures, solved, error mean, error
    half-width)``; the rows of ``frame`` whose status is ``ok`` or ``no_solution``."""
    extra = p.model_extra or {}
    n_of = sizes(spec, extra.get("datasets"))
    confidence = getattr(spec, "confidence", 0.95)
    rows = frame[frame["status"].isin(["ok", "no_solution"])]
    out: dict[str, list[tuple]] = {}
    for (method, dataset), g in rows.groupby(["method", "dataset"], sort=False):
        if dataset not in n_of:
            continue
        ok = g[g["status"] == "ok"]
        fail = ok[extra["failure"]] if extra["failure"] in ok else None
        failures = (np.nan if fail is None or fail.isna().all()
                    else int((fail.fillna(0) >= 0.5).sum()))
        err = ok[extra["error"]] if extra["error"] in ok else []
        mean, half = mean_interval(err, confidence)
        out.setdefault(method, []).append((n_of[dataset], len(g), failures, len(ok), mean, half))
    return {m: sorted(v) for m, v in out.items()}


def seldonian(frame, p, spec, fig_axes=None):
    """Draw the three panels of plot entry ``p`` from ``frame`` (every job of the run)."""
    from safeclf.guarantees.promises import clopper_pearson

    extra = p.model_extra or {}
    confidence = getattr(spec, "confidence", 0.95)
    data = curves(frame, p, spec)
    if not data:
        raise ValueError("no job of the selected methods ran on a dataset with train_rows")
    fig, axes = fig_axes or _figure(3)
    style = _Styles()
    deltas = _deltas(spec)
    ns = sorted({c[0] for v in data.values() for c in v})
    for k, (method, points) in enumerate(data.items()):
        s = style(method)
        dodge = 1 + 0.025 * (k - (len(data) - 1) / 2)  # side by side on the log axis
        n = np.array([c[0] for c in points], float) * dodge
        trials = np.array([c[1] for c in points])
        for ax, counts in ((axes[0], [c[2] for c in points]), (axes[1], [c[3] for c in points])):
            keep = [k for k, c in enumerate(counts) if np.isfinite(c)]
            if not keep:
                continue
            rate = np.array([counts[k] / trials[k] for k in keep])
            lo, hi = np.array([clopper_pearson(int(counts[k]), int(trials[k]), confidence)
                               for k in keep]).T
            ax.errorbar(n[keep], rate, yerr=[rate - lo, hi - rate], label=method, capsize=3,
                        color=s["color"], marker=s["marker"], ls=s["linestyle"])
        mean = np.array([c[4] for c in points])
        half = np.array([c[5] for c in points])
        keep = np.isfinite(mean)
        axes[2].errorbar(n[keep], mean[keep], yerr=half[keep], label=method, capsize=3,
                         color=s["color"], marker=s["marker"], ls=s["linestyle"])
        if method in deltas:
            axes[0].axhline(deltas[method], color=s["color"], ls=":", lw=1.2,
                            label=f"δ = {deltas[method]:g} ({method})")
    titles = (f"failure rate: {_failure_words(extra['failure'])}",
              "solution rate (a model returned)", axis_label(extra["error"]))
    ylabels = ("share of trials (Clopper–Pearson interval)",
               "share of trials (Clopper–Pearson interval)",
               f"mean, {confidence:.0%} t interval")
    for ax, title, ylabel in zip(axes, titles, ylabels):
        ax.set_xscale("log")
        ax.set_xlim(min(ns) / 1.6, max(ns) * 1.6)  # one size alone: not a decade-wide axis
        ax.set_xticks(ns, [f"{v:,}" for v in ns])
        ax.minorticks_off()
        ax.set_xlabel("training rows n")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
    for ax in axes[:2]:
        ax.set_ylim(-0.03, 1.03)
    axes[0].legend(fontsize=7)
    failed = int((~frame["status"].isin(["ok", "no_solution"])).sum())
    trials = sorted({c[1] for v in data.values() for c in v})
    note = f"trials per point: {', '.join(map(str, trials))}"
    if failed:
        note += f"; {failed} job(s) failed with an error and are left out"
    fig.text(0.01, -0.02, note, fontsize=7, color="0.3")
    return fig

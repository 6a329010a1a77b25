"""What every plot kind draws with: the figure, axis labels in the papers' names (ε, δ, τ, κ),
legends, log axes where the values span decades, and one style per method and setting. The
built-in kinds (:mod:`safeclf.report.plots.builtin`), the frontier and the Seldonian plot use
it; it uses none of them.
"""

from __future__ import annotations

import json

import numpy as np


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


#: The papers' symbols for parameters (Ben-Tal et al., Carlevaro et al., Goh et al., Ruf).
SYMBOLS = {"epsilon": "ε", "kappa": "κ", "tau": "τ", "n_tau": "n_τ", "delta": "δ",
           "nu": "ν", "eta": "η", "lam": "λ", "lambda": "λ", "lambda_v": "λ_v", "lambda_w": "λ_w",
           "gamma": "γ", "alpha": "α", "beta": "β", "sigma": "σ", "budget": "budget T"}
PARTS = {"train": "training", "cal": "calibration", "test": "test"}
#: Axis titles in words where the column or symbol alone is terse.
WORDS = {"n_tau": "number of τ values (n_τ)", "fpr": "false-positive rate",
         "fnr": "false-negative rate", "w_angle_deg": "angle of w to the Bayes normal (degrees)",
         "joint_fp_rate": "joint false-positive rate", "positive_rate": "positive rate s_p",
         "fairness_ratio": "fairness ratio s_p(protected) / s_p(privileged)"}


def axis_label(column: str) -> str:
    """A column in words: ``param.epsilon`` → ``ε``, ``test_fairness_ratio`` → ``fairness
    ratio (test)``, ``fit_seconds`` → ``fit seconds``."""
    if column.startswith("param."):
        name = column[len("param."):]
        return WORDS.get(name) or SYMBOLS.get(name, name.replace("_", " "))
    part, _, rest = column.partition("_")
    if part in PARTS and rest:
        return f"{_words(rest)} ({PARTS[part]})"
    return _words(column)


def _words(name: str) -> str:
    if name in WORDS:
        return WORDS[name]
    text = name.replace("_", " ")
    return "number of " + text[2:] if text.startswith("n ") else text


def _value_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _label(method: str, params: str, varying: list[str]) -> str:
    """The method's label with the parameters that vary between its own rows (symbols)."""
    p = json.loads(params)
    shown = [f"{SYMBOLS.get(k, k)}={_value_text(p[k])}" for k in varying if k in p]
    return method + (f" ({', '.join(shown)})" if shown else "")


def _sort_key(params: str, varying: list[str]):
    """Order settings by their varying values, numbers numerically (1, 5, 15, not 1, 15, 5)."""
    p = json.loads(params)
    key = []
    for k in varying:
        v = p.get(k)
        key.append((0, float(v), "") if isinstance(v, (int, float)) and not isinstance(v, bool)
                   else (1, 0.0, json.dumps(v, sort_keys=True, default=str)))
    return key


def _log_if_decades(ax, values, axis: str) -> None:
    """Log scale on ``axis`` when the positive values span more than two decades."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size and (v > 0).all() and v.max() / v.min() > 100:
        _log_axis(ax, axis, v)


def _log_axis(ax, axis: str, values) -> None:
    """A log axis; under four decades its ticks read as plain numbers (4, 16, 64), not 4×10⁰,
    and a few distinct values (a grid) get a tick each."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    v = np.asarray(values, dtype=float)
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    if v.max() / v.min() < 1e4:
        target = ax.xaxis if axis == "x" else ax.yaxis
        if len(np.unique(v)) <= 8:
            target.set_major_locator(FixedLocator(np.unique(v)))
        target.set_major_formatter(FuncFormatter(lambda t, _: f"{t:g}"))
        target.set_minor_formatter(NullFormatter())


def _legend(fig, axes) -> None:
    """One legend for the figure, right of the panels, with each label once (a legend per
    panel repeats itself and hides data); none when nothing is labelled."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if entries:
        fig.legend(list(entries.values()), list(entries), loc="center left",
                   bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)


class _Styles:
    """A distinct colour (and, past 10, marker and dash) per series label, the same in every
    panel of a figure."""

    MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

    def __init__(self):
        self.given: dict[str, dict] = {}

    def __call__(self, label: str) -> dict:
        if label not in self.given:
            i = len(self.given)
            self.given[label] = {"color": f"C{i % 10}", "marker": self.MARKERS[(i // 10) % 8],
                                 "linestyle": ("-", "--", ":", "-.")[(i // 10) % 4]}
        return self.given[label]


def _numeric(frame, col):
    import pandas as pd

    return pd.to_numeric(frame[col], errors="coerce")

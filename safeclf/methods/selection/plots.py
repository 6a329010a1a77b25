"""Plot kinds added by ``budgeted_selection``: the budget share of each class over rounds."""

from __future__ import annotations

import numpy as np


def budget_share(table, details, fig, budget=None, procedure="bandit", method=None,
                 dataset=None, **_):
    """Share of the quanta spent so far on each class F_i, against the round t, averaged over
    the jobs of ``procedure`` (default: Algorithm 1) with budget T = ``budget`` (default: the
    largest), optionally only the jobs of method label ``method`` and dataset ``dataset``. The
    oracle's class is the one whose share should approach 1 (Theorem 1)."""
    keep = None
    if (method is not None or dataset is not None) and table is not None and len(table):
        sel = table
        if method is not None:
            sel = sel[sel["method"] == method]
        if dataset is not None:
            sel = sel[sel["dataset"] == dataset]
        keep = set(sel["job"])
    jobs = [d for j, d in details.items()
            if (keep is None or j in keep) and isinstance(d, dict)
            and d.get("procedure") == procedure and d.get("path")]
    ax = fig.add_subplot(111)
    if not jobs:
        ax.text(0.5, 0.5, f"no {procedure} jobs with an allocation path", ha="center")
        return
    T = int(budget) if budget is not None else max(len(d["path"]) for d in jobs)
    jobs = [d for d in jobs if len(d["path"]) == T]
    if not jobs:
        ax.text(0.5, 0.5, f"no {procedure} job with T = {T}", ha="center")
        return
    names = jobs[0]["class_names"]
    K = len(names)
    share = np.zeros((T, K))
    for d in jobs:
        onehot = np.zeros((T, K))
        onehot[np.arange(T), np.asarray(d["path"]) - 1] = 1.0
        share += np.cumsum(onehot, axis=0) / np.arange(1, T + 1)[:, None]
    share /= len(jobs)
    t = np.arange(1, T + 1)
    colors = [__import__("matplotlib").colormaps["viridis"](k / max(K - 1, 1)) for k in range(K)]
    bands = ax.stackplot(t, share.T, labels=[f"F_{k + 1} ({n})" for k, n in enumerate(names)],
                 colors=colors)
    oracle = [d.get("oracle_class") for d in jobs if d.get("oracle_class")]
    title = f"budget share by class, {method or procedure}, T = {T}, {len(jobs)} job(s)"
    if oracle:
        vals, counts = np.unique(oracle, return_counts=True)
        best = int(vals[np.argmax(counts)])
        title += f"; oracle class F_{best} (hatched)"
        bands[best - 1].set_hatch("//")
        bands[best - 1].set_edgecolor("C1")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("round t")
    ax.set_ylabel("share of quanta T_i(t) / t")
    ax.set_xlim(1, T)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()

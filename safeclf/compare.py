"""Setting runs side by side: align rows by dataset, method and parameters (or ``--by``
fields), one column per run with the mean (± std) of a metric, and differences to the first."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from safeclf.errors import SpecError, closest
from safeclf.runs import load_run, metric_columns

DEFAULT_KEYS = ["dataset", "method", "params"]


def compare(run_dirs: list[str | Path], metric: str | None = None, by: list[str] | None = None):
    """A table with one row per aligned key and, for each run, ``mean`` and ``±std`` columns
    of ``metric``, plus ``Δ <run>`` columns (run minus the first run)."""
    import pandas as pd

    if not run_dirs:
        raise SpecError("compare: give at least one run folder")
    tables = []
    for d in run_dirs:
        _, _, table = load_run(d)
        tables.append((Path(d).name, table))
    names = [n for n, _ in tables]
    if len(set(names)) != len(names):
        names = [str(Path(d)) for d in run_dirs]
    available = sorted(set().union(*(metric_columns(t) for _, t in tables)))
    if metric is None:
        metric = "test_error" if "test_error" in available else (available or [None])[0]
    if metric not in available:
        raise SpecError(f"--metric: no run reports '{metric}'{closest(metric, available)}; "
                        f"known: {', '.join(available)}")
    keys = by or DEFAULT_KEYS
    for field in keys:
        for name, t in tables:
            if field not in t.columns:
                raise SpecError(f"--by: run '{name}' has no column '{field}'"
                                f"{closest(field, list(t.columns))}")
    merged = None
    for name, t in zip(names, (t for _, t in tables)):
        ok = t[t["status"] == "ok"].copy()
        ok[metric] = pd.to_numeric(ok.get(metric), errors="coerce")
        for k in keys:
            ok[k] = ok[k].astype(str)
        agg = ok.groupby(keys, sort=True)[metric].agg(["mean", "std", "count"]).reset_index()
        agg = agg.rename(columns={"mean": name, "std": f"{name} ±", "count": f"{name} n"})
        merged = agg if merged is None else merged.merge(agg, on=keys, how="outer")
    first = names[0]
    for name in names[1:]:
        merged[f"Δ {name}"] = merged[name] - merged[first]
    merged = merged.drop(columns=[f"{n} n" for n in names])
    return merged.sort_values(keys).reset_index(drop=True), metric


def render(frame, metric: str, fmt: str) -> str:
    """The comparison as csv, markdown, or a plain aligned table."""
    from safeclf.tables import to_markdown

    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "markdown":
        return f"**{metric}**\n\n" + to_markdown(frame)
    shown = frame.copy()
    for c in shown.columns:
        if shown[c].dtype.kind == "f":
            pattern = "{:+.4g}" if str(c).startswith("Δ") else "{:.4g}"
            shown[c] = shown[c].map(lambda v, p=pattern: "" if np.isnan(v) else p.format(v))
    return shown.to_string(index=False)

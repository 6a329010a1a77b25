"""Setting runs side by side for a paper table.

Rows are aligned by dataset, method and the *full* parameter set (the method's defaults filled
in, so ``{}`` and ``{"C": 1.0}`` of an svm are one model), or by ``--by`` fields; grid points
are never pooled: when the ``--by`` fields leave several parameter settings in one row, the
parameters are added to the alignment and a note says so. Each run is a column with the mean,
its standard deviation and ``n`` (jobs with a value); each later run has ``Δ`` (run − first
run) and, where both runs hold the same seeds (and folds), a paired t-test over them
(``scipy.stats.ttest_rel``); where the seeds differ no test is made and the row is flagged.
Runs are labelled by their short names, ``<name> <HH:MM>`` (``#2`` ... if two labels
coincide), and the folders listed in a footnote. A method a run certifies is marked
(``ramp_certified ✓ certified (δ=0.05)``); long parameter lists are abbreviated (a few
parameters, each value cut, ``…``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from safeclf.errors import SpecError, closest
from safeclf.store.folder import mean_std, metric_columns
from safeclf.store.read import load_tables as load_run
from safeclf.store.result import ok_rows

DEFAULT_KEYS = ["dataset", "method", "params"]
TEST = "paired t-test over matching seeds (scipy.stats.ttest_rel), two-sided"


@dataclass
class Comparison:
    """A comparison table with what a reader needs to interpret it."""

    table: object  # pandas DataFrame
    metric: str
    labels: list[str]
    folders: list[str]
    keys: list[str]
    notes: list[str] = field(default_factory=list)


def run_label(run_dir: Path, spec: dict, manifest: dict) -> str:
    """``<spec name> <HH:MM>`` from the manifest's start time (else the folder name)."""
    name = spec.get("name") or run_dir.name
    start = str(manifest.get("start") or "")
    if "T" in start:
        return f"{name} {start.split('T')[1][:5]}"
    return run_dir.name


def run_labels(loaded: list[tuple[Path, dict, dict]]) -> list[str]:
    """:func:`run_label` of each ``(folder, spec, manifest)``, ``#2`` ... added where two
    coincide: the short names both comparisons head their columns with."""
    labels, seen = [], {}
    for d, spec, manifest in loaded:
        label = run_label(d, spec, manifest)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return labels


def certified(specs: list[dict]) -> dict[str, str]:
    """Method label -> ``certified (δ=…)`` for the methods any of ``specs`` certifies (with
    the runs that do when not all of them do)."""
    found: dict[str, list] = {}
    for k, spec in enumerate(specs):
        for m in spec.get("methods") or []:
            if isinstance(m, dict) and isinstance(m.get("certify"), dict):
                found.setdefault(m.get("name") or m.get("method"), []).append(
                    (k, m["certify"].get("delta")))
    out = {}
    for label, runs in found.items():
        deltas = ", ".join(dict.fromkeys(f"δ={d:g}" if isinstance(d, int | float) else "δ=?"
                                         for _, d in runs))
        where = "" if len(runs) == len(specs) else \
            " in " + ", ".join(f"[{k + 1}]" for k, _ in runs)
        out[label] = f"certified ({deltas}){where}"
    return out


def mark_certified(frame, marks: dict[str, str]):
    """``frame``'s method column with each certified method marked."""
    if "method" in frame and marks:
        frame["method"] = [f"{m} ✓ {marks[m]}" if m in marks else m for m in frame["method"]]
    return frame


def full_params(table, spec: dict):
    """The ``params`` column with each method's defaults filled in (canonical JSON), so rows of
    the same model align whatever the spec spelt out."""
    from safeclf.plugins import registry

    plugins = {m.get("name") or m.get("method"): m.get("method") for m in spec.get("methods") or []}
    defaults = {}
    for label, name in plugins.items():
        try:
            defaults[label] = {k: v for k, v in registry.get_method(name).defaults().items()
                               if k != "random_state"}
        except SpecError:  # a plugin not installed here: align on the parameters as given
            defaults[label] = {}

    def canonical(method, params):
        given = json.loads(params) if isinstance(params, str) else dict(params or {})
        return json.dumps({**defaults.get(method, {}), **given}, sort_keys=True, default=str)

    return [canonical(m, p) for m, p in zip(table["method"], table["params"])]


def _paired_p(a, b) -> float:
    from scipy import stats

    diff = np.asarray(b, float) - np.asarray(a, float)
    if diff.size < 2:
        return math.nan
    if np.allclose(diff, diff[0]):
        return 1.0 if diff[0] == 0 else 0.0
    return float(stats.ttest_rel(b, a).pvalue)


def compare(run_dirs: list[str | Path], metric: str | None = None,
            by: list[str] | None = None) -> Comparison:
    """Align ``run_dirs`` on ``metric`` (default ``test_error``); see the module docstring."""
    import pandas as pd

    if not run_dirs:
        raise SpecError("compare: give at least one run folder")
    loaded, specs = [], []
    for d in run_dirs:
        spec, manifest, table = load_run(d)
        table = table.copy()
        table["params"] = full_params(table, spec)
        loaded.append((Path(d), spec, manifest, table))
        specs.append(spec)
    labels = run_labels([(d, spec, manifest) for d, spec, manifest, _ in loaded])
    tables = [t for *_, t in loaded]
    available = sorted(set().union(*(metric_columns(t) for t in tables)))
    if not available:
        raise SpecError(f"compare: no job of {'this run' if len(tables) == 1 else 'these runs'} "
                        "ended ok, so there is no metric to compare (the 'error' column of each "
                        "run's metrics.csv says why its jobs failed)")
    if metric is None:
        metric = "test_error" if "test_error" in available else (available or [None])[0]
    if metric not in available:
        raise SpecError(f"--metric: no run reports '{metric}'{closest(metric, available)}; "
                        f"known: {', '.join(available)}")
    keys = list(by or DEFAULT_KEYS)
    for column in keys:
        for label, t in zip(labels, tables):
            if column not in t.columns:
                raise SpecError(f"--by: run '{label}' has no column '{column}'"
                                f"{closest(column, list(t.columns))}")
    notes = []
    oks = []
    for label, t in zip(labels, tables):
        ok = ok_rows(t).copy()
        if ok.empty:
            notes.append(f"{label}: no job ended ok ({len(t)} jobs; see its metrics.csv)")
        ok[metric] = pd.to_numeric(ok[metric], errors="coerce") if metric in ok else np.nan
        for k in keys:
            ok[k] = ok[k].astype(str)
        if "fold" in ok and "fold" not in keys:  # no folds: one split per seed (NaN never pairs)
            ok["fold"] = ok["fold"].fillna(-1)
        oks.append(ok)
    if "params" not in keys and any(
            (ok.groupby(keys)["params"].nunique() > 1).any() for ok in oks if not ok.empty):
        keys.append("params")
        notes.append("several parameter settings fell in one row of the --by fields; "
                     "'params' was added so grid points are not pooled")
    cells = []
    for ok in oks:
        per = {}
        for key, g in ok.groupby(keys, sort=True):
            g = g.dropna(subset=[metric])
            per[key if isinstance(key, tuple) else (key,)] = g
        cells.append(per)
    rows = sorted(set().union(*cells), key=lambda k: tuple(map(str, k)))
    # jobs pair up across runs by split: seed and fold (and dataset when rows pool datasets)
    pair_on = [c for c in ("dataset", "seed", "fold") if c not in keys]
    out = []
    flagged = False
    for key in rows:
        row = dict(zip(keys, key))
        base = cells[0].get(key)
        for i, (label, per) in enumerate(zip(labels, cells)):
            g = per.get(key)
            values = g[metric].to_numpy(float) if g is not None else np.array([])
            row[label], row[f"{label} ±"] = mean_std(values)
            row[f"{label} n"] = int(values.size)
            if i == 0:
                continue
            row[f"Δ {label}"] = row[label] - row[labels[0]]
            p, pairing = math.nan, ""
            if base is not None and g is not None and values.size and len(base):
                a, b = base.set_index(pair_on)[metric], g.set_index(pair_on)[metric]
                if a.index.is_unique and b.index.is_unique and set(a.index) == set(b.index):
                    p = _paired_p(a.sort_index().to_numpy(), b.loc[a.sort_index().index].to_numpy())
                else:
                    pairing, flagged = "seeds differ", True
            row[f"p {label}"] = p
            row[f"note {label}"] = pairing
        out.append(row)
    frame = pd.DataFrame(out)
    frame = frame[[c for c in frame.columns if not (c.startswith("note ") and not frame[c].any())]]
    if "params" in keys and not frame.empty:
        frame["params"] = _short(frame, keys)
    if not frame.empty:
        frame = mark_certified(frame, certified(specs))
    if len(labels) > 1:
        notes.append(f"p: {TEST}; none where the runs' seeds differ")
    if flagged:
        notes.append("'seeds differ': the two runs do not hold the same seeds for this row, so "
                     "Δ compares unpaired means")
    folders = [str(p) for p, *_ in loaded]
    return Comparison(frame, metric, labels, folders, keys, notes)


#: Parameters shown per row, and the width of each value, before ``…`` abbreviates them.
SHOWN_PARAMS, VALUE_WIDTH = 3, 24


def _short(frame, keys=None) -> list[str]:
    """``k=v`` for the parameters that differ between rows of the same method (``-`` if none),
    at most :data:`SHOWN_PARAMS` of them, each value cut at :data:`VALUE_WIDTH` characters;
    the full parameters are in each run's metrics table."""
    from safeclf.store.folder import _short_params, varying_keys

    shown = []
    varying = {m: varying_keys(g["params"]) for m, g in frame.groupby("method", sort=False)} \
        if "method" in frame else {None: varying_keys(frame["params"])}
    for _, r in frame.iterrows():
        ks = varying.get(r.get("method"), varying.get(None, []))
        text = _short_params(r["params"], ks[:SHOWN_PARAMS], VALUE_WIDTH)
        if len(ks) > SHOWN_PARAMS:
            text += f", … (+{len(ks) - SHOWN_PARAMS} more)"
        shown.append(text)
    return shown


def _signed(value, digits: int = 4) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:+.{digits}g}"


def render(result: Comparison, fmt: str) -> str:
    """The comparison as csv, markdown, or a plain aligned table; Δ keeps its sign ("+") in
    every format, and markdown and table end with the footnotes (run folders, test, notes)."""
    from safeclf.store.folder import to_markdown

    frame = result.table.copy()
    for c in frame.columns:
        if c.startswith("Δ "):
            frame[c] = frame[c].map(lambda v: _signed(v, 6 if fmt == "csv" else 4))
    if fmt == "csv":
        return frame.to_csv(index=False)
    for c in frame.columns:
        if frame[c].dtype.kind == "f":
            pattern = "{:.2g}" if c.startswith("p ") else "{:.4g}"
            frame[c] = frame[c].map(lambda v, p=pattern: "" if np.isnan(v) else p.format(v))
    # for reading: one "mean ± std" cell and a short header per run, the labels in the footnote
    shown = frame[[k for k in result.keys if k in frame.columns]].copy()
    for i, label in enumerate(result.labels):
        tag = f"[{i + 1}]"
        std = frame[f"{label} ±"]
        shown[tag] = [m + (f" ± {s}" if s else "") for m, s in zip(frame[label], std)]
        shown[f"n{tag}"] = frame[f"{label} n"]
        if i:
            shown[f"Δ{tag}"] = frame[f"Δ {label}"]
            shown[f"p{tag}"] = frame[f"p {label}"]
            if f"note {label}" in frame:
                shown[f"note{tag}"] = frame[f"note {label}"]
    frame = shown
    foot = [f"[{i + 1}] {label}: {folder}"
            for i, (label, folder) in enumerate(zip(result.labels, result.folders))]
    foot += result.notes
    if fmt == "markdown":
        return (f"**{result.metric}** (mean ± std over seeds; Δ[k] = run [k] − run [1])\n\n"
                + to_markdown(frame) + "\n\n" + "\n".join(f"- {line}" for line in foot) + "\n")
    return frame.to_string(index=False) + "\n\n" + "\n".join(foot)

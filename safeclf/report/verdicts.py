"""Promises where people look: ``promises.csv`` / ``promises.md`` in the run folder, the
compact table printed after the summary, the default plot of each promise's estimate and
interval against its bound, and verdicts of several runs side by side (``compare
--promises``)."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np

COLUMNS = ["job", "dataset", "method", "params", "seed", "fold", "status", "degenerate",
           "promise", "statement", "positive", "kind", "rule", "delta", "source", "sense",
           "bound", "estimate", "lower", "upper", "n", "n_needed", "confidence", "verdict",
           "beyond", "train_estimate", "train_verdict", "note", "protected", "privileged",
           "n_protected", "n_privileged"]
KEYS = ["dataset", "method", "params", "promise"]
COLORS = {"holds": "#009E73", "violated": "#D55E00", "inconclusive": "#E69F00",
          "no solution": "#7F7F7F", "not checked": "#BBBBBB"}  # plot_style.PALETTE's


def promises_frame(results: list[dict]):
    """One row per (job, promise) of the jobs' records (see :data:`COLUMNS`)."""
    import pandas as pd

    rows = []
    for r in results:
        for p in r.get("promises") or []:
            row = {"job": r["id"], "dataset": r["dataset"], "method": r["method"],
                   "params": json.dumps(r["params"], sort_keys=True, default=str),
                   "seed": r["seed"], "fold": r["fold"], "status": r["status"],
                   # the model's degenerate verdict on the test rows (safeclf.guarantees.trivial)
                   "degenerate": r.get("degenerate_reason") or ""}
            row.update({k: p.get(k) for k in COLUMNS if k in p})
            row.update(_pair_names(p.get("quantity") or {}))
            rows.append(row)
    frame = pd.DataFrame(rows, columns=COLUMNS).sort_values(
        ["dataset", "method", "params", "promise", "seed", "fold"], kind="stable",
        na_position="first").reset_index(drop=True)
    for c in ("bound", "estimate", "lower", "upper", "delta", "confidence"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce")
    return frame


def _pair_names(quantity: dict) -> dict:
    """The protected and privileged group of a comparison of groups, as the statement names
    them (``not Male`` for every row not privileged); nothing for other quantities."""
    privileged = quantity.get("privileged")
    if privileged is None:
        return {}
    protected = quantity.get("protected")
    return {"privileged": str(privileged),
            "protected": f"not {privileged}" if protected is None else str(protected)}


def _fmt(v, digits=4) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}g}"


def _rows(v: float) -> str:
    """A count of rows as a reader reads it: ``48,764,400``; ``∞`` when no number would do
    (the estimate sits on the bound)."""
    return "∞" if math.isinf(v) else f"{math.ceil(v):,}"


def _short(params: str, keys=None, width: int = 40) -> str:
    """The parameters among ``keys`` (default: every scalar one) as ``k=v, ...``."""
    p = json.loads(params)
    text = ", ".join(f"{k}={v}" for k, v in p.items()
                     if (keys is None or k in keys) and not isinstance(v, (list, dict)))
    return text if len(text) <= width else text[: width - 1] + "…"


#: The last few :func:`summary` tables, by the content of the frame they summarise: a run
#: writes promises.md, prints its table and renders the report from the same promises
#: (1,152 groups: 2.6 s each time on robust_socp's CI profile).
_SUMMARIES: dict = {}


def _content_key(frame, short: bool):
    import hashlib

    import pandas as pd

    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return (hashlib.sha256(rows.tobytes()).hexdigest(), tuple(map(str, frame.columns)),
            tuple(map(str, frame.dtypes)), short)


def summary(frame, short: bool = True):
    """Per (dataset, method, params, promise): kind, bound, mean estimate, the interval (one
    job) or the number of jobs, verdict counts, and the failure rate (share of jobs whose
    estimate is beyond the bound, a no-solution job counting as not beyond). ``params`` is
    shortened to the varying ones unless ``short`` is false (it stays JSON). A frame of the
    same content as one of the last few is answered from them (a copy)."""
    key = _content_key(frame, short)
    if key not in _SUMMARIES:
        if len(_SUMMARIES) >= 4:
            _SUMMARIES.pop(next(iter(_SUMMARIES)))
        _SUMMARIES[key] = _summary(frame, short)
    return _SUMMARIES[key].copy()


def _summary(frame, short: bool):
    import pandas as pd

    from safeclf.store.folder import varying_by_method

    varying = varying_by_method(frame)
    out = []
    for key, g in frame.groupby(KEYS, sort=False, dropna=False):
        first = g.iloc[0]
        row = dict(zip(KEYS, key))
        if short:
            row["params"] = _short(row["params"], varying[row["method"]]) or "-"
        if first["kind"] == "none":
            row.update(promise="none", kind="none", bound="", estimate="", interval="", n="",
                       verdicts="no promise", n_needed="", failure_rate="", train_verdicts="",
                       rule="", positive="", degenerate=degenerate_cell(g),
                       statement=str(first["statement"]))
            out.append(row)
            continue
        op = "≤" if first["sense"] == "<=" else "≥"
        bounds = g["bound"].dropna().unique()
        row["kind"] = first["kind"] + (f" (δ={_fmt(first['delta'])})"
                                       if first["kind"] == "high_confidence" else "")
        row["bound"] = f"{op} {_fmt(bounds[0])}" if len(bounds) == 1 else f"{op} varies"
        est = g["estimate"].dropna()
        row["estimate"] = _fmt(est.mean()) if len(est) else ""
        row["interval"] = _interval(g)
        row["n"] = _group_sizes(g)
        # rows of the test split that would make the inconclusive checks conclusive
        need = (pd.to_numeric(g["n_needed"], errors="coerce").dropna()
                if "n_needed" in g else pd.Series(dtype=float))
        row["n_needed"] = ("" if need.empty else _rows(need.iloc[0]) if len(need) == 1
                           else f"median {_rows(need.median())}")
        counts = g["verdict"].value_counts()
        row["verdicts"] = ", ".join(f"{v} {c}" for v, c in counts.items())
        beyond = g["beyond"].map(lambda b: float(bool(b)) if b is not None and b == b else 0.0)
        row["failure_rate"] = f"{beyond.mean():.2f} ({int(beyond.sum())}/{len(g)})"
        # runs written before the training check have neither column
        train = g["train_verdict"].dropna() if "train_verdict" in g else pd.Series(dtype=str)
        row["train_verdicts"] = ", ".join(f"{v} {c}" for v, c in train.value_counts().items())
        rule = first.get("rule")
        row["rule"] = str(rule) if isinstance(rule, str) else ""
        row["statement"] = str(first["statement"])
        positive = first.get("positive")
        row["positive"] = str(positive) if isinstance(positive, str) else ""
        row["source"] = str(first["source"])
        row["degenerate"] = degenerate_cell(g)
        out.append(row)
    return pd.DataFrame(out)


def _interval(g) -> str:
    """``[lower, upper]`` of one job's interval; over several jobs, from the lowest lower to
    the highest upper limit (every job's interval lies within it) and the number of jobs."""
    lower, upper = g["lower"].dropna(), g["upper"].dropna()
    if lower.empty or upper.empty:
        return ""
    text = f"[{_fmt(lower.min())}, {_fmt(upper.max())}]"
    return text if len(g) == 1 else f"{text} over {len(g)} jobs"


def _count(values) -> str:
    """A count of rows over the jobs: ``5,421``, or ``5,400–5,421`` where the jobs differ."""
    import pandas as pd

    v = pd.to_numeric(values, errors="coerce").dropna()
    if v.empty:
        return ""
    lo, hi = int(v.min()), int(v.max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def _group_sizes(g) -> str:
    """The test rows a check rests on: per group for a comparison of groups (``not Male
    5,421`` and ``Male 10,860`` on two lines: the protected group first, never summed), else the rows of the
    rate."""
    if "n_protected" in g and g["n_protected"].notna().any():
        protected = next((str(v) for v in g.get("protected", []) if isinstance(v, str)),
                         "protected")
        privileged = next((str(v) for v in g.get("privileged", []) if isinstance(v, str)),
                          "privileged")
        return (f"{protected} {_count(g['n_protected'])}\n"
                f"{privileged} {_count(g['n_privileged'])}")
    return _count(g["n"][g["verdict"] != "no solution"])


def degenerate_cell(g) -> str:
    """``degenerate in k/n jobs: <the first reason>`` where k of the n jobs of ``g`` have a
    degenerate model (:mod:`safeclf.guarantees.trivial`); empty where none has (or the run predates the
    column)."""
    if "degenerate" not in g:
        return ""
    jobs = g.drop_duplicates("job")
    reasons = jobs["degenerate"].map(lambda v: v if isinstance(v, str) else "")
    flagged = reasons[reasons != ""]
    return "" if flagged.empty else \
        f"degenerate in {len(flagged)}/{len(jobs)} jobs: {flagged.iloc[0]}"


def write_tables(run_dir: Path, frame) -> None:
    """promises.csv and promises.md of a :func:`promises_frame`."""
    from safeclf.store.folder import atomic_write, to_markdown

    atomic_write(run_dir / "promises.csv", frame.to_csv(index=False))
    text = ("# Promises\n\nEach promise a fitted model makes, checked on the test split: "
            "estimate, two-sided interval (Clopper–Pearson for a rate, Katz log for a ratio, "
            "Newcombe for a difference), verdict (holds: the whole interval on the promised "
            "side of the bound; violated: the whole interval on the other side). n needed: "
            "for an inconclusive check, the test rows that would make it conclusive at the "
            "observed estimate (the counts scaled; the median over jobs). Failure rate: share "
            "of jobs whose "
            "estimate is beyond the bound. Train verdicts: a training-only promise checked "
            "exactly on the training rows, for the rule it names (within its tolerance). "
            "Degenerate: the jobs whose model gives one class to almost every test row or is "
            "not better than the majority-class rule beyond noise, and why (a promise kept by "
            "such a model is kept by predicting the same for everyone). "
            "Per job: promises.csv.\n\n")
    if frame.empty:
        text += "(no promises recorded)\n"
    else:
        text += to_markdown(summary(frame)) + "\n"
    atomic_write(run_dir / "promises.md", text)


def write_plot(run_dir: Path, frame) -> list[str]:
    """plots/promises.png and .svg of a :func:`promises_frame` (when any promise was
    checked); the problems met while plotting."""
    if frame.empty or (frame["kind"] == "none").all():
        return []
    try:
        from safeclf.report.plots.style import figures

        with figures():
            fig = plot(frame)
            (run_dir / "plots").mkdir(parents=True, exist_ok=True)
            for ext in ("png", "svg"):
                fig.savefig(run_dir / "plots" / f"promises.{ext}", dpi=120)
    except Exception as exc:  # a broken plot must not lose the run
        return [f"promises plot: {type(exc).__name__}: {exc}"]
    return []


#: Rows of a panel of the promise plot; beyond them the rows that need a reader's eye are
#: shown (see :func:`_shown_rows`) and the others counted under the panel.
MAX_ROWS = 30
#: Verdicts in the order a reader should see them first.
_ATTENTION = {"violated": 0, "no solution": 1, "inconclusive": 2, "holds": 3}


def _shown_rows(groups: list, max_rows: int = MAX_ROWS) -> tuple[list, list]:
    """The (key, rows) groups a panel shows, in their own order, and those it leaves out: all
    of them up to ``max_rows``; beyond, those with a verdict other than "holds" first, then
    those whose estimate lies nearest the bound (relative to it)."""
    if len(groups) <= max_rows:
        return groups, []

    def urgency(item):
        h = item[1]
        worst = min(_ATTENTION.get(v, 1) for v in h["verdict"])
        rel = (h["bound"] - h["estimate"]).abs() / h["bound"].abs().clip(lower=1e-12)
        return worst, float(rel.min()) if rel.notna().any() else 0.0

    ranked = sorted(range(len(groups)), key=lambda i: urgency(groups[i]))
    return [groups[i] for i in sorted(ranked[:max_rows])], [groups[i] for i in ranked[max_rows:]]


def plot(frame):
    """One panel per promise: each job's estimate and interval (coloured by verdict) against
    its bound (a black bar), one row per dataset / method / parameters; a panel of more than
    :data:`MAX_ROWS` rows shows those that need attention and counts the others."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from safeclf.store.folder import varying_by_method

    checked = frame[frame["kind"] != "none"]
    varying = varying_by_method(checked)
    names = list(dict.fromkeys(checked["promise"]))
    panels = [_shown_rows(list(checked[checked["promise"] == n].groupby(
        ["dataset", "method", "params"], sort=False))) for n in names]
    rows_per = [len(rows) + (1 if hidden else 0) for rows, hidden in panels]
    fig, axes = plt.subplots(len(names), 1, squeeze=False,
                             figsize=(7.5, sum(1.2 + 0.32 * r for r in rows_per)),
                             gridspec_kw={"height_ratios": [1 + 0.3 * r for r in rows_per]})
    for ax, name, (rows, hidden) in zip(axes[:, 0], names, panels):
        g = checked[checked["promise"] == name]
        labels = []
        for i, ((dataset, method, params), h) in enumerate(rows):
            kinds = "/".join(dict.fromkeys(h["kind"]))
            labels.append(f"{dataset} · {method} {_short(params, varying[method], 60)}".strip()
                          + f" [{kinds}]")
            unsolved = h[h["verdict"] == "no solution"]
            if len(unsolved):  # say why on the row, not only an x at the bound
                ax.text(0.01, i + 0.45, _why_unsolved(unsolved, len(h)), fontsize=5.5,
                        color="#555555", va="bottom", linespacing=1.0,
                        transform=ax.get_yaxis_transform())  # x in the axes, y in rows
            jitter = np.linspace(-0.25, 0.25, len(h)) if len(h) > 1 else [0.0]
            for dy, (_, r) in zip(jitter, h.iterrows()):
                y = i + dy
                color = COLORS.get(r["verdict"], "black")
                if r["verdict"] == "no solution":
                    ax.plot([r["bound"]], [y], "x", color=color, ms=4)
                    continue
                if np.isfinite(r["lower"]) and np.isfinite(r["upper"]):
                    ax.plot([r["lower"], r["upper"]], [y, y], color=color, lw=1.2)
                ax.plot([r["estimate"]], [y], "o", color=color, ms=3)
            for b in h["bound"].dropna().unique():
                ax.plot([b, b], [i - 0.4, i + 0.4], color="black", lw=2)
        if hidden:
            counts = Counter(v for _, h in hidden for v in h["verdict"])
            jobs = ", ".join(f"{k} {v}" for k, v in sorted(
                counts.items(), key=lambda kv: _ATTENTION.get(kv[0], 1)))
            labels.append(f"+ {len(hidden)} more rows, further from the bound (jobs: {jobs}): "
                          "promises.csv")
        first = g.iloc[0]
        op = "≤" if first["sense"] == "<=" else "≥"
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        bounds = ", ".join(f"{b:g}" for b in g["bound"].dropna().unique())
        ax.set_title(f"{name}: promised {op} {bounds} (black bar)", fontsize=8, loc="left")
        ax.tick_params(axis="x", labelsize=7)
    handles = [matplotlib.lines.Line2D([], [], color=c, marker="o", ls="-", ms=3, label=v)
               for v, c in COLORS.items() if v in set(checked["verdict"])]
    axes[0, 0].legend(handles=handles, fontsize=6, loc="best")
    axes[-1, 0].set_xlabel("each job's test estimate and interval, coloured by verdict; "
                           "[the promise's kind]", fontsize=8)
    fig.tight_layout()
    return fig


def _why_unsolved(unsolved, jobs: int, width: int = 75) -> str:
    """``no solution in k/n jobs: <why>`` for a row of the promise plot: the first job's
    reason from its note (:func:`safeclf.guarantees.shortfall.sentence`: the estimate, its
    certified limit against the bound, and the next step), on at most two lines of
    ``width`` characters."""
    note = next((n for n in unsolved["note"] if isinstance(n, str) and n), "")
    at = note.find("the estimate is")
    why = note[at:] if at >= 0 else note.rsplit("; ", 1)[-1]
    why = why.replace(" would certify the observed effect", "")
    import textwrap

    lines = textwrap.wrap(f"no solution in {len(unsolved)}/{jobs} jobs: {why}", width)
    return "\n".join(lines[:2]) + ("…" if len(lines) > 2 else "")


def print_table(console, results: list[dict]) -> None:
    """The promise table printed after the summary, made to be read in 100 columns: per model
    and promise, the statement (with its group names) and kind, the estimate with its interval,
    the test rows per group and the verdicts (with the rows an inconclusive check would need
    and a training promise's own check); the methods that promise nothing on one line. The
    wider view (failure rate, source, degenerate models) is in promises.md and report.html."""
    from rich import box
    from rich.table import Table

    frame = promises_frame(results)
    if frame.empty:
        return
    s = summary(frame)
    checked = s[s["kind"] != "none"]
    if not checked.empty:
        cells = [_console_cells(row) for row in checked.itertuples(index=False)]
        table = Table(title="Promises (test split)", title_justify="left", box=box.SIMPLE_HEAD,
                      padding=(0, 1), pad_edge=False, expand=True)
        for i, (name, most) in enumerate(zip(["model", "promise", "estimate", "test rows",
                                              "verdict"], [22, None, 16, 16, 16])):
            if most is None:  # the statement takes what the others leave
                table.add_column(name, ratio=1, min_width=20)
                continue
            longest = max((len(line) for c in cells for line in c[i].plain.splitlines()),
                          default=0)  # every job without a model: no estimate at all
            table.add_column(name, width=max(len(name), min(longest, most)), overflow="fold")
        for c in cells:
            table.add_row(*c)
        console.print(table)
        console.print("interval: at the spec's confidence (over several jobs, the lowest lower "
                      "to the highest upper limit); δ, failure rates and sources: promises.md",
                      markup=False, highlight=False)
    without = s[s["kind"] == "none"]
    if not without.empty:
        names = ", ".join(dict.fromkeys(f"{r.method} ({r.dataset})"
                                        for r in without.itertuples(index=False)))
        console.print(f"no promise made by: {names}", markup=False, highlight=False)


def _console_cells(row) -> list:
    """The five cells of one row of the console's promise table (see :func:`print_table`)."""
    from rich.text import Text

    model = row.dataset + "\n" + row.method + ("" if row.params == "-" else "\n" + row.params)
    estimate = row.estimate + ("\n" + row.interval.replace(" over ", "\nover ")
                               if row.interval else "")
    verdict = Text(row.verdicts.replace(", ", "\n"), style=_style(row.verdicts))
    if row.n_needed:
        verdict.append(f"\nneeds {row.n_needed.removeprefix('median ')}\ntest rows"
                       + (" (med.)" if row.n_needed.startswith("median") else ""))
    if row.train_verdicts:
        verdict.append(f"\ntraining check:\n{row.train_verdicts}")
    # a high-confidence statement says its probability; the other kinds are named
    kind = "" if row.kind.startswith("high_confidence") else f" [{row.kind}]"
    return [Text(model), Text(row.statement + kind), Text(estimate), Text(row.n), verdict]


def _style(verdicts: str) -> str:
    """The colour of a verdicts cell: red when a job's check is violated, yellow when one is
    inconclusive, green when every one holds."""
    if "violated" in verdicts:
        return "bold red"
    if "inconclusive" in verdicts:
        return "yellow"
    return "green" if verdicts.startswith("holds") else ""


def compare(run_dirs) -> object:
    """Verdict counts and failure rates of several runs side by side, aligned by dataset,
    method, parameters and promise; columns headed by the runs' short names, certified
    methods marked."""
    from safeclf._utils.paths import inside
    from safeclf.errors import SpecError
    from safeclf.report.compare import _short as short_params
    from safeclf.report.compare import certified, full_params, mark_certified, run_labels
    from safeclf.store.read import load_tables as load_run
    from safeclf.store.read import read_table

    merged, empty = None, []
    runs = [load_run(d) for d in run_dirs]  # run folders, said as for compare
    names = run_labels([(Path(d), spec, manifest)
                        for d, (spec, manifest, _) in zip(run_dirs, runs)])
    for name, d, (spec, _, _) in zip(names, run_dirs, runs):
        path = inside(d, "promises.csv")
        if not path.is_file():
            raise SpecError(f"compare --promises: run '{Path(d).name}' has no promises.csv")
        frame = read_table(path)
        if frame.empty:  # every job failed: nothing to set beside the other runs' verdicts
            empty.append(name)
            continue
        frame["params"] = full_params(frame, spec)  # rows align on the whole model
        s = summary(frame.assign(
            beyond=lambda f: f["beyond"].map({True: True, False: False, "True": True,
                                              "False": False})), short=False)
        s = s[["dataset", "method", "params", "promise", "bound", "verdicts", "failure_rate"]]
        s = s.rename(columns={"verdicts": f"{name} verdicts",
                              "failure_rate": f"{name} failure"})
        merged = s if merged is None else merged.merge(
            s, on=["dataset", "method", "params", "promise", "bound"], how="outer")
    if merged is None:
        which = f"run '{Path(run_dirs[0]).name}'" if len(names) == 1 else "none of the runs"
        raise SpecError(f"compare --promises: {which} recorded a promise (no job ended with a "
                        "model; the 'error' column of each run's metrics.csv says why)")
    for name in empty:
        merged[f"{name} verdicts"] = "no job ended with a model"
        merged[f"{name} failure"] = ""
    merged["params"] = short_params(merged, KEYS)
    runs_cols = [c for c in merged.columns if c.endswith((" verdicts", " failure"))]
    merged[runs_cols] = merged[runs_cols].fillna("")  # the row is not in that run
    return mark_certified(merged, certified([spec for spec, _, _ in runs]))

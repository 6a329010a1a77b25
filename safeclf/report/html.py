"""``report.html``: a run folder as one self-contained page.

The page holds the run's identity (spec, command, data files and their SHA-256, versions from
``manifest.json``), the summary tables (one per method family), the promise verdicts with
their intervals, the expectations with the papers' values, and every plot, embedded (SVG, else
PNG, as ``data:`` URIs) with inline CSS: it opens from a disk, a mail or an archive, with no
network and no other file. Everything is read back from the run folder
(:func:`safeclf.store.read.read`), so the page shows what the files hold; ``safeclf report RUN``
writes it again for a run made before it existed.

Only files of the run folder are read (:func:`safeclf._utils.paths.inside`): a plot, table or spec
that is a symlink to a file outside the folder (``plots/x.png -> /etc/shadow``) refuses the
whole report with one line, and nothing is written; a page someone shares never carries a
file of the reader's.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from safeclf._utils.paths import inside

#: Verdict words and the CSS class their cell gets.
_VERDICTS = {"holds": "good", "pass": "good", "ok": "good", "violated": "bad", "FAIL": "bad",
             "failed": "bad", "inconclusive": "warn", "no solution": "muted",
             "no_solution": "muted", "no promise": "muted", "not checked": "muted",
             "degenerate": "bad", "deviation": "warn"}

_CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg2:#f6f8fa;--accent:#0969da;
--good:#1a7f37;--bad:#cf222e;--warn:#9a6700}
*{box-sizing:border-box}
body{font:14px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);
margin:0;background:#fff}
main{max-width:1180px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:36px 0 8px;padding-bottom:4px;
border-bottom:1px solid var(--line)}h3{font-size:15px;margin:20px 0 6px}
.sub{color:var(--muted);margin:0 0 16px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);padding:8px 32px;
z-index:1}nav a{color:var(--accent);text-decoration:none;margin-right:18px;font-weight:600}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}
table{border-collapse:collapse;margin:8px 0 4px;font-size:13px;display:block;overflow-x:auto}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--bg2);font-weight:600}tr:nth-child(even) td{background:#fbfcfd}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.good{color:var(--good);font-weight:600}td.bad{color:var(--bad);font-weight:700}
td.warn{color:var(--warn);font-weight:600}td.muted{color:var(--muted)}h3.bad{color:var(--bad)}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}
dt{color:var(--muted)}dd{margin:0;word-break:break-all}
pre{background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:10px;
overflow-x:auto;font-size:12px}
figure{margin:12px 0 24px;border:1px solid var(--line);border-radius:8px;padding:8px}
figure img{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{color:var(--muted);font-size:12px;text-align:center}
.note{color:var(--muted);font-size:12.5px;max-width:900px}
details summary{cursor:pointer;color:var(--accent)}
.fits{overflow-x:auto;max-width:100%}table.fit{display:table;width:100%;table-layout:auto}
table.fit td{overflow-wrap:break-word}table.fit td.statement{min-width:18em}
table.fit td.name{min-width:9em;max-width:16em}table.fit td.lines{white-space:nowrap}
table.fit td.num{white-space:normal}
.source{color:var(--muted);font-size:11.5px;margin-top:2px}
"""


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(value) -> str:
    """One ``<td>``: numbers right-aligned to 4 significant digits, verdicts coloured."""
    if value is None or (isinstance(value, float) and value != value):
        return "<td></td>"
    if _is_number(value):
        return f'<td class="num">{value:.4g}</td>' if isinstance(value, float) \
            else f'<td class="num">{value}</td>'
    text = str(value)
    css = next((c for word, c in _VERDICTS.items()  # "holds", "holds 3", "pass (why)"
                if text == word or text.startswith(word + " ")), None)
    return f'<td class="{css}">{escape(text)}</td>' if css else f"<td>{escape(text)}</td>"


def table(frame, columns: list[str] | None = None) -> str:
    """``frame`` (its ``columns``, default all) as an HTML table."""
    if frame is None or frame.empty:
        return '<p class="note">(none)</p>'
    columns = [c for c in (columns or list(frame.columns)) if c in frame.columns]
    # a long metric name may break after its underscores rather than widen the table
    head = "".join(f"<th>{escape(str(c)).replace('_', '_<wbr>')}</th>" for c in columns)
    rows = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in frame[columns].itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _summary_section(run) -> str:
    """One table per method family (the families and headline metrics of ``summary.md``)."""
    from safeclf.spec.check import parse
    from safeclf.store import folder as run_folder

    try:
        spec = parse(run.spec)
    except Exception:  # a spec written by another version: the families still show
        spec = None
    parts = []
    for family, (columns, rows) in run_folder.family_tables(run.metrics, spec).items():
        summary = run_folder.summary_table(rows, columns)
        parts.append(f"<h3>{escape(family)}</h3>" + table(summary))
    return "".join(parts) or table(run.summary)


def _degenerate(metrics):
    """The rows of a metrics table whose model is degenerate on its test rows (none for a run
    that predates the column)."""
    if metrics.empty or "degenerate_reason" not in metrics:
        return metrics.iloc[:0]
    return metrics[metrics["degenerate_reason"].map(lambda v: isinstance(v, str) and v != "")]


def _degenerate_section(rows) -> str:
    if rows.empty:
        return ""
    return ('<h3 class="bad">Degenerate models</h3><p class="note">These models give one class '
            "to almost every test row, or are not better than the majority-class rule (the "
            "training labels' majority for everyone) beyond noise: an exact one-sided sign "
            "test on the rows where the two disagree, at level 0.05 "
            "(<code>safeclf/guarantees/trivial.py</code>). A promise they keep is kept by predicting the "
            "same for everyone.</p>"
            + table(rows, ["dataset", "method", "params", "seed", "test_error",
                           "test_trivial_error", "degenerate_reason"]))


#: The promise table of the report: (column of :func:`safeclf.report.verdicts.summary`,
#: heading, CSS class of its cells); a column every row leaves empty is not shown.
_PROMISE_COLUMNS = [("model", "model", "name"), ("statement", "promise", "statement"),
                    ("kind", "kind", "short"), ("estimate", "estimate", "num"),
                    ("interval", "interval", "lines"), ("n", "test rows", "lines"),
                    ("verdicts", "verdicts", "lines"), ("n_needed", "n needed", "num"),
                    ("failure_rate", "failure rate", "num"),
                    ("train_verdicts", "training check", "short"),
                    ("degenerate", "degenerate", "statement")]


def _promise_table(summary) -> str:
    """The promise summary as a table that fits the page: the statement (with its source
    beneath) wraps, the other cells are short; lines of a cell (the test rows per group) are
    kept."""
    frame = summary.assign(model=[" · ".join(x for x in (r.dataset, r.method, r.params)
                                             if x and x != "-")
                                  for r in summary.itertuples(index=False)])
    shown = [(c, h, css) for c, h, css in _PROMISE_COLUMNS
             if c in frame and frame[c].fillna("").astype(str).str.strip().any()]
    head = "".join(f'<th class="{css}">{escape(h)}</th>' for _, h, css in shown)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for c, _, css in shown:
            text = "" if row[c] is None or row[c] != row[c] else str(row[c])
            if c == "interval":  # short lines, each kept whole
                text = text.replace(" over ", "\nover ")
            elif c == "verdicts":
                text = text.replace(", ", "\n")
            html = "<br>".join(escape(line) for line in text.splitlines())
            if c in ("kind", "model"):
                html = html.replace("_", "_<wbr>")
            if c == "statement" and isinstance(row.get("source"), str) and row["source"]:
                html += f'<div class="source">{escape(row["source"])}</div>'
            verdict = next((v for w, v in _VERDICTS.items()
                            if text == w or text.startswith(w + " ")), None)
            cls = f"{css} {verdict}" if c == "verdicts" and verdict else css
            cells.append(f'<td class="{cls}">{html}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="fits" id="promise-table"><table class="fit"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(body)}</tbody></table></div>")


def _promises_section(run) -> str:
    from safeclf.report import verdicts as promise_report

    if run.promises.empty:
        return '<p class="note">No promise was recorded.</p>'
    summary = promise_report.summary(run.promises)
    note = ('<p class="note">Each promise a fitted model makes, checked on its test split: '
            "estimate and two-sided interval (Clopper–Pearson for a rate, Katz log for a "
            "ratio, Newcombe for a difference; over several jobs, from the lowest lower to "
            "the highest upper limit); <b>test rows</b>: the rows the check rests on, per "
            "group for a comparison of groups (the protected group first); <b>n needed</b>: "
            "for an inconclusive check, the test rows that would make it conclusive at the "
            "observed estimate; "
            "<b>holds</b> when the whole interval is on the promised side of the bound, "
            "<b>violated</b> when it is wholly on the other side, else <b>inconclusive</b>. "
            "Failure rate: the share of jobs whose estimate is beyond the bound (for a "
            "high-confidence promise at δ, expected to be at most δ).</p>")
    checked = run.promises[run.promises["kind"] != "none"]
    without = sorted(set(run.promises.loc[run.promises["kind"] == "none", "method"]))
    if without:
        note += (f'<p class="note">No promise made by: {escape(", ".join(without))} (the '
                 "method declares no guarantee).</p>")
    if checked.empty:
        return note
    note += _promise_table(summary[summary["kind"] != "none"])
    if len(checked) <= 200:
        detail = table(checked, ["dataset", "method", "params", "seed", "promise", "bound",
                                 "estimate", "lower", "upper", "n_protected", "n_privileged",
                                 "n", "verdict", "note"])
        note += f"<details><summary>per job ({len(checked)})</summary>{detail}</details>"
    return note


def _by_group_section(run) -> str | None:
    """The by-group summary (:mod:`safeclf.report.by_group`) of a run whose data has groups."""
    import pandas as pd

    from safeclf.report import by_group

    path = inside(run.path, "by_group.csv")
    if not path.is_file():
        return None
    summary = by_group.summary(pd.read_csv(path, dtype={"group": str}, keep_default_na=False,
                                           na_values=[""]))
    if summary.empty:
        return None
    return ('<p class="note">Each rate per group on the test split (Clopper–Pearson '
            "interval), each ratio (Katz) and difference (Newcombe, reference minus group) per "
            "compared pair <code>group vs reference</code>; <b>small</b>: fewer rows than the "
            "minimum group size, reported on its own. Per job: <code>by_group.csv</code>.</p>"
            + table(summary))


def _expectations_section(run) -> str:
    frame = run.expectations
    if frame.empty:
        return '<p class="note">The spec states no expectation.</p>'
    frame = frame.copy()
    expect = run.spec.get("expect") or []

    def paper(text: str):
        try:
            i = int(str(text).split("]")[0].split("[")[1])
            return expect[i].get("paper")
        except (IndexError, ValueError, AttributeError):
            return None

    from safeclf.report.expect import source_line

    frame.insert(3, "reference", frame["expectation"].map(paper))
    met = int((frame["verdict"] == "pass").sum())
    counts = source_line(frame.to_dict("records")).removeprefix("by source: ")
    return (f'<p class="note">{met} of {len(frame)} met ({escape(counts)}); '
            "<code>reference</code> is the value (the spec's <code>paper</code>) where the "
            "expectation names one (checked within its "
            "tolerance); <code>source</code> says where a reference comes from: the paper "
            "(page, table, equation), a figure read off one of its plots, the author's report, "
            "the project's own measurement or choice, or an invariant (true by construction: "
            "a solver or implementation check, not a reproduced figure).</p>"
            + table(frame))


def _image(run, path: Path) -> str:
    """A plot as an ``<img>`` with a ``data:`` URI (the SVG beside a PNG when there is one);
    both read through :func:`safeclf._utils.paths.inside`, so only a file of the run is embedded."""
    svg = inside(run.path, "plots", path.with_suffix(".svg").name)
    png = inside(run.path, "plots", path.name)
    source, mime = (svg, "image/svg+xml") if svg.is_file() else (png, "image/png")
    data = base64.b64encode(source.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{escape(path.stem)}" src="data:{mime};base64,{data}">'
            f"<figcaption>{escape(path.stem)}</figcaption></figure>")


def _identity_section(run) -> str:
    m = run.manifest
    facts = {
        "command": " ".join(m.get("command") or []),
        "profile": m.get("profile") or "none",
        "overrides": " ".join(m.get("overrides") or []) or "none",
        "started / ended": f"{m.get('start', '?')} / {m.get('end', '?')}",
        "backend": f"{m.get('backend', '?')}, {m.get('workers', '?')} workers",
        "safeclf": f"{m.get('safeclf_version', '?')} (git {m.get('git_commit') or 'unknown'})",
        "python": f"{m.get('python', '?')} on {m.get('platform', '?')}",
        "resumed": str(len(m.get("resumed") or [])) + " time(s)" if m.get("resumed") else "no",
    }
    out = "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>"
                           for k, v in facts.items()) + "</dl>"
    import pandas as pd

    data = pd.DataFrame(m.get("data") or [])
    out += "<h3>Data files</h3>" + (table(data) if not data.empty else
                                     '<p class="note">No data file (built-in, downloaded or '
                                     "generated datasets).</p>")
    packages = pd.DataFrame(sorted((m.get("packages") or {}).items()),
                            columns=["package", "version"])
    out += f"<details><summary>package versions ({len(packages)})</summary>{table(packages)}</details>"
    stored = inside(run.path, "spec.yaml")  # shown as the folder holds it
    spec_text = stored.read_text(encoding="utf-8") if stored.is_file() else "(no spec.yaml)"
    out += f"<details open><summary>spec (resolved)</summary><pre>{escape(spec_text)}</pre></details>"
    return out


def render(run) -> str:
    """The whole page for a :class:`safeclf.api.Run`."""
    m = run.manifest
    ok = int((run.metrics["status"] == "ok").sum()) if not run.metrics.empty else 0
    failed = int((run.metrics["status"] == "failed").sum()) if not run.metrics.empty else 0
    checked = run.promises[run.promises["kind"] != "none"] if not run.promises.empty else run.promises
    holds = int((checked["verdict"] == "holds").sum()) if not checked.empty else 0
    # jobs whose method certifies (a high-confidence promise), and those that returned a model:
    # the certificates, apart from the test split's verdicts (often inconclusive at its size)
    cert = run.promises[run.promises["kind"] == "high_confidence"] if not run.promises.empty \
        else run.promises
    certifying = int(cert["job"].nunique()) if not cert.empty else 0
    certified = int(cert.loc[cert["status"] == "ok", "job"].nunique()) if not cert.empty else 0
    verdicts = run.expectations["verdict"] if not run.expectations.empty else []
    met = int((verdicts == "pass").sum()) if len(verdicts) else 0
    deviations = int((verdicts == "deviation").sum()) if len(verdicts) else 0
    degenerate = _degenerate(run.metrics)
    cards = [("jobs ok", f"{ok}/{len(run.metrics)}"), ("failed", str(failed)),
             *([("degenerate models", str(len(degenerate)))] if len(degenerate) else []),
             *([("certified models", f"{certified}/{certifying}")] if certifying else []),
             ("test verdicts holding", f"{holds}/{len(checked)}" if len(checked)
              else "none made"),
             ("expectations met", f"{met}/{len(run.expectations)}" if len(run.expectations)
              else "none stated"),
             *([("stated deviations", str(deviations))] if deviations else []),
             ("seeds", str(len(m.get("seeds") or run.spec.get("seeds") or [])))]
    cards_html = "".join(f"<div class='card'><b>{escape(v)}</b><span>{escape(k)}</span></div>"
                         for k, v in cards)
    failures = run.metrics[run.metrics["status"] == "failed"] if failed else None
    unsolved = run.metrics[run.metrics["status"] == "no_solution"] \
        if not run.metrics.empty else run.metrics
    sections = [
        ("summary", "Summary", '<p class="note">Mean ± std over seeds and folds; '
         "<code>jobs</code> counts successful/all. Every job's metrics are in "
         "<code>metrics.csv</code>.</p>" + _summary_section(run)
         + (("<h3>Failed jobs</h3>" + table(failures, ["dataset", "method", "params", "seed",
                                                       "error"])) if failures is not None else "")
         + (("<h3>No solution</h3><p class='note'>These jobs returned no model: the held-back "
             "rows did not certify the promise (or only a degenerate rule kept it). Each line "
             "names the promise, its certified limit against the bound, the held-back rows "
             "that would certify the observed effect (n_needed) and the next step.</p>"
             + table(unsolved.rename(columns={"error": "reason"}),
                     ["dataset", "method", "params", "seed", "reason"]))
            if len(unsolved) else "")
         + _degenerate_section(degenerate)),
        ("promises", "Promises", _promises_section(run)),
        *([("by_group", "By group", groups)] if (groups := _by_group_section(run)) else []),
        ("expectations", "Expectations", _expectations_section(run)),
        ("plots", "Plots", "".join(_image(run, p) for p in run.plots)
         or '<p class="note">No plot.</p>'),
        ("identity", "Identity", _identity_section(run)),
    ]
    nav = "".join(f'<a href="#{key}">{title}</a>' for key, title, _ in sections)
    body = "".join(f'<section id="{key}"><h2>{title}</h2>{html}</section>'
                   for key, title, html in sections)
    description = run.spec.get("description") or ""
    title = f"safeclf run {run.name}"
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width'><title>{escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><nav>{nav}</nav><main>"
            f"<h1>{escape(title)}</h1><p class='sub'>{escape(description)} "
            f"<code>{escape(run.path.name)}</code></p><div class='cards'>{cards_html}</div>"
            f"{body}</main></body></html>")


def render_tables(run) -> str:
    """The summary, promises and expectations sections only (a notebook's view of a run)."""
    return (f"<b>{escape(repr(run))}</b><h4>Summary</h4>{_summary_section(run)}"
            f"<h4>Promises</h4>{_promises_section(run)}"
            f"<h4>Expectations</h4>{_expectations_section(run)}")


def save(run_dir: str | Path) -> Path:
    """Write ``run_dir/report.html`` from the folder's files; returns its path. A folder that is
    not a finished run is a :class:`~safeclf.errors.SpecError`."""
    from safeclf.store.folder import atomic_write
    from safeclf.store.read import read

    path = Path(run_dir) / "report.html"
    atomic_write(path, render(read(run_dir)))
    return path


def write(run_dir: Path) -> list[str]:
    """:func:`save` for the runner: returns the problems met instead of raising (a report that
    cannot be drawn must not lose the run; its records and tables are already written)."""
    try:
        save(run_dir)
    except Exception as exc:
        return [f"report.html: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"]
    return []

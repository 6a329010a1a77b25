"""The report of an audit (:mod:`safeclf.serve.audit`): ``audit.md`` and ``audit.html``, the
same content, for a reader and for a browser."""

from __future__ import annotations

from html import escape

#: The promise table's columns, as the report shows them.
SHOWN = ["promise", "bound", "estimate", "lower", "upper", "n", "n_groups", "verdict",
         "n_needed", "note"]
#: What each promise says, certificate, run and audit, beside one another.
STATEMENTS = (("statement", "promise"), ("certificate", "certificate"),
              ("run_test_check", "the run's test check"), ("audit", "this audit"))
#: The per-group table's columns.
BY_GROUP = ["column", "group", "metric", "positive", "k", "n", "estimate", "lower", "upper",
            "small"]


def _shown(result):
    from safeclf.report.verdicts import _rows

    t = result.promises[SHOWN].copy()
    t["n_needed"] = t["n_needed"].map(lambda v: "" if v != v else _rows(float(v)))
    return t


def _by_group(result):
    g = result.by_group
    if g.empty:
        return g
    g = g[[c for c in BY_GROUP if c in g.columns]].copy()
    g["small"] = g["small"].map(lambda s: "small" if s else "")
    return g


def _said(value) -> bool:
    return isinstance(value, str) and bool(value)


def _statements(result) -> str:
    """Per promise, its statement, certificate, the run's check and this audit's, as HTML."""
    out = []
    for r in result.promises.to_dict("records"):
        items = "".join(f"<dt>{escape(said)}</dt><dd>{escape(r[key])}</dd>"
                        for key, said in STATEMENTS if _said(r[key]))
        out.append(f"<h3>{escape(r['promise'])}</h3><dl>{items}</dl>")
    return "".join(out)


def _head(result) -> list[tuple[str, str]]:
    verdicts = result.promises["verdict"].value_counts()
    return [("model", result.model), ("data", result.data),
            ("rows audited", f"{result.rows}" + (f" ({result.skipped} skipped as bad rows)"
                                                 if result.skipped else "")),
            ("verdicts", ", ".join(f"{v} {c}" for v, c in verdicts.items())),
            ("exit code", f"{result.exit_code} (1: a promise is violated)")]


def markdown(result) -> str:
    """The report as Markdown."""
    from safeclf.store.folder import to_markdown

    lines = ["# Audit of a model's promises", ""]
    lines += [f"- **{k}**: {v}" for k, v in _head(result)]
    lines += ["", result.meaning(), "", "## Promises", "", to_markdown(_shown(result)), ""]
    for r in result.promises.to_dict("records"):
        lines += [f"### {r['promise']}", ""]
        lines += [f"- **{said}**: {r[key]}" for key, said in STATEMENTS if _said(r[key])]
        lines.append("")
    g = _by_group(result)
    if not g.empty:
        lines += ["## By group", "", "Each rate per group of the audited rows (k of n, "
                  "two-sided Clopper–Pearson interval at 1 − 2·level), and each ratio (Katz) and "
                  "difference (Newcombe) per compared pair, as the run's by_group.md.", "",
                  to_markdown(g), ""]
    return "\n".join(lines)


def html(result) -> str:
    """The report as one self-contained HTML page."""
    from safeclf.report.html import _CSS, table

    head = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in _head(result))
    g = _by_group(result)
    groups = "" if g.empty else (
        "<h2>By group</h2><p class=\"note\">Each rate per group of the audited rows (k of n, "
        "two-sided Clopper–Pearson interval at 1 − 2·level), and each ratio (Katz) and "
        "difference (Newcombe) per compared pair.</p>" + table(g))
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>safeclf "
            f"audit</title><style>{_CSS}</style></head><body><main><h1>Audit of a model's "
            f"promises</h1><dl>{head}</dl><p class=\"note\">{escape(result.meaning())}</p>"
            f"<h2>Promises</h2>{table(_shown(result))}{_statements(result)}{groups}</main>"
            "</body></html>\n")

"""What the CLI prints: job lists, run summaries, expectation verdicts, plugin catalogues."""

from __future__ import annotations

from collections import Counter


def _cells(*values):
    """Table cells as plain text: user values (parameters, errors) are never rich markup."""
    from rich.text import Text

    return [v if not isinstance(v, str) else Text(v) for v in values]


def _table(title: str, columns: list[str]):
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    return table


def print_jobs(console, jobs) -> None:
    counts = Counter((j.dataset, j.method) for j in jobs)
    table = _table(f"{len(jobs)} jobs (dry run: nothing was run)", ["dataset", "method", "jobs"])
    for (d, m), n in counts.items():
        table.add_row(*_cells(d, m, str(n)))
    console.print(table)


def print_compile_time(console, results) -> None:
    """One line with the seconds numba spent compiling over the run's jobs (each worker's
    first fit of a method with compiled code pays them unless numba's cache holds the code;
    ``make install`` fills it) and the cache folder; nothing when no job used compiled code."""
    seconds = [r.compile_seconds for r in results if r.compile_seconds is not None]
    if seconds:
        from safeclf._utils import jit

        console.print(f"numba: {sum(seconds):.1f} s compiling in {len(seconds)} job(s), "
                      f"{max(seconds):.1f} s in the longest (cache: {jit.cache_dir()})",
                      highlight=False, markup=False)


def print_outcome(console, outcome) -> None:
    """The summary table, failures, expectation verdicts and the run folder."""
    from safeclf.store.folder import summary_table

    run_dir = outcome.run_dir
    if outcome.results:
        frame = outcome.table
        metrics = [c for c in outcome.shown_metrics if c in frame.columns][:6]
        summary = summary_table(frame, metrics)
        table = _table("Summary (mean ± std over seeds)", list(summary.columns))
        for row in summary.itertuples(index=False):
            table.add_row(*_cells(*[str(v) for v in row]))
        console.print(table)
        from safeclf.report.verdicts import print_table

        print_table(console, [r.to_record() for r in outcome.results])
        from safeclf.report import by_group

        by_group.print_table(console, [r.to_record() for r in outcome.results])
    print_degenerate(console, outcome.results)
    print_compile_time(console, outcome.results)
    failures = [r for r in outcome.results if r.failed]
    if failures:
        from rich.markup import escape

        console.print(f"[bold red]{len(failures)} job(s) failed[/]:")
        for r in failures[:10]:
            console.print(escape(f"  {r.dataset} / {r.method} {r.params} seed {r.seed}: "
                                 f"{r.error}"))
        if len(failures) > 10:
            console.print(f"  ... and {len(failures) - 10} more (see run.log)")
    unsolved = [r for r in outcome.results if r.status.value == "no_solution"]
    if unsolved:
        from rich.markup import escape

        console.print(f"[bold yellow]{len(unsolved)} job(s) returned no model[/] "
                      "(no_solution: nothing deployed, nothing promised):")
        for r in unsolved[:10]:
            console.print(escape(f"  {r.dataset} / {r.method} {r.params} seed {r.seed}: "
                                 f"{r.error}"))
        if len(unsolved) > 10:
            console.print(f"  ... and {len(unsolved) - 10} more (see metrics.csv, column error)")
    if outcome.expectations:
        from rich.text import Text

        from safeclf.report.expect import met_line, source_line

        table = _table("Expectations", ["expectation", "group", "measured", "condition", "source",
                                        "verdict"])
        for v in outcome.expectations:
            style = {"pass": "green", "deviation": "yellow"}.get(v["verdict"], "bold red")
            measured = "nan" if v["measured"] != v["measured"] else f"{v['measured']:.4g}"
            verdict = Text(v["verdict"], style=style) + Text(f" ({v['why']})" if v["why"] else "")
            source = v["source"] + (f" ({v['source_where']})" if v.get("source_where") else "")
            table.add_row(*_cells(v["expectation"], v["group"], measured, v["condition"], source),
                          verdict)
        console.print(table)
        console.print(met_line(outcome.expectations))
        console.print(source_line(outcome.expectations))
    console.print("run folder:", _cells(str(run_dir))[0])


def print_degenerate(console, results, limit: int = 10) -> None:
    """The jobs whose model is degenerate on its test rows (:mod:`safeclf.guarantees.trivial`), each with
    its reason: a model that predicts the same for (almost) everyone, or is not better than
    the majority-class rule beyond noise."""
    from rich.markup import escape

    flagged = [r for r in results if getattr(r, "degenerate_reason", None)]
    if not flagged:
        return
    console.print(f"[bold red]{len(flagged)} job(s) with a degenerate model[/] (no better than "
                  "predicting the training majority for everyone; metrics.csv: degenerate):")
    for r in flagged[:limit]:
        console.print(escape(f"  {r.dataset} / {r.method} {r.params} seed {r.seed}: "
                             f"{r.degenerate_reason}"))
    if len(flagged) > limit:
        console.print(f"  ... and {len(flagged) - limit} more (metrics.csv: degenerate_reason)")


def _print_plugins(console, title: str, kind: str, names, get, declared) -> None:
    """One row per plugin: name, summary, what it declares (``declared(plugin)``), parameters
    with defaults; a plugin that cannot be loaded gets a row saying why (a broken third-party
    plugin must not hide the others)."""
    table = _table(title, [kind, "summary", "needs" if kind == "method" else "provides",
                           "parameters (defaults)"])
    for name in names:
        try:
            plugin = get(name)
        except Exception as exc:
            table.add_row(*_cells(name, f"cannot load: {type(exc).__name__}: {exc}", "", ""))
            continue
        params = ", ".join(f"{k}={v!r}" for k, v in plugin.defaults().items())
        table.add_row(*_cells(name, plugin.summary, ", ".join(declared(plugin)) or "-", params))
    console.print(table)


def print_methods(console) -> None:
    from safeclf.plugins import registry

    _print_plugins(console, "Method plugins", "method", registry.method_names(),
                   registry.get_method, lambda p: p.needs)


def print_datasets(console) -> None:
    from safeclf.plugins import registry

    _print_plugins(console, "Dataset loaders", "dataset", registry.dataset_names(),
                   registry.get_dataset, lambda p: p.provides)


#: Bad rows printed on the terminal; a longer list is cut (--bad-rows writes them all).
BAD_ROWS_SHOWN = 20


def print_bad_rows(console, bad) -> None:
    """The problems of the rows ``safeclf predict --skip-bad-rows`` skipped (line, column,
    value, reason), the first :data:`BAD_ROWS_SHOWN` of them."""
    table = _table("skipped rows", ["line", "column", "value", "reason"])
    for row in bad.head(BAD_ROWS_SHOWN).itertuples(index=False):
        table.add_row(*_cells(str(row.line), str(row.column), str(row.value), str(row.reason)))
    console.print(table)
    if len(bad) > BAD_ROWS_SHOWN:
        console.print(f"... and {len(bad) - BAD_ROWS_SHOWN} more (write them all with "
                      "--bad-rows FILE)", markup=False)


def print_audit(console, result) -> None:
    """An audit (:func:`safeclf.serve.audit.audit`): one row per promise (bound, estimate and
    limits, rows, verdict, n needed), then each promise's statement with the certificate's
    and the audit's words, what the verdicts mean, and the report files."""
    from rich.text import Text

    from safeclf.report.verdicts import _rows

    style = {"holds": "green", "violated": "bold red", "inconclusive": "yellow"}
    console.print(f"audit of {result.model} on {result.rows} labelled rows"
                  + (f" ({result.skipped} skipped)" if result.skipped else ""), markup=False)
    table = _table("Promises (audited rows)", ["promise", "bound", "estimate (limits)",
                                               "n", "verdict", "n needed"])
    for r in result.promises.itertuples(index=False):
        est = "" if r.verdict == "not checked" else \
            f"{r.estimate:.3g} [{r.lower:.3g}, {r.upper:.3g}]"
        need = "" if r.n_needed != r.n_needed else _rows(float(r.n_needed))
        table.add_row(*_cells(r.promise, r.bound, est, r.n_groups or str(r.n)),
                      Text(r.verdict, style=style.get(r.verdict, "")), Text(need))
    console.print(table)
    for r in result.promises.itertuples(index=False):
        console.print(f"{r.promise}: {r.statement}", markup=False)
        console.print(f"  certificate: {r.certificate}", markup=False)
        if r.run_test_check:
            console.print(f"  run's test check: {r.run_test_check}", markup=False)
        console.print(f"  audit: {r.audit if r.verdict != 'not checked' else r.note}",
                      markup=False)
    console.print(result.meaning(), markup=False)
    for path in result.written:
        console.print(f"report written to {path}", markup=False)

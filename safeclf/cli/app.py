"""The ``safeclf`` command: thin typer commands; parsing and printing only.

Heavy libraries are imported inside the commands so ``safeclf --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys
from enum import Enum
from pathlib import Path

import typer
from typer.core import TyperGroup

from safeclf import __version__


@contextlib.contextmanager
def _usage_errors():
    """A usage error (unknown option, missing argument, a value of the wrong type) as one
    ``error:`` line and its exit code (2), instead of click's usage lines and rich's box.
    The exception classes are taken from typer's own click (vendored in recent typer)."""
    exceptions = sys.modules[typer.BadParameter.__module__]
    try:
        yield
    except getattr(exceptions, "NoArgsIsHelpError", ()):
        raise  # no arguments at all: the help is the answer
    except exceptions.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = f"{ctx.command_path}: " if ctx is not None else ""
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        _error_line(f"{where}{exc.format_message()}{hint}")
        raise typer.Exit(exc.exit_code) from None


class _OneLineUsageErrors(TyperGroup):
    """The command group with :func:`_usage_errors` around parsing and sub-commands."""

    def make_context(self, *args, **kwargs):
        with _usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_OneLineUsageErrors,
    no_args_is_help=True,
    help="Run, check and compare experiments with classifiers that come with a promise.",
    pretty_exceptions_enable=False,
)


class Backend(str, Enum):
    loky = "loky"
    dask = "dask"


class Format(str, Enum):
    table = "table"
    csv = "csv"
    markdown = "markdown"


_state = {"debug": False}


def _console(stderr: bool = False):
    """A rich console; when the output is not a terminal (CI logs, pipes), wide enough that
    tables are not folded into unreadable columns."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=160)
    return console


def _error_line(message: str) -> None:
    """``error: <message>`` on stderr, on one line, the message printed verbatim."""
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]error:[/] {escape(' '.join(message.split()))}")


def _fail(exc: BaseException) -> None:
    """Print one line for ``exc`` and exit; a traceback only with ``--debug``."""
    from rich.markup import escape

    from safeclf.errors import SafeclfError

    if _state["debug"]:
        raise exc
    err = _console(stderr=True)
    if isinstance(exc, SafeclfError):
        _error_line(str(exc))
        raise typer.Exit(exc.exit_code)
    message = escape(" ".join(str(exc).split()))
    err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {message} "
              "(run with --debug for the traceback)")
    raise typer.Exit(1)


def _guard(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except typer.Exit:
        raise
    except KeyboardInterrupt as exc:
        from rich.markup import escape

        run_dir = getattr(exc, "run_dir", None)
        hint = (f"finish the run later with: safeclf run --resume {run_dir}" if run_dir
                else "nothing was written")
        _console(stderr=True).print(escape(f"interrupted; {hint}"))
        raise typer.Exit(130) from None
    except Exception as exc:
        _fail(exc)


def _version(value: bool):
    if value:
        typer.echo(f"safeclf {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
):
    _state["debug"] = debug


@app.command()
def run(
    spec: Path | None = typer.Argument(None, help="The experiment spec (YAML)."),
    overrides: list[str] | None = typer.Argument(
        None, help="key=value overrides after the profile (seeds=1 methods[0].params.C=10; "
                   "~key deletes), recorded in the manifest."),
    jobs: int = typer.Option(-1, "--jobs", "-j", help="Parallel workers (-1: all cores)."),
    out: Path = typer.Option(Path("runs"), "--out", help="Folder that receives the run folder."),
    name: str | None = typer.Option(None, "--name", help="Run name (default: the spec's)."),
    resume: Path | None = typer.Option(None, "--resume", help="Finish an interrupted run."),
    allow_changed_data: bool = typer.Option(
        False, "--allow-changed-data",
        help="With --resume: run the remaining jobs although a data file changed since the run "
             "began (recorded in the manifest)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate and list jobs; run nothing."),
    backend: Backend = typer.Option(Backend.loky, "--backend", help="loky (local) or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address."),
    check: bool = typer.Option(False, "--check", help="Exit 1 when an expectation is not met."),
    profile: str | None = typer.Option(None, "--profile", help="Apply profiles.<name>."),
    mlflow: str | None = typer.Option(
        None, "--mlflow", help="MLflow tracking URI (a folder, file:, http:): log each job as a "
                               "run (needs the mlflow extra)."),
    mlflow_experiment: str | None = typer.Option(
        None, "--mlflow-experiment", help="MLflow experiment (default: the spec's name)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
):
    """Run every job of SPEC in parallel and write a timestamped run folder."""
    _state["debug"] = _state["debug"] or debug
    _guard(_run, spec, jobs, out, name, resume, dry_run, backend.value, scheduler, check, profile,
           overrides or [], mlflow, mlflow_experiment, allow_changed_data)


def _run(spec, jobs, out, name, resume, dry_run, backend, scheduler, check, profile, overrides,
         mlflow=None, mlflow_experiment=None, allow_changed_data=False):
    from safeclf.cli.console import print_jobs, print_outcome
    from safeclf.execution.options import Options
    from safeclf.execution.runner import run as run_spec
    from safeclf.spec.yaml import looks_like_override

    if spec is not None and looks_like_override(str(spec)):  # run --resume RUN seeds=2
        spec, overrides = None, [str(spec), *overrides]

    opts = Options(jobs=jobs, out=out, name=name, resume=resume, dry_run=dry_run,
                   backend=backend, scheduler=scheduler, check=check, profile=profile,
                   overrides=overrides, mlflow=mlflow, mlflow_experiment=mlflow_experiment,
                   allow_changed_data=allow_changed_data,
                   command=["safeclf", *sys.argv[1:]])
    console = _console()
    outcome = run_spec(spec, opts, console=_console(stderr=True))
    if dry_run:
        print_jobs(console, outcome.jobs)
        return
    print_outcome(console, outcome)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


@app.command()
def compare(
    runs: list[Path] = typer.Argument(..., help="Run folders (a shell glob such as runs/* works)."),
    metric: str | None = typer.Option(None, "--metric", "-m", help="Metric column (default test_error)."),
    by: list[str] | None = typer.Option(
        None, "--by", help="Align by these columns instead of dataset, method, params."),
    fmt: Format = typer.Option(Format.table, "--format", help="table, csv or markdown."),
    promises: bool = typer.Option(
        False, "--promises", help="Promise verdicts and failure rates side by side instead."),
):
    """Set runs side by side, aligned by dataset, method and the full parameters; each later
    run gets Δ and a paired t-test over matching seeds (--promises: the verdicts)."""

    def _compare():
        if promises:
            from safeclf.report.verdicts import compare as cmp_promises
            from safeclf.store.folder import to_markdown

            table = cmp_promises(runs)
            typer.echo(table.to_csv(index=False) if fmt is Format.csv else
                       to_markdown(table) if fmt is Format.markdown else
                       table.to_string(index=False))
            return
        from safeclf.report.compare import compare as cmp
        from safeclf.report.compare import render

        result = cmp(runs, metric, by)
        if fmt is Format.table:
            _console().print(f"[bold]{result.metric}[/] (mean ± std over seeds; "
                             "Δ\\[k] = run \\[k] − run \\[1])")
        typer.echo(render(result, fmt.value))

    _guard(_compare)


@app.command()
def predict(
    run_dir: Path = typer.Argument(..., help="A run folder made with save_models: true (with "
                                             "--job), or a folder written by safeclf deploy."),
    job: str | None = typer.Option(None, "--job", help="The job id (metrics.csv's 'job' "
                                                       "column); not for a deployed model."),
    data: Path = typer.Option(..., "--data", help="A CSV with the training data's columns."),
    out: Path = typer.Option(..., "--out", help="The CSV to write: the rows plus predictions."),
    skip_bad_rows: bool = typer.Option(
        False, "--skip-bad-rows", help="Score the rows the model can take and report the others "
                                       "(line, column, why) instead of refusing the batch."),
    bad_rows: Path | None = typer.Option(
        None, "--bad-rows", help="With --skip-bad-rows: write the report there (CSV) instead of "
                                 "on stderr."),
    allow_version_mismatch: bool = typer.Option(
        False, "--allow-version-mismatch", help="Load a model saved by another scikit-learn "
                                                "or safeclf version (refused otherwise)."),
):
    """Apply a saved model, with the preprocessing (imputation, scaling) fitted with it, to new
    rows."""

    def _predict():
        from safeclf.serve.predict import predict_file
        from safeclf.store.models import version_mismatch_allowed

        with version_mismatch_allowed(allow_version_mismatch):
            done = predict_file(run_dir, job, data, out, skip_bad_rows, bad_rows)
        typer.echo(f"{done.scored} predictions written to {out}")
        if len(done.bad):
            from safeclf.cli.console import print_bad_rows

            rows = done.bad["line"].nunique()
            where = f"listed in {bad_rows}" if bad_rows is not None else "below"
            err = _console(stderr=True)
            err.print(f"{rows} row(s) skipped, {len(done.bad)} problem(s) {where}",
                      markup=False)
            if bad_rows is None:
                print_bad_rows(err, done.bad)

    _guard(_predict)


@app.command()
def deploy(
    run_dir: Path = typer.Argument(..., help="A finished run folder."),
    method: str | None = typer.Option(None, "--method", help="The method's label in the run "
                                                             "(needed when it has several)."),
    out: Path = typer.Option(..., "--out", help="A new folder: receives model.skops and "
                                                "model.json."),
    dataset: str | None = typer.Option(None, "--dataset", help="The dataset's label (needed "
                                                               "when the method ran on several)."),
    job: str | None = typer.Option(None, "--job", help="A job of the parameter point to use "
                                                       "(a grid); certified: the model to copy."),
    allow_degenerate: bool = typer.Option(
        False, "--allow-degenerate", help="Deploy a model the run flagged degenerate (one class "
                                          "for almost everyone, or no better than the majority "
                                          "rule), which is refused otherwise."),
    allow_version_mismatch: bool = typer.Option(
        False, "--allow-version-mismatch", help="Load a model saved by another scikit-learn "
                                                "or safeclf version (refused otherwise)."),
):
    """Write the one model to deploy: an uncertified method refitted on all rows with the run's
    parameters and preprocessing; a certified one copied as the run saved it (refitting would
    void its certificate)."""

    def _deploy():
        from safeclf.serve.deploy import deploy as write
        from safeclf.store.models import version_mismatch_allowed

        with version_mismatch_allowed(allow_version_mismatch):
            done = write(run_dir, method, out, dataset, job, allow_degenerate)
        r = done.record
        how = ("refitted on all rows" + "".join(f", {k} {v}" for k, v in r["rows"].items())
               if r["refit"] else f"not refitted: {r['why']}")
        seed = f"seed {r['seed']}" + (f", {r['chosen_by']}" if r.get("chosen_by") else "")
        typer.echo(f"{r['method']} on {r['dataset']} (job {r['job']}, {seed}): {how}")
        typer.echo(f"decision reads the group: {r['reads_group']}")
        if done.rechecked:
            typer.echo(f"re-checked before copying: {done.rechecked}")
        use = (f"use it with: safeclf predict {out} --data NEW.csv --out PREDICTIONS.csv"
               if done.predictable else "load it in Python with safeclf.store.models.load (safeclf "
               "predict and safeclf.load_model read new rows for models of csv datasets)")
        typer.echo(f"model written to {done.path}; {use}")
        if r.get("degenerate"):
            typer.echo(f"warning: deployed with --allow-degenerate: {r['degenerate']}")

    _guard(_deploy)


@app.command()
def audit(
    model: Path = typer.Argument(..., help="A folder written by safeclf deploy, or a run folder "
                                           "made with save_models: true (with --job)."),
    data: Path = typer.Option(..., "--data", help="New labelled rows: the training CSV's "
                                                  "columns, its target and group columns."),
    job: str | None = typer.Option(None, "--job", help="The job id of a run folder's model."),
    report_dir: Path | None = typer.Option(
        None, "--report-dir", help="Write audit.md and audit.html in this folder (new, or "
                                   "without an earlier report)."),
    alpha: float = typer.Option(
        0.05, "--alpha", help="The chance of calling a promise violated although it holds "
                              "(over the whole monitoring sequence with --period)."),
    period: int | None = typer.Option(
        None, "--period", help="Period k = 1, 2, ... of a monitoring sequence: this audit "
                               "spends alpha * 6 / (pi^2 k^2), so all periods together spend "
                               "at most alpha."),
    skip_bad_rows: bool = typer.Option(
        False, "--skip-bad-rows", help="Audit the rows the model can score; report the others."),
    allow_version_mismatch: bool = typer.Option(
        False, "--allow-version-mismatch", help="Load a model saved by another scikit-learn "
                                                "or safeclf version (refused otherwise)."),
):
    """Check each promise a saved model carries on new labelled rows: per promise the
    estimate, its limits, a verdict (holds, violated, inconclusive) and the rows a conclusive
    one needs, beside the certificate. Exit 1 when a promise is violated, else 0."""

    def _audit():
        from safeclf.cli.console import print_audit
        from safeclf.serve.audit import audit as check
        from safeclf.store.models import version_mismatch_allowed

        with version_mismatch_allowed(allow_version_mismatch):
            result = check(model, data, job, report_dir, alpha, period, skip_bad_rows)
        print_audit(_console(), result)
        if result.skipped:
            from safeclf.cli.console import print_bad_rows

            err = _console(stderr=True)
            err.print(f"{result.skipped} row(s) skipped, {len(result.bad)} problem(s) below",
                      markup=False)
            print_bad_rows(err, result.bad)
        if result.exit_code:
            raise typer.Exit(result.exit_code)

    _guard(_audit)


@app.command()
def verify(
    run_dir: Path = typer.Argument(..., help="A run folder, or a folder written by safeclf "
                                             "deploy."),
    job: str | None = typer.Option(None, "--job", help="Only this job's certificate."),
    allow_version_mismatch: bool = typer.Option(
        False, "--allow-version-mismatch", help="Load a model saved by another scikit-learn "
                                                "or safeclf version (refused otherwise)."),
):
    """Re-check certificates from the data and the stored models: the folder's records, spec
    and data are the ones its manifest lists, each model file is the one its certificate was
    made for, and the safety test, re-run, gives what the certificate records (exit 2
    otherwise)."""

    def _verify():
        from safeclf.serve.verify import verify as check
        from safeclf.store.models import version_mismatch_allowed

        with version_mismatch_allowed(allow_version_mismatch):
            done = check(run_dir, job)
        for v in done:
            typer.echo(v.line())
        typer.echo(f"{len(done)} certificate(s) re-checked on the stated data "
                   "(this shows they re-check, not who made them: see docs/verify.md)")

    _guard(_verify)


@app.command()
def report(run_dir: Path = typer.Argument(..., help="A finished run folder.")):
    """Write the run folder's report.html again (one self-contained page: identity, summary,
    promises, expectations, plots); runs write it themselves."""

    def _report():
        from safeclf.report.html import save

        typer.echo(f"report written to {save(run_dir)}")

    _guard(_report)


@app.command()
def validate(
    spec: Path = typer.Argument(..., help="The experiment spec (YAML)."),
    overrides: list[str] | None = typer.Argument(None, help="key=value overrides, as for run."),
    profile: str | None = typer.Option(None, "--profile", help="Apply profiles.<name>."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", help="Check a run's --jobs."),
    out: Path | None = typer.Option(None, "--out", help="Check a run's --out folder."),
    name: str | None = typer.Option(None, "--name", help="Check a run's --name."),
    backend: Backend = typer.Option(Backend.loky, "--backend", help="loky (local) or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Check a Dask address."),
    mlflow: str | None = typer.Option(None, "--mlflow", help="Check an MLflow tracking URI."),
    mlflow_experiment: str | None = typer.Option(None, "--mlflow-experiment"),
):
    """Check a spec without running it: the same checks as ``run --dry-run`` (each dataset is
    loaded once; groups, needs, expectation and plot metrics are checked), and the run options
    given; nothing is written."""

    def _validate():
        from safeclf.execution.options import Options
        from safeclf.execution.runner import run as run_spec

        outcome = run_spec(spec, Options(
            dry_run=True, profile=profile, overrides=overrides or [], jobs=jobs, out=out,
            name=name, backend=backend.value, scheduler=scheduler, mlflow=mlflow,
            mlflow_experiment=mlflow_experiment))
        s = outcome.spec
        from safeclf.execution.preflight import comparisons

        lines = comparisons(s)  # before "valid": nothing is said valid that then fails
        typer.echo(f"{spec}: valid; {len(outcome.jobs)} jobs ({len(s.datasets)} datasets, "
                   f"{len(s.methods)} methods, {len(s.seeds)} seeds)")
        if lines:
            typer.echo("comparisons of groups:")
            for line in lines:
                typer.echo(f"  {line}")

    _guard(_validate)


@app.command()
def methods():
    """List method plugins and their parameters with defaults."""

    def _methods():
        from safeclf.cli.console import print_methods

        print_methods(_console())

    _guard(_methods)


@app.command()
def datasets():
    """List dataset loaders and their parameters."""

    def _datasets():
        from safeclf.cli.console import print_datasets

        print_datasets(_console())

    _guard(_datasets)


@app.command()
def schema():
    """Print the JSON Schema of the spec (for editors)."""

    def _schema():
        import json

        from safeclf.spec.schema import Spec

        typer.echo(json.dumps(Spec.model_json_schema(by_alias=True), indent=2))

    _guard(_schema)


def _plain_help(doc: str | None) -> str | None:
    """A command's docstring as ``--help`` shows it: each paragraph on one line (the terminal
    wraps it at its own width, not where the source did) and reST's double backticks
    dropped."""
    if not doc:
        return doc
    import inspect
    import re

    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(doc))
    return "\n\n".join(" ".join(p.split()).replace("``", "") for p in paragraphs)


for _command in app.registered_commands:
    _command.help = _plain_help(_command.help or _command.callback.__doc__)


if __name__ == "__main__":  # pragma: no cover
    app()

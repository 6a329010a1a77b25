"""Runs a spec's jobs in parallel and fills the run folder.

joblib runs the jobs (loky processes locally, or a Dask distributed cluster); each finished
job's record is written to ``results/<id>.json`` atomically as it arrives, so a run killed at
any moment can be finished with ``resume``: jobs whose record is complete and ``ok`` are
skipped, the others run again, and the tables are rebuilt from every record.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeclf.errors import SafeclfError, SpecError
from safeclf.execution import options as run_options
from safeclf.execution.options import Options  # noqa: F401  (the runner's options, re-exported)
from safeclf.execution.preflight import preflight
from safeclf.plugins import registry
from safeclf.spec.check import check, load_spec, parse
from safeclf.spec.expand import Job, expand, path_units
from safeclf.spec.schema import Spec
from safeclf.store import folder as run_folder
from safeclf.store.result import JobResult


@dataclass
class Outcome:
    run_dir: Path | None
    jobs: list[Job]
    results: list[JobResult]
    failed: int
    expectations: list[dict]
    exit_code: int
    shown_metrics: list[str] = field(default_factory=list)
    table: Any = None  # the metrics table (pandas DataFrame) written to the run folder
    spec: Spec | None = None  # the spec that was run (profile and overrides applied)


def resolve(spec_path: str | Path | Spec | None, opts: Options) -> tuple[Spec, Spec | None]:
    """The spec to run, and the one stored in the run folder when resuming (else ``None``).
    From the file (profile applied), or, when resuming, the run's own; a spec given with
    ``--resume`` must describe the same jobs and metrics, and its expectations and plots (which
    may have been edited since) then replace the stored ones."""
    if opts.resume is not None:
        from safeclf.execution.resume import check_run_folder, check_same_data

        manifest = check_run_folder(Path(opts.resume))
        spec = parse(_stored_spec(Path(opts.resume)))
        check(spec)
        check_same_data(manifest, Path(opts.resume), opts.allow_changed_data)
        if opts.overrides and spec_path is None:
            raise SpecError("key=value overrides apply to a spec file: give SPEC with --resume")
        if spec_path is not None:
            given = spec_path if isinstance(spec_path, Spec) else \
                load_spec(spec_path, opts.profile, overrides=opts.overrides)
            same_jobs = [j.id for j in expand(given)] == [j.id for j in expand(spec)]
            if not same_jobs or given.metrics != spec.metrics:
                raise SpecError(
                    f"--resume: {spec_path} (profile {opts.profile or 'none'}) does not describe "
                    f"the jobs {'' if same_jobs else 'and metrics '}of the run in '{opts.resume}'"
                )
            given.name = spec.name
            return given, spec
        return spec, spec
    if spec_path is None:
        raise SpecError("give a spec file, or --resume RUN_DIR")
    # a Spec comes from the Python API, already profiled, overridden and checked
    spec = spec_path if isinstance(spec_path, Spec) else \
        load_spec(spec_path, opts.profile, overrides=opts.overrides)
    if opts.name:
        spec.name = parse(dict(spec.resolved(), name=opts.name)).name
    return spec, None


def payloads(spec: Spec, jobs: list[Job], run_dir: Path | None = None) -> list[dict[str, Any]]:
    datasets = [dict(d.model_dump(mode="json"), name=spec.dataset_label(i))
                for i, d in enumerate(spec.datasets)]
    methods = [m.model_dump(mode="json") for m in spec.methods]
    return [{
        "job": {"id": j.id, "dataset": j.dataset, "method": j.method,
                "plugin": spec.methods[j.method_index].method, "params": j.params,
                "seed": j.seed, "fold": j.fold},
        "dataset": datasets[j.dataset_index],
        "method": methods[j.method_index],
        "metrics": list(spec.metrics),
        # absolute: a worker kept from an earlier run may have another working folder
        "model_path": (str(Path(run_dir).absolute() / "models" / f"{j.id}.skops")
                       if run_dir is not None and spec.saves_model(j.method_index) else None),
        "confidence": spec.confidence,
    } for j in jobs]


#: How long to wait for a Dask scheduler named by --scheduler.
CONNECT_TIMEOUT = "10s"


@contextlib.contextmanager
def _backend(name: str, scheduler: str | None, n_jobs: int):
    """A joblib backend context, yielding what the manifest records about it: the number of
    workers and, for Dask, the scheduler's address (given, or of a LocalCluster started here).
    Entered before the run folder is made, so an unreachable scheduler leaves nothing behind."""
    import joblib

    if name == "loky":
        from safeclf.execution.backend import exit_with_parent

        workers = n_jobs if n_jobs > 0 else (joblib.cpu_count() or 1)
        with joblib.parallel_config(backend="loky", n_jobs=n_jobs, initializer=exit_with_parent):
            yield {"workers": workers}
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise SafeclfError("--backend dask needs the dask extra: pip install 'safeclf[dask]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            raise SpecError(
                f"--scheduler: cannot reach a Dask scheduler at '{scheduler}': {exc}") from None
        cluster = None
    else:
        workers = n_jobs if n_jobs > 0 else (joblib.cpu_count() or 1)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    try:
        info = client.scheduler_info()
        facts = {"workers": len(info.get("workers", {})), "scheduler": client.scheduler.address,
                 "threads": sum(w.get("nthreads", 0) for w in info.get("workers", {}).values())}
        with joblib.parallel_config(backend="dask"):
            yield facts
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def execute(spec: Spec, jobs: list[Job], run_dir: Path, opts: Options, progress=None,
            written: dict[str, str] | None = None) -> None:
    """Run ``jobs`` on the joblib backend in effect and write each record into ``run_dir`` as
    it finishes; ``written`` (when given) receives each record's text by job id, so that
    :func:`finish` need not read them back."""
    import joblib

    from safeclf.execution.job import run_recorded
    from safeclf.store.records import JOURNAL, journal_line

    log_path, sums_path = run_dir / "run.log", run_dir / JOURNAL
    with contextlib.ExitStack() as stack:
        try:
            log = log_path.open("a", encoding="utf-8")
            stack.callback(_close_quietly, log)  # a full disk's error is already on its way
            sums = sums_path.open("a", encoding="utf-8")
            stack.callback(_close_quietly, sums)
        except OSError as exc:
            raise run_folder.WriteError.at(
                sums_path if log_path.exists() else log_path, exc) from exc
        # a unit is one job, or the grid points of a path (methods[i].path), in one worker
        units = [payloads(spec, unit, run_dir) for unit in path_units(spec, jobs)]
        stream = joblib.Parallel(return_as="generator_unordered")(
            joblib.delayed(run_recorded)(u) for u in units)
        stack.callback(_stop, stream)
        for result, text in (r for records in stream for r in records):
            run_folder.atomic_write(run_folder.result_path(run_dir, result.id), text)
            if written is not None:
                written[result.id] = text
            try:  # listed as written, so --resume can tell it from a record put there later
                sums.write(journal_line(result.id, run_folder.text_sha256(text)))
                sums.flush()
            except OSError as exc:
                raise run_folder.WriteError.at(sums_path, exc) from exc
            line = (f"{time.strftime('%H:%M:%S')} {result.status.value:6s} {result.id} "
                    f"{result.dataset} {result.method} {result.params} seed={result.seed}")
            if result.error:
                line += f" :: {result.error}"
            try:
                log.write(line + "\n")
                log.flush()
            except OSError as exc:
                raise run_folder.WriteError.at(log_path, exc) from exc
            if progress is not None:
                progress(result)


def _stop(stream) -> None:
    """Close joblib's result generator (on the way out of an error, such as a full disk), so
    it stops dispatching here and not from its callbacks at interpreter exit, which print
    tracebacks; its warning about the cancelled tasks is not for the user (they run again on
    ``--resume``)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*tasks which were still being processed")
        stream.close()


def _close_quietly(file) -> None:
    with contextlib.suppress(OSError):
        file.close()


def finish(spec: Spec, jobs: list[Job], run_dir: Path, n_jobs: int | None = None,
           written: dict[str, str] | None = None):
    """Read every job's record back (from ``written``, the texts :func:`execute` wrote, where
    it holds them; each is removed from ``written`` once parsed), write the tables, plots and
    expectations; returns the records, the metrics table, the plots that could not be drawn,
    and the verdicts. With ``n_jobs`` (the
    run's local loky workers) the figures are drawn in those workers while this process
    writes the tables."""
    from safeclf.report import by_group, expect
    from safeclf.report import verdicts as promise_report
    from safeclf.report.plots import builtin as plots

    written = written or {}
    results, records = [], []  # the records as stored serve the promises and by-group tables
    for j in jobs:
        record = (json.loads(written.pop(j.id)) if j.id in written  # each text freed once read
                  else run_folder.read_record(run_folder.result_path(run_dir, j.id)))
        if (r := JobResult.from_record(record)) is not None:
            results.append(r)
            records.append(record)
    frame = run_folder.results_table(results)
    promises = promise_report.promises_frame(records)
    where = Path(os.path.abspath(run_dir))  # a worker's working folder may not be ours
    # the promise plot first: one row per job and promise, often the longest to draw
    figures = [(promise_report.write_plot, (where, promises))]
    figures += [(plots.write_plot, (spec, frame, {r.id: r.details for r in results},
                                    where / "plots", i))
                for i in range(len(plots.wanted_plots(spec, frame)))]
    with _drawn(figures, n_jobs) as drawn:
        run_folder.write_tables(run_dir, frame, spec)
        promise_report.write_tables(run_dir, promises)
        by_group.write(run_dir, records)
        verdicts = expect.evaluate(spec, frame) if spec.expect else []
        if verdicts:
            expect.write(run_dir, verdicts)
    problems = [line for lines in drawn[1:] + drawn[:1] for line in lines]  # plots, promises
    return results, frame, problems, verdicts


@contextlib.contextmanager
def _drawn(figures, n_jobs: int | None):
    """Draw ``figures`` ((function, args) pairs, each returning its problems) and yield a
    list that holds each figure's problems, in order, by the end of the block.

    With ``n_jobs`` they are drawn in the local loky pool the jobs ran in (joblib reuses it:
    the same number of workers and initializer as :func:`_backend`) while the block runs: a
    run's figures take as long as its tables and more (seconds for a large grid). Without, or
    if the pool cannot draw them (a worker died), here, after the block. When the block fails
    (a full disk), the workers finish the figures first, so none is still being written when
    the run is resumed; an interrupt stops them."""
    problems: list[list[str]] = []
    stream = None
    if n_jobs is not None and n_jobs != 1 and len(figures) > 1:
        import joblib

        from safeclf.execution.backend import exit_with_parent

        try:
            with joblib.parallel_config(backend="loky", n_jobs=n_jobs,
                                        initializer=exit_with_parent):
                stream = joblib.Parallel(return_as="generator")(
                    joblib.delayed(f)(*args) for f, args in figures)
        except Exception:  # no pool: drawn here
            stream = None
    try:
        yield problems
    except Exception:
        if stream is not None:  # let the workers finish the figures they are drawing
            with contextlib.suppress(Exception):
                for _ in stream:
                    pass
        raise
    except BaseException:  # interrupted: stop drawing
        if stream is not None:
            _stop(stream)
        raise
    drawn = None
    if stream is not None:
        try:
            drawn = list(stream)
        except Exception:  # the pool broke: every figure again, here
            drawn = None
    if drawn is None:
        drawn = [f(*args) for f, args in figures]
    problems += drawn


def run(spec_path: str | Path | None, opts: Options, console=None) -> Outcome:
    """Validate, expand, run and report. Returns an :class:`Outcome` with the exit code."""
    run_options.check(opts)
    _check_paths(spec_path, opts)
    spec, stored = resolve(spec_path, opts)
    reusable = None
    if opts.resume is not None:  # only records the run listed are reused (else refused)
        from safeclf.execution.resume import reusable_records
        from safeclf.store.read import read_manifest

        reusable = reusable_records(Path(opts.resume), read_manifest(
            Path(opts.resume), where=f"--resume: '{opts.resume}'"))
    jobs = expand(spec)
    preflight(spec)
    if opts.dry_run:
        return Outcome(None, jobs, [], 0, [], 0, spec=spec)
    if opts.mlflow:
        from safeclf.store import mlflow as tracking

        tracking.require()
    with _backend(opts.backend, opts.scheduler, opts.jobs) as backend:
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if opts.resume is not None:
            run_dir = Path(opts.resume)
            from safeclf.store.read import read_manifest

            manifest = read_manifest(run_dir, where=f"--resume: '{run_dir}'")
            manifest.setdefault("resumed", []).append(
                {"command": opts.command, "time": started, "backend": opts.backend, **backend})
            from safeclf.execution.resume import changed_data

            changes = changed_data(manifest.get("data") or [])
            if changes:  # allowed (resolve refused it otherwise): the table mixes both data
                manifest["resumed"][-1]["data_changed"] = changes
            with _resumable(run_dir):
                if spec.resolved() != stored.resolved():
                    manifest["spec_sha256"] = run_folder.write_yaml(run_dir / "spec.yaml",
                                                                    spec.resolved())
                    manifest["resumed"][-1]["spec_updated"] = "expectations/plots replaced by the given spec"
                run_folder.write_json(run_dir / "manifest.json", manifest)
        else:
            manifest = {"command": opts.command, "profile": opts.profile,
                        "overrides": list(opts.overrides), "start": started,
                        "end": None, "seeds": spec.seeds, "n_jobs": len(jobs),
                        "backend": opts.backend, **backend, "data": run_folder.data_files(spec),
                        **run_folder.environment(registry.distributions(
                            [m.method for m in spec.methods], [d.dataset for d in spec.datasets]))}
            run_dir = run_folder.start_run(Path(opts.out), spec.name, spec.resolved(), manifest)
        written: dict[str, str] = {}
        done = _done(jobs, run_dir, reusable) if opts.resume is not None else set()
        if reusable is not None:  # checked texts: finish and the digests read no file again
            written.update((job_id, reusable[job_id]) for job_id in done)
        elif opts.resume is not None:  # an earlier safeclf's folder: nothing to check against
            manifest["resumed"][-1]["records_checked"] = False
        pending = [j for j in jobs if j.id not in done]
        # where this session's wall time went (the resumed entry's, on --resume)
        seconds = (manifest["resumed"][-1] if opts.resume is not None else manifest) \
            .setdefault("seconds", {})
        t0 = time.perf_counter()
        with _resumable(run_dir), _progress(console, len(jobs), len(done)) as tick:
            execute(spec, pending, run_dir, opts, tick, written)
    with _resumable(run_dir):
        t1 = time.perf_counter()
        # the digests first: finish lets go of each record's text once it has parsed it
        digests = run_folder.record_digests(run_dir, [j.id for j in jobs], written)
        results, table, plot_problems, verdicts = finish(
            spec, jobs, run_dir, opts.jobs if opts.backend == "loky" else None, written)
        failed = sum(r.failed for r in results)
        t2 = time.perf_counter()
        seconds.update(jobs=round(t1 - t0, 4), tables=round(t2 - t1, 4))
        manifest.update(end=time.strftime("%Y-%m-%dT%H:%M:%S%z"), ok=len(results) - failed,
                        failed=failed, skipped_on_resume=len(done), plot_problems=plot_problems,
                        records=digests)
        run_folder.write_json(run_dir / "manifest.json", manifest)
        from safeclf.report import html as report

        problems = report.write(run_dir)  # report.html, read back from the folder
        seconds["report"] = round(time.perf_counter() - t2, 4)
        manifest["plot_problems"] += problems
        run_folder.write_json(run_dir / "manifest.json", manifest)
    if opts.mlflow:
        from safeclf.store import mlflow as tracking

        manifest["mlflow"] = tracking.log_run(opts.mlflow, opts.mlflow_experiment or spec.name,
                                              run_dir, spec, [r.to_record() for r in results])
        run_folder.write_json(run_dir / "manifest.json", manifest)
    from safeclf.report.expect import unmet

    code = 1 if failed or (opts.check and unmet(verdicts)) else 0
    return Outcome(run_dir, jobs, results, failed, verdicts, code, shown(spec.metrics), table,
                   spec)


def _done(jobs: list[Job], run_dir: Path, reusable: dict[str, str] | None) -> set[str]:
    """The ids of ``jobs`` whose record is complete and finished: from ``reusable`` (the texts
    :func:`safeclf.execution.resume.reusable_records` checked), or, for a folder that lists no
    digests (``None``), read from ``results/``."""
    if reusable is None:
        return {j.id for j in jobs
                if (r := run_folder.read_result(run_folder.result_path(run_dir, j.id)))
                and r.finished}
    done = set()
    for j in jobs:
        if j.id in reusable:
            try:
                r = JobResult.from_record(json.loads(reusable[j.id]))
            except ValueError:
                r = None
            if r is not None and r.finished:
                done.add(j.id)
    return done


def shown(metrics) -> list[str]:
    """The summary's columns for the spec's ``metrics``: ``test_<name>``, and for the fairness
    ratio also its undirected name (``test_fairness_ratio_minmax``, reported where the dataset
    names no privileged group), so it is shown under whichever name the jobs reported."""
    from safeclf.guarantees.groups import UNDIRECTED

    out = []
    for m in metrics:
        out.append(f"test_{m}")
        if m == "fairness_ratio":
            out.append(f"test_{UNDIRECTED}")
    return out


def _check_paths(spec_path: str | Path | None, opts: Options) -> None:
    """The spec file is a readable regular file and the ``--resume`` folder a folder
    (writable unless nothing is run), each mistake said as it is (a FIFO, a device, a symlink
    loop); whether the folder is a run is :func:`safeclf.execution.resume.check_run_folder`'s."""
    from safeclf._utils import paths

    if spec_path is not None and not isinstance(spec_path, Spec):
        paths.require_file(spec_path, "spec file", folder_hint="give the YAML file inside it")
    if opts.resume is not None:
        paths.require_folder(opts.resume, "--resume:", writable=not opts.dry_run)


@contextlib.contextmanager
def _resumable(run_dir: Path):
    """Once the run folder holds its spec and manifest, an interrupt or a failed write (a
    full disk) leaves a run that ``--resume`` finishes: the records written so far are
    complete files (each written atomically), and the message says how to go on."""
    try:
        yield
    except KeyboardInterrupt as exc:
        exc.run_dir = run_dir  # the CLI's hint names the folder to resume
        raise
    except run_folder.WriteError as exc:
        raise run_folder.WriteError(
            f"{exc}; the job records written before it are intact: free space, then finish the "
            f"run with: safeclf run --resume {run_dir}") from None


def _stored_spec(run_dir: Path) -> dict:
    from safeclf.spec.yaml import read_yaml

    return read_yaml(run_dir / "spec.yaml")


#: Seconds between two plain progress lines (a log, not a terminal), and the longest silence:
#: while no job finishes, a line still says the run is alive.
PLAIN_EVERY, PLAIN_SILENCE = 5.0, 30.0


@contextlib.contextmanager
def _plain_progress(console, total: int, already: int, every: float = PLAIN_EVERY,
                    silence: float = PLAIN_SILENCE):
    """Yields a per-result callback printing one plain line ``jobs: 12/40 finished (12 done,
    0 failed), 28 remaining (31 s)`` at the first result, at most every ``every`` seconds
    after and at the last one; a background thread repeats the line when ``silence`` seconds
    pass without one (a long job), so a log never stays silent for long."""
    import threading
    import time

    begin = time.monotonic()
    state = {"done": already, "failed": 0, "said": -every}
    lock, stop = threading.Lock(), threading.Event()

    def say(now: float) -> None:
        finished = state["done"] + state["failed"]
        state["said"] = now
        console.print(f"jobs: {finished}/{total} finished ({state['done']} done, "
                      f"{state['failed']} failed), {total - finished} remaining "
                      f"({now:.0f} s)", highlight=False, markup=False)

    def tick(result):
        with lock:
            state["failed" if result.failed else "done"] += 1
            now = time.monotonic() - begin
            if now - state["said"] >= every or state["done"] + state["failed"] == total:
                say(now)

    def heartbeat():
        while not stop.wait(min(silence, every)):
            with lock:
                now = time.monotonic() - begin
                if now - max(state["said"], 0.0) >= silence:
                    say(now)

    thread = threading.Thread(target=heartbeat, name="safeclf-progress", daemon=True)
    thread.start()
    try:
        yield tick
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def _progress(console, total: int, already: int):
    """A rich progress bar counting done / failed / remaining; yields a per-result callback."""
    if console is None:
        yield None
        return
    if not console.is_terminal:  # a log: plain lines, so it shows the run is alive
        with _plain_progress(console, total, already) as tick:
            yield tick
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    counts = {"done": already, "failed": 0}
    columns = [TextColumn("[bold]jobs"), BarColumn(),
               TextColumn("{task.fields[done]} done, [red]{task.fields[failed]} failed[/red], "
                          "{task.fields[left]} remaining"), TimeElapsedColumn()]
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("jobs", total=total, completed=already, done=already, failed=0,
                            left=total - already)

        def tick(result):
            counts["failed" if result.failed else "done"] += 1
            finished = counts["done"] + counts["failed"]
            bar.update(task, completed=finished, done=counts["done"], failed=counts["failed"],
                       left=total - finished)

        yield tick

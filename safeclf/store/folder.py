"""The run folder: creation, atomic writes, manifest, result files, tables, reading runs back.

Layout of ``runs/<YYYYMMDD-HHMMSS>-<name>/``::

    spec.yaml          the resolved spec (profile applied, labels and defaults filled in)
    manifest.json      command line, versions, git commit, host, start/end time, seeds, counts
    results/<id>.json  one record per job, written atomically (temp file + rename)
    metrics.csv        one row per job: dataset, method, param.*, seed, fold, status, metrics
    metrics.parquet    the same table, typed
    summary.md         mean ± std of the headline metrics, one table per method family
    summary.csv        mean ± std of every metric by dataset, method and parameters
    expectations.md    each expectation, the measured value and the verdict (when any)
    promises.csv       one row per job and promise: the promise, its test estimate, interval,
                       n and verdict (safeclf/report/verdicts.py); promises.md its summary
    by_group.csv       where the data has groups: each rate per group and each ratio and
                       difference per compared pair, with intervals (safeclf/report/by_group.py);
                       by_group.md its summary
    plots/             PNG and SVG figures
    run.log            one line per finished job
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from safeclf.errors import SafeclfError, SpecError
from safeclf.store.result import RESERVED_COLUMNS, JobResult, JobStatus, ok_rows


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value).replace("|", "\\|")


def to_markdown(frame) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (no index)."""
    cols = [str(c) for c in frame.columns]
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


class WriteError(SafeclfError):
    """A file of the run folder could not be written (a full disk, a quota, a read-only or
    vanished folder); the message names the file and the reason."""

    #: the file that could not be written (when known)
    path: Path | None = None

    @classmethod
    def at(cls, path: Path, exc: OSError) -> WriteError:
        err = cls(f"cannot write '{path}': {exc.strerror or exc}")
        err.path = path
        return err


#: numbers the temporary files of this process (see :func:`_temp_beside`)
_TEMP_SEQUENCE = itertools.count()


def _temp_beside(path: Path) -> tuple[int, Path]:
    """A new, empty temporary file beside ``path`` (its folder made if missing), open for
    writing: (descriptor, path). Its name holds the process id and a counter, taken with
    ``O_EXCL`` (a name left by an earlier process is skipped), and its mode is the one
    ``open()`` gives a new file (0o666 less the umask, applied by the kernel)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.parent / f".{path.name}.{os.getpid()}.{next(_TEMP_SEQUENCE)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(tmp, flags, 0o666), tmp


@contextlib.contextmanager
def _replacing(path: Path):
    """Yield (descriptor, path) of a new temporary file beside ``path``, open for writing,
    that replaces ``path`` when the block ends without error (see :func:`replacing`); the
    block closes the descriptor."""
    tmp = None
    try:
        fd, tmp = _temp_beside(path)
        yield fd, tmp
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise WriteError.at(path, exc) from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def replacing(path: Path):
    """Yield a temporary path beside ``path`` that replaces ``path`` when the block ends
    without error, so readers see the old file or the whole new one, even if the process is
    killed mid-write (the rename is atomic; no fsync: a killed process leaves its written
    pages to the kernel, and power loss is not what resume guards). The file gets the mode
    the umask gives; an ``OSError`` (a full disk) is a :class:`WriteError` naming ``path``,
    and the temporary file is removed, as it is when the block raises anything else."""
    with _replacing(path) as (fd, tmp):
        os.close(fd)
        yield tmp


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8) or bytes to ``path`` as :func:`replacing` does (one open, the
    writes, one rename: a record a job is cheap to write while the workers use every core)."""
    data = memoryview(text.encode("utf-8") if isinstance(text, str) else text)
    with _replacing(path) as (fd, _):
        try:
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)


def atomic_write_all(files: list[tuple[Path, str | bytes]]) -> None:
    """Write each ``(path, text)`` as :func:`atomic_write` does, all or none: every temporary
    file is written before the first rename, so a path that cannot be written (a full disk, a
    folder where no file can be made) stops the writes with nothing replaced; the
    :class:`WriteError` names that path."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, text in files:
            data = memoryview(text.encode("utf-8") if isinstance(text, str) else text)
            try:
                fd, tmp = _temp_beside(path)
            except OSError as exc:
                raise WriteError.at(path, exc) from exc
            temps.append((tmp, path))
            try:
                while data:
                    data = data[os.write(fd, data):]
            except OSError as exc:
                raise WriteError.at(path, exc) from exc
            finally:
                os.close(fd)
        while temps:
            tmp, path = temps[0]
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise WriteError.at(path, exc) from exc
            temps.pop(0)
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def create_run_dir(out: Path, name: str, stamp: str | None = None) -> Path:
    """A new, empty ``out/<stamp>-<name>`` folder; never reuses an existing one."""
    stamp = stamp or time.strftime("%Y%m%d-%H%M%S")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(f"--out: cannot create output folder '{out}': {exc.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise SpecError(f"--out: output folder '{out}' is not writable")
    for n in range(1, 1000):
        path = out / (f"{stamp}-{name}" if n == 1 else f"{stamp}-{name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise SafeclfError(f"cannot create run folder '{path}': {exc.strerror}") from None
        (path / "results").mkdir()
        return path
    raise SafeclfError(f"too many runs named '{name}' at {stamp} in '{out}'")


def start_run(out: Path, name: str, spec: dict, manifest: dict) -> Path:
    """A new run folder (:func:`create_run_dir`) holding ``spec.yaml`` and ``manifest.json``,
    what ``--resume`` needs; if either cannot be written (a full disk), the folder is removed
    and the :class:`WriteError` says so."""
    import shutil

    path = create_run_dir(out, name)
    text = yaml_text(spec)
    try:
        atomic_write(path / "spec.yaml", text)
        manifest["spec_sha256"] = text_sha256(text)  # what --resume, verify and deploy check
        write_json(path / "manifest.json", manifest)
    except WriteError as exc:
        shutil.rmtree(path, ignore_errors=True)
        raise WriteError(f"{exc}; the run did not start and its folder was removed") from None
    return path


def _git_status(where: Path | None = None):
    """``git status`` of safeclf's source checkout (or of ``where``), started and left running
    for :func:`_commit_of` to read; ``None`` when git cannot be started. Read without optional
    locks: a plain ``git status`` would refresh the index and take ``.git/index.lock`` in the
    user's checkout, failing a ``git commit`` made meanwhile."""
    import subprocess

    git = ["git", "--no-optional-locks", "-C", str(where or Path(__file__).parent)]
    try:
        return subprocess.Popen([*git, "status", "--porcelain=v2", "--branch",
                                 "--untracked-files=no"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True,
                                env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"))
    except OSError:
        return None


def _commit_of(status) -> str | None:
    """The commit a :func:`_git_status` process names, ``-dirty`` when tracked files differ;
    ``None`` outside a checkout, before its first commit, or after 5 s without an answer."""
    import subprocess

    if status is None:
        return None
    try:
        out, _ = status.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        status.kill()
        status.communicate()
        return None
    lines = out.splitlines()
    head = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if status.returncode != 0 or head is None or head == "(initial)":
        return None
    return head + ("-dirty" if any(not line.startswith("#") for line in lines) else "")


def _git_commit(where: Path | None = None) -> str | None:
    """The commit of safeclf's source checkout (or of ``where``), ``-dirty`` when tracked
    files differ."""
    return _commit_of(_git_status(where))


def _version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None``. Read from the head of its
    metadata file: ``importlib.metadata.version`` parses the long description too, which
    doubles the time of a manifest's two dozen versions."""
    from email.parser import HeaderParser
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(name)
    except PackageNotFoundError:
        return None
    head = (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").split("\n\n", 1)[0]
    return HeaderParser().parsestr(head)["Version"] or dist.version


def environment(distributions: dict[str, str] | None = None) -> dict[str, Any]:
    """Versions and host facts for the manifest: safeclf and the ``distributions`` behind the
    plugins a run used (:func:`safeclf.plugins.registry.distributions`), and every installed package
    any of them requires (optional extras included), with its version."""
    import platform
    import re
    import sys
    from importlib.metadata import requires

    from safeclf._utils.version import __version__

    git = _git_status()  # runs while the versions are read
    plugins = {"safeclf": __version__, **(distributions or {})}
    names = dict.fromkeys(re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0]
                          for dist in plugins for req in requires(dist) or [])
    packages = {name: v for name in names if (v := _version(name)) is not None}
    return {
        "safeclf_version": __version__,
        "plugins": plugins,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "packages": dict(sorted(packages.items())),
        "git_commit": _commit_of(git),
    }


def data_files(spec) -> list[dict[str, Any]]:
    """The identity of every data file a spec reads: dataset label, parameter, absolute path,
    size and SHA-256 of the content (so a run folder says which data made it)."""
    from safeclf.spec.check import path_params

    out = []
    for i, d in enumerate(spec.datasets):
        for key in path_params(d.dataset):
            value = d.params.get(key)
            if not value:
                continue
            out.append({"dataset": spec.dataset_label(i), "param": key,
                        **file_identity(Path(value))})
    return out


def file_identity(path: Path) -> dict[str, Any]:
    """``path``, its size and the SHA-256 of its content."""
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"path": str(path), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def json_text(data: Any) -> str:
    """``data`` as the run folder's JSON files hold it (indented; what JSON cannot hold, as
    its ``str``)."""
    return json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"


def write_json(path: Path, data: Any) -> None:
    atomic_write(path, json_text(data))


def yaml_text(data: Any) -> str:
    """``data`` as the run folder's YAML files hold it."""
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_yaml(path: Path, data: Any) -> str:
    """Write ``data`` as YAML to ``path``; returns the SHA-256 of the text written."""
    text = yaml_text(data)
    atomic_write(path, text)
    return text_sha256(text)


def text_sha256(text: str | bytes) -> str:
    """The SHA-256 of ``text`` (UTF-8) or bytes: the digest the manifest keeps of the spec
    and of every record (``spec_sha256``, ``records``)."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def record_digests(run_dir: Path, job_ids, written: dict[str, str] | None = None
                   ) -> dict[str, str]:
    """``{job id: SHA-256}`` of each job's record (``results/<id>.json``) that exists: from
    ``written`` (the texts this session wrote) where it holds it, else read from the file."""
    written = written or {}
    out = {}
    for job_id in job_ids:
        if job_id in written:
            out[job_id] = text_sha256(written[job_id])
            continue
        try:
            out[job_id] = text_sha256(result_path(run_dir, job_id).read_bytes())
        except OSError:
            continue
    return out


def result_path(run_dir: Path, job_id: str) -> Path:
    return run_dir / "results" / f"{job_id}.json"


def read_record(path: Path) -> Any:
    """The JSON value stored at ``path``, or ``None`` if it cannot be read or parsed (whether
    it is a complete record is :meth:`JobResult.from_record`'s to say)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_result(path: Path) -> JobResult | None:
    """The job result stored at ``path`` if it is complete and valid, else ``None``."""
    return JobResult.from_record(read_record(path))


# --------------------------------------------------------------------------------------------
# tables


def results_table(results: list[JobResult]):
    """One row per job: identity columns, ``param.<name>`` columns, metrics, timings (the
    columns :data:`~safeclf.store.result.RESERVED_COLUMNS` keeps apart from metrics)."""
    import pandas as pd

    rows = []
    for r in results:
        row = {"job": r.id, "dataset": r.dataset, "method": r.method,
               "params": json.dumps(r.params, sort_keys=True, default=str),
               "seed": r.seed, "fold": r.fold, "status": r.status.value, "error": r.error}
        for k, v in r.params.items():
            row[f"param.{k}"] = v if isinstance(v, (int, float, str, bool)) or v is None \
                else json.dumps(v, sort_keys=True, default=str)
        row.update({k: (float("nan") if v is None else v) for k, v in r.metrics.items()})
        row["fit_seconds"] = r.fit_seconds
        row["predict_seconds"] = r.predict_seconds
        row["solver_status"] = r.solver_status
        row["n_iter"] = r.n_iter
        row["degenerate_reason"] = r.degenerate_reason
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.sort_values(["dataset", "method", "params", "seed", "fold"],
                              na_position="first", kind="stable").reset_index(drop=True)
    return frame


def metric_columns(frame) -> list[str]:
    """The metric columns of a results table, in table order."""
    return [c for c in frame.columns if c not in RESERVED_COLUMNS and not c.startswith("param.")]


def summary_table(frame, metrics: list[str] | None = None):
    """Mean ± std over seeds and folds by dataset, method and parameters (as strings)."""
    import numpy as np
    import pandas as pd

    if frame.empty:
        return pd.DataFrame()
    metrics = metric_columns(frame) if metrics is None else metrics
    keys = ["dataset", "method", "params"]
    varying = varying_by_method(frame)
    frame = frame.reset_index(drop=True)  # group indexes are then row positions
    ok_rows = (frame.status == JobStatus.OK.value).to_numpy()
    # one column counts the jobs without a model: where any job has none, or where the
    # metric no_solution is asked for (it is that count's mean, not shown beside it)
    no_solution = (frame.status == "no_solution").any() or "no_solution" in metrics
    metrics = [m for m in metrics if m != "no_solution"]
    # a numeric column (float, int, bool) is what pd.to_numeric leaves it: taken as floats
    # once, instead of converting each group's slice of it
    numeric = {m: frame[m].to_numpy(dtype=float, na_value=np.nan) for m in metrics
               if m in frame and pd.api.types.is_numeric_dtype(frame[m])}
    out = []
    for key, group in frame.groupby(keys, sort=False, dropna=False):
        at = group.index.to_numpy()
        at = at[ok_rows[at]]
        ok = None
        row = dict(zip(keys, key))
        row["params"] = _short_params(row["params"], varying[row["method"]])
        row["jobs"] = f"{len(at)}/{len(group)}"
        if no_solution:
            row["no solution"] = int((group.status == "no_solution").sum())
        for m in metrics:
            if m in numeric:
                values = numeric[m][at]
                values = values[~np.isnan(values)]
            elif m in frame:
                ok = frame.iloc[at] if ok is None else ok
                values = pd.to_numeric(ok[m], errors="coerce").dropna()
            else:
                values = []
            row[m] = _mean_std(values)
        out.append(row)
    return pd.DataFrame(out)


def varying_by_method(frame) -> dict[str, list[str]]:
    """For each method, the parameter names whose value differs between its rows."""
    return {m: varying_keys(g["params"]) for m, g in frame.groupby("method", sort=False)}


def varying_keys(params_column) -> list[str]:
    """Parameter names whose value differs between the rows of one method."""
    dicts = [json.loads(p) for p in params_column.unique()]
    keys = dict.fromkeys(k for d in dicts for k in d)
    return [k for k in keys if len({json.dumps(d.get(k), sort_keys=True) for d in dicts}) > 1]


def _short_params(params_json: str, keys: list[str], width: int = 40) -> str:
    """``k=v`` for the parameters that vary within the method, long values shortened (the
    full parameters are in metrics.csv)."""
    params = json.loads(params_json)
    shown = []
    for k in keys:
        text = json.dumps(params.get(k), default=str) if not isinstance(params.get(k), str) \
            else params[k]
        shown.append(f"{k}={text if len(text) <= width else text[:width - 1] + '…'}")
    return ", ".join(shown) or "-"


def mean_std(values, few: float = math.nan) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1) of ``values``: the one way summary, compare
    and plots aggregate over seeds. The mean of no values is NaN; the std of fewer than two
    values is ``few`` (NaN in tables, 0 for error bars)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    mean = float(values.mean()) if values.size else math.nan
    return mean, (float(values.std(ddof=1)) if values.size > 1 else few)


def _mean_std(values) -> str:
    n = len(values)
    mean, std = mean_std(values)
    if n == 0:
        return "-"
    return f"{mean:.4g}" if n == 1 else f"{mean:.4g} ± {std:.2g}"


#: Arrow types of the identity columns of the metrics table; every other column (parameters,
#: metrics, timings) is float64, bool or string by its values.
FIXED_TYPES = {"job": "string", "dataset": "string", "method": "string", "params": "string",
               "seed": "int64", "fold": "int64", "status": "string", "error": "string",
               "degenerate_reason": "string"}


def parquet_table(frame):
    """The metrics table as an Arrow table with a fixed schema: every column typed even when
    all its values are missing (an all-null column would otherwise get Arrow's ``null`` type,
    and ``pyarrow.dataset`` could not read two runs together), numeric parameters as float64
    whichever runs wrote ``1`` or ``0.5``."""
    import pyarrow as pa

    fields, arrays = [], []
    for col in frame.columns:
        values = [None if _missing(v) else v for v in frame[col].tolist()]
        kind = FIXED_TYPES.get(col) or _value_type(values)
        if kind == "string":
            values = [None if v is None else str(v) for v in values]
        elif kind == "int64":
            values = [None if v is None else int(v) for v in values]
        elif kind == "float64":
            values = [None if v is None else float(v) for v in values]
        fields.append(pa.field(col, getattr(pa, kind)()))
        arrays.append(pa.array(values, type=fields[-1].type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _value_type(values) -> str:
    """float64 for numbers (and for a column with no value at all: metrics), bool, else string."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool_"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float64"
    return "string"


def write_tables(run_dir: Path, frame, spec=None) -> None:
    """metrics.csv, metrics.parquet, summary.csv (mean ± std of every metric) and summary.md
    (one table per method family with its headline metrics), each written atomically."""
    atomic_write(run_dir / "metrics.csv", frame.to_csv(index=False))
    import pyarrow.parquet as pq

    with replacing(run_dir / "metrics.parquet") as tmp:
        pq.write_table(parquet_table(frame), tmp)
    summary = summary_table(frame)
    atomic_write(run_dir / "summary.csv", summary.to_csv(index=False))
    text = ("# Summary\n\nMean ± std over seeds and folds; `jobs` counts successful/all. Every "
            "metric of every job is in `summary.csv` (the same rows) and `metrics.csv`.\n")
    if frame.empty:
        text += "\n(no jobs)\n"
    for family, (columns, rows) in family_tables(frame, spec).items():
        text += f"\n## {family}\n\n{to_markdown(summary_table(rows, columns))}\n"
    atomic_write(run_dir / "summary.md", text)


def family_tables(frame, spec=None) -> dict[str, tuple[list[str], Any]]:
    """``{family: (headline metrics, rows)}``: the rows of each method plugin (method family)
    and the metrics worth a column for it: the spec's metrics on the test part, then any
    metric the spec's expectations or plots name, each kept only where the family reports it.
    Methods of one family that report different metrics (a certified entry beside a plain
    one) get a table each, ``family (method, ...)``, so no table has a column some of its
    methods leave empty."""
    if frame.empty:
        return {}
    plugin_of = {}
    named: list[str] = []
    if spec is not None:
        plugin_of = {spec.method_label(i): m.method for i, m in enumerate(spec.methods)}
        named = [f"test_{m}" for m in spec.metrics]
        named += [e.metric for e in spec.expect]
        named += [v for p in spec.plots for k, v in (p.model_extra or {}).items()
                  if k in ("metric", "x", "y") and isinstance(v, str)]
    available = metric_columns(frame)
    named += [c for c in available if c.startswith("test_")] if spec is None else []
    out = {}
    families = frame["method"].map(lambda m: plugin_of.get(m, m))
    for family in dict.fromkeys(families):
        rows = frame[families == family]
        by_columns: dict[tuple, list[str]] = {}
        without = []  # methods with no model at all: beside the first of their family
        for method in dict.fromkeys(rows["method"]):
            ok = ok_rows(rows[rows["method"] == method])
            if ok.empty:
                without.append(method)
                continue
            own = tuple(c for c in dict.fromkeys(named)
                        if c in available and ok[c].notna().any())
            by_columns.setdefault(own, []).append(method)
        if not by_columns:
            by_columns[()] = []
        by_columns[next(iter(by_columns))] += without
        if len(by_columns) == 1:
            out[family] = (list(next(iter(by_columns))), rows)
            continue
        for own, methods in by_columns.items():
            out[f"{family} ({', '.join(methods)})"] = (list(own),
                                                        rows[rows["method"].isin(methods)])
    return out

"""The run folder: creation, atomic writes, manifest, result files, tables, reading runs back.

Layout of ``runs/<YYYYMMDD-HHMMSS>-<name>/``::

    spec.yaml          the resolved spec (profile applied, labels and defaults filled in)
    manifest.json      command line, versions, git commit, host, start/end time, seeds, counts
    results/<id>.json  one record per job, written atomically (temp file + rename)
    metrics.csv        one row per job: dataset, method, param.*, seed, fold, status, metrics
    metrics.parquet    the same table, typed
    summary.md         mean ± std by dataset, method and parameters
    expectations.md    each expectation, the measured value and the verdict (when any)
    plots/             PNG and SVG figures
    run.log            one line per finished job
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from safeclf.errors import SafeclfError, SpecError
from safeclf.tables import to_markdown

RESULT_KEYS = ("id", "dataset", "method", "params", "seed", "fold", "status", "metrics")


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, even
    if the process is killed mid-write (the rename is atomic; no fsync: a killed process
    leaves its written pages to the kernel, and power loss is not what resume guards)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def _git_commit() -> str | None:
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5, cwd=Path(__file__).parent)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5,
                               cwd=Path(__file__).parent).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict[str, Any]:
    """Versions and host facts for the manifest."""
    import platform
    import sys
    from importlib.metadata import PackageNotFoundError, version

    from safeclf import __version__

    packages = {}
    for pkg in ("numpy", "scipy", "pandas", "scikit-learn", "joblib", "cvxpy", "clarabel",
                "matplotlib", "pyarrow", "pydantic", "typer", "rich", "pyyaml", "dask",
                "distributed", "fairlearn", "proset"):
        try:
            packages[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return {
        "safeclf_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "packages": packages,
        "git_commit": _git_commit(),
    }


def write_json(path: Path, data: Any) -> None:
    atomic_write(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def write_yaml(path: Path, data: Any) -> None:
    import yaml

    atomic_write(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def result_path(run_dir: Path, job_id: str) -> Path:
    return run_dir / "results" / f"{job_id}.json"


def read_result(path: Path) -> dict | None:
    """The result record at ``path`` if it is complete and valid, else ``None``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or any(k not in data for k in RESULT_KEYS):
        return None
    return data


# --------------------------------------------------------------------------------------------
# tables


def results_table(results: list[dict]):
    """One row per job: identity columns, ``param.<name>`` columns, metrics, timings."""
    import pandas as pd

    rows = []
    for r in results:
        row = {"job": r["id"], "dataset": r["dataset"], "method": r["method"],
               "params": json.dumps(r["params"], sort_keys=True, default=str),
               "seed": r["seed"], "fold": r["fold"], "status": r["status"],
               "error": r.get("error")}
        for k, v in r["params"].items():
            row[f"param.{k}"] = v if isinstance(v, (int, float, str, bool)) or v is None \
                else json.dumps(v, sort_keys=True, default=str)
        row.update({k: (float("nan") if v is None else v) for k, v in (r.get("metrics") or {}).items()})
        row["fit_seconds"] = r.get("fit_seconds")
        row["predict_seconds"] = r.get("predict_seconds")
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.sort_values(["dataset", "method", "params", "seed", "fold"],
                              na_position="first", kind="stable").reset_index(drop=True)
    return frame


def metric_columns(frame) -> list[str]:
    """The metric columns of a results table, in table order."""
    fixed = {"job", "dataset", "method", "params", "seed", "fold", "status", "error",
             "fit_seconds", "predict_seconds"}
    return [c for c in frame.columns if c not in fixed and not c.startswith("param.")]


def summary_table(frame, metrics: list[str] | None = None):
    """Mean ± std over seeds and folds by dataset, method and parameters (as strings)."""
    import pandas as pd

    if frame.empty:
        return pd.DataFrame()
    metrics = metrics or metric_columns(frame)
    keys = ["dataset", "method", "params"]
    varying = varying_by_method(frame)
    out = []
    for key, group in frame.groupby(keys, sort=False, dropna=False):
        ok = group[group.status == "ok"]
        row = dict(zip(keys, key))
        row["params"] = _short_params(row["params"], varying[row["method"]])
        row["jobs"] = f"{len(ok)}/{len(group)}"
        for m in metrics:
            values = pd.to_numeric(ok[m], errors="coerce").dropna() if m in ok else []
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


def _mean_std(values) -> str:
    import numpy as np

    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "-"
    if values.size == 1:
        return f"{values[0]:.4g}"
    return f"{values.mean():.4g} ± {values.std(ddof=1):.2g}"


def write_tables(run_dir: Path, frame) -> None:
    """metrics.csv, metrics.parquet and summary.md, each written atomically."""
    atomic_write(run_dir / "metrics.csv", frame.to_csv(index=False))
    tmp = run_dir / ".metrics.parquet.tmp"
    parquet_frame = frame.copy()
    for c in parquet_frame.columns:
        if parquet_frame[c].dtype == object:
            parquet_frame[c] = parquet_frame[c].map(lambda v: None if v is None else str(v))
    parquet_frame.to_parquet(tmp, index=False)
    os.replace(tmp, run_dir / "metrics.parquet")
    summary = summary_table(frame)
    text = "# Summary\n\nMean ± std over seeds and folds; `jobs` counts successful/all.\n\n"
    text += to_markdown(summary) if not summary.empty else "(no jobs)"
    atomic_write(run_dir / "summary.md", text + "\n")


def load_run(run_dir: str | Path):
    """``(spec_dict, manifest, table)`` of a finished run folder, for compare."""
    import pandas as pd
    import yaml

    path = Path(run_dir)
    if not path.is_dir():
        raise SpecError(f"'{run_dir}' is not a run folder (it does not exist)")
    table_path = path / "metrics.parquet"
    if not table_path.is_file():
        if (path / "metrics.csv").is_file():
            table = pd.read_csv(path / "metrics.csv")
        else:
            inner = [p for p in path.iterdir() if (p / "spec.yaml").is_file()]
            if inner:
                raise SpecError(f"'{run_dir}' is not a run folder but holds {len(inner)} runs; "
                                f"give them as {run_dir}/*")
            raise SpecError(f"'{run_dir}' is not a finished run folder (no metrics table)")
    else:
        table = pd.read_parquet(table_path)
    spec = yaml.safe_load((path / "spec.yaml").read_text()) if (path / "spec.yaml").is_file() else {}
    manifest = json.loads((path / "manifest.json").read_text()) if (path / "manifest.json").is_file() else {}
    return spec, manifest, table

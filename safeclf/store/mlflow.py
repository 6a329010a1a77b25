"""Sending a finished run to MLflow (optional: ``pip install 'safeclf[mlflow]'``).

``safeclf run SPEC --mlflow URI`` logs, in the experiment named after the spec (or
``--mlflow-experiment``), one parent MLflow run for the safeclf run, holding the run folder's
spec, manifest, tables, expectations and plots as artifacts, and one child run per job with its
parameters (dataset, method, seed, fold and the method's parameters), its metrics and its
status as tags. MLflow's namespaces are kept apart as MLflow has them: parameters, metrics, tags.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from safeclf.errors import SafeclfError, SpecError

#: Files of the run folder logged as artifacts of the parent run (those present).
ARTIFACTS = ("spec.yaml", "manifest.json", "metrics.csv", "metrics.parquet", "summary.md",
             "summary.csv", "expectations.md", "expectations.csv", "promises.csv", "promises.md",
             "report.html", "run.log")


def require() -> None:
    """Fail early, with the install line, when mlflow is not installed."""
    try:
        import mlflow  # noqa: F401
    except ImportError:
        raise SafeclfError("--mlflow needs the mlflow extra: pip install 'safeclf[mlflow]'") from None


#: Schemes MLflow's tracking client takes: its file store, its REST server, its SQL stores.
SCHEMES = ("file", "http", "https", "sqlite", "postgresql", "mysql", "mssql", "databricks")

#: Seconds to wait for an MLflow server's answer, before the run and while logging.
TIMEOUT = 5


def check_uri(uri: str) -> None:
    """Before anything runs: ``uri`` is a folder (or file: URI) that is or can become a folder,
    an SQL store, or a server that answers within :data:`TIMEOUT` seconds; raises
    :class:`SpecError` naming ``--mlflow``."""
    from urllib.parse import urlsplit

    if not uri.strip():
        raise SpecError("--mlflow must not be empty: give a folder or an http(s):// URI")
    scheme = urlsplit(uri).scheme if "://" in uri or uri.startswith("file:") else ""
    if scheme and scheme.split("+")[0] not in SCHEMES:
        raise SpecError(f"--mlflow: unsupported URI scheme '{scheme}' in '{uri}' (give a folder, "
                        "file:, http(s):, or a database URI such as sqlite:///mlflow.db)")
    if scheme in ("", "file"):
        _check_store_folder(Path(urlsplit(uri).path) if scheme else Path(uri), uri)
    elif scheme in ("http", "https"):
        _check_server(uri)


def _check_store_folder(path: Path, uri: str) -> None:
    from safeclf._utils.paths import what_is, writable_folder

    kind = what_is(path)
    if kind not in ("a folder", "missing"):
        raise SpecError(f"--mlflow: '{uri}' is {kind}; MLflow's file store is a folder")
    writable_folder(path, "--mlflow:", noun="the store folder")


def _check_server(uri: str) -> None:
    """The server answers ``GET /health`` (MLflow's liveness endpoint) within the timeout."""
    import urllib.error
    import urllib.request

    url = uri.rstrip("/") + "/health"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:  # noqa: S310 (http(s) only)
            response.read(64)
    except urllib.error.HTTPError as exc:
        raise SpecError(f"--mlflow: '{uri}' answers HTTP {exc.code} at /health; is it an MLflow "
                        "tracking server?") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SpecError(f"--mlflow: no MLflow server answers at '{uri}' within {TIMEOUT} s "
                        f"({' '.join(str(reason).split())[:120]})") from None


def _client(uri: str):
    from mlflow.tracking import MlflowClient

    # a server that stops answering mid-run: a few seconds, not MLflow's minutes of retries
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(TIMEOUT))
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    if "://" not in uri or uri.startswith("file:"):
        # a local folder: MLflow keeps its file store only on request (it prefers a database)
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        if "://" not in uri:
            uri = Path(uri).resolve().as_uri()
    return MlflowClient(tracking_uri=uri), uri


def _param_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 6000 else text[:5999] + "…"


def log_run(uri: str, experiment: str, run_dir: Path, spec, results: list[dict]) -> dict[str, str]:
    """Log the finished run in ``run_dir`` and its job ``results``; returns the tracking URI,
    experiment id and parent run id (recorded in the manifest)."""
    from mlflow.entities import Metric, Param, RunTag

    client, uri = _client(uri)
    try:
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    except Exception as exc:  # an unreachable server, a bad URI
        raise SpecError(f"--mlflow: cannot use tracking URI '{uri}': "
                        f"{' '.join(str(exc).split())[:200]}") from None
    now = int(time.time() * 1000)
    parent = client.create_run(experiment_id, run_name=run_dir.name,
                               tags={"safeclf.run_dir": str(run_dir.resolve()),
                                     "safeclf.spec.schema": spec.name})
    pid = parent.info.run_id
    client.log_batch(pid, params=[Param("seeds", _param_value(spec.seeds)),
                                  Param("n_jobs", str(len(results)))])
    for name in ARTIFACTS:
        if (run_dir / name).is_file():
            client.log_artifact(pid, str(run_dir / name))
    if (run_dir / "plots").is_dir():
        client.log_artifacts(pid, str(run_dir / "plots"), artifact_path="plots")
    failed = 0
    for r in results:
        params = {"dataset": r["dataset"], "method": r["method"], "seed": r["seed"],
                  "fold": r["fold"], **{f"param.{k}": v for k, v in (r.get("params") or {}).items()}}
        metrics = [Metric(k, float(v), now, 0) for k, v in (r.get("metrics") or {}).items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
        for key in ("fit_seconds", "predict_seconds"):
            if isinstance(r.get(key), (int, float)):
                metrics.append(Metric(key, float(r[key]), now, 0))
        tags = [RunTag("safeclf.job", r["id"]), RunTag("safeclf.status", r["status"])]
        if r.get("error"):
            tags.append(RunTag("safeclf.error", str(r["error"])[:5000]))
        child = client.create_run(experiment_id, run_name=f"{r['method']} {r['dataset']} seed {r['seed']}",
                                  tags={"mlflow.parentRunId": pid})
        client.log_batch(child.info.run_id, metrics=metrics, tags=tags,
                         params=[Param(k, _param_value(v)) for k, v in params.items()])
        ok = r["status"] == "ok"
        failed += not ok
        client.set_terminated(child.info.run_id, "FINISHED" if ok else "FAILED")
    client.set_terminated(pid, "FINISHED" if not failed else "FAILED")
    return {"uri": uri, "experiment_id": experiment_id, "run_id": pid}

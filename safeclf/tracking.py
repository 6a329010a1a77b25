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
             "summary.csv", "expectations.md", "expectations.csv", "run.log")


def require() -> None:
    """Fail early, with the install line, when mlflow is not installed."""
    try:
        import mlflow  # noqa: F401
    except ImportError:
        raise SafeclfError("--mlflow needs the mlflow extra: pip install 'safeclf[mlflow]'") from None


def _client(uri: str):
    from mlflow.tracking import MlflowClient

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
                                     "safeclf.spec": spec.name})
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

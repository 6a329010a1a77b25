"""--mlflow: each job logged as an MLflow run, against a local file store."""

from __future__ import annotations

import json

import pytest

mlflow = pytest.importorskip("mlflow")


def test_run_is_logged_to_mlflow(cli, tiny_spec, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = tmp_path / "mlruns"
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "--profile", "ci", "--out", out, "-j", "1", "--mlflow", store)
    assert result.exit_code == 0, result.output
    run_dir = next(out.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    client = MlflowClient(tracking_uri=manifest["mlflow"]["uri"])
    experiment = client.get_experiment_by_name("tiny")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    parent = [r for r in runs if r.info.run_id == manifest["mlflow"]["run_id"]]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == manifest["mlflow"]["run_id"]]
    assert len(parent) == 1 and len(children) == manifest["ok"] == 4
    artifacts = {a.path for a in client.list_artifacts(parent[0].info.run_id)}
    assert {"spec.yaml", "manifest.json", "metrics.csv", "metrics.parquet", "summary.md",
            "plots"} <= artifacts
    import pandas as pd

    table = pd.read_csv(run_dir / "metrics.csv").set_index("job")
    for child in children:
        job = child.data.tags["safeclf.job"]
        assert child.data.tags["safeclf.status"] == "ok"
        assert child.data.params["dataset"] == table.loc[job, "dataset"]
        assert child.data.params["method"] == table.loc[job, "method"]
        assert child.data.metrics["test_error"] == pytest.approx(table.loc[job, "test_error"])
        assert child.info.status == "FINISHED"

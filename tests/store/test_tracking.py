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


PROMISING = """
name: promising
seeds: 1
datasets:
  - dataset: breast_cancer
    preprocess: standardize
methods:
  - method: ramp
    params: {constraints: [{rate: fpr, max: 0.2}], lam: 0.01}
metrics: [error, fpr]
"""


def test_promises_tables_and_the_report_are_logged_with_the_metrics(write_spec, tmp_path,
                                                                     monkeypatch):
    """--mlflow logs promises.csv, promises.md, report.html and the promises plot as the
    parent run's artifacts, byte for byte the run folder's, and each job's promise columns as
    its metrics (issue 23, item 6)."""
    from mlflow.tracking import MlflowClient

    from safeclf.execution.options import Options
    from safeclf.execution.runner import run

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    out = run(write_spec(PROMISING), Options(out=tmp_path / "runs", jobs=1,
                                             mlflow=str(tmp_path / "mlruns")))
    assert out.exit_code == 0
    manifest = json.loads((out.run_dir / "manifest.json").read_text())
    client = MlflowClient(tracking_uri=manifest["mlflow"]["uri"])
    pid = manifest["mlflow"]["run_id"]
    artifacts = {a.path for a in client.list_artifacts(pid)}
    assert {"promises.csv", "promises.md", "report.html", "plots"} <= artifacts
    assert "plots/promises.png" in {a.path for a in client.list_artifacts(pid, "plots")}
    got = tmp_path / "got"
    got.mkdir()
    for name in ("promises.csv", "promises.md", "report.html"):
        local = client.download_artifacts(pid, name, str(got))
        assert open(local, "rb").read() == (out.run_dir / name).read_bytes(), name
    import pandas as pd

    promises = pd.read_csv(out.run_dir / "promises.csv")
    assert promises["kind"].tolist() == ["training"]  # a promise was made and checked
    (child,) = client.search_runs([client.get_run(pid).info.experiment_id],
                                  f"tags.mlflow.parentRunId = '{pid}'")
    table = pd.read_csv(out.run_dir / "metrics.csv")
    for column in ("promise_constraint_fpr_estimate", "promise_constraint_fpr_upper",
                   "promise_constraint_fpr_beyond"):
        assert child.data.metrics[column] == pytest.approx(table[column].item()), column

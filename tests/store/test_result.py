"""The typed job result: records round-trip, incomplete ones are refused, metrics keep off
the reserved columns."""

from __future__ import annotations

import pytest

from safeclf.store.result import RESERVED_COLUMNS, JobResult, JobStatus, check_metric_names


def _result(**kw):
    return JobResult(id="a1", dataset="iris", method="svm", plugin="svm", params={"C": 1.0},
                     seed=0, **kw)


def test_record_round_trip():
    r = _result(metrics={"test_error": 0.1}, fit_seconds=0.5, n_iter=7, solver_status="optimal")
    back = JobResult.from_record(r.to_record())
    assert back == r and back.ok and back.status is JobStatus.OK
    assert r.to_record()["status"] == "ok" and "traceback" not in r.to_record()
    r.fail("boom", "Traceback ...")
    back = JobResult.from_record(r.to_record())
    assert not back.ok and back.error == "boom" and back.traceback == "Traceback ..."


@pytest.mark.parametrize("drop", ["id", "status", "metrics", "fold", "params"])
def test_incomplete_record_is_none(drop):
    record = _result().to_record()
    del record[drop]
    assert JobResult.from_record(record) is None


def test_unknown_status_is_none():
    assert JobResult.from_record(dict(_result().to_record(), status="running")) is None


def test_reserved_metric_names_are_refused():
    check_metric_names(["test_error", "batch_fit_seconds"], "method 'x'")
    for name in ("fit_seconds", "status", "param.C"):
        with pytest.raises(ValueError, match=f"method 'x' reports a metric named '{name}'"):
            check_metric_names([name], "method 'x'")
    assert {"fit_seconds", "predict_seconds", "solver_status", "n_iter"} <= RESERVED_COLUMNS


def test_proset_reports_its_own_timing_beside_the_runners(cli, write_spec, tmp_path):
    """proset's batch timing used to be overwritten by the runner's fit_seconds column."""
    import pandas as pd

    spec = write_spec("""
        name: p
        seeds: 1
        datasets: [{dataset: iris, preprocess: standardize}]
        methods: [{method: proset, params: {n_batches: 1, n_candidates: 50}}]
        """)
    result = cli("run", spec, "--out", tmp_path / "runs", "--jobs", "1")
    assert result.exit_code == 0, result.output
    run = next((tmp_path / "runs").iterdir())
    table = pd.read_parquet(run / "metrics.parquet")
    assert table.loc[0, "batch_fit_seconds"] > 0
    assert table.loc[0, "fit_seconds"] >= table.loc[0, "batch_fit_seconds"]

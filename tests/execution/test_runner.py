"""The runner end to end: run folder contents, profiles, failure isolation, --check, resume
after SIGKILL, Dask, determinism."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

TIMING = ["fit_seconds", "predict_seconds"]


def _run_dir(out: Path) -> Path:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def test_run_writes_every_file(cli, tiny_spec, tmp_path):
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "--out", out, "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "Summary" in result.output and "expectations met: 1/1" in result.output
    run = _run_dir(out)
    assert run.name.endswith("-tiny") and len(run.name.split("-")[0]) == 8
    for name in ["spec.yaml", "manifest.json", "metrics.csv", "metrics.parquet", "summary.md", "summary.csv",
                 "run.log", "expectations.md", "expectations.csv", "promises.csv", "promises.md"]:
        assert (run / name).is_file(), name
    # svm and logreg promise nothing: every job still has its row in promises.csv, saying so
    promises = pd.read_csv(run / "promises.csv")
    assert len(promises) == 12 and set(promises["verdict"]) == {"no promise"}
    manifest = json.loads((run / "manifest.json").read_text())
    for key in ["command", "safeclf_version", "python", "packages", "git_commit", "host",
                "start", "end", "seeds"]:
        assert key in manifest, key
    assert manifest["seeds"] == [0, 1] and manifest["failed"] == 0 and manifest["ok"] == 12
    table = pd.read_parquet(run / "metrics.parquet")
    assert len(table) == 12 == len(list((run / "results").glob("*.json")))
    assert set(table["status"]) == {"ok"}
    for col in ["dataset", "method", "param.C", "seed", "test_error", "train_error",
                "test_log_loss", "test_balanced_accuracy", *TIMING]:
        assert col in table.columns, col
    assert table.loc[table.method == "svm", "test_log_loss"].isna().all()
    assert table.loc[table.method == "logreg", "test_log_loss"].notna().all()
    csv = pd.read_csv(run / "metrics.csv")
    assert list(csv.columns) == list(table.columns) and len(csv) == 12
    plots = sorted(p.name for p in (run / "plots").iterdir())
    assert plots == ["bar_test_error.png", "bar_test_error.svg", "line_test_error.png",
                     "line_test_error.svg", "scatter_test_error.png", "scatter_test_error.svg"]
    summary = (run / "summary.md").read_text()
    assert "| breast_cancer | logreg |" in summary and "±" in summary


def test_profile_and_dry_run(cli, tiny_spec, tmp_path):
    out = tmp_path / "runs"
    result = cli("run", tiny_spec, "--out", out, "--profile", "ci", "--dry-run")
    assert result.exit_code == 0
    assert "4 jobs" in result.output
    assert not out.exists()


def test_failing_job_does_not_stop_others(cli, write_spec, tmp_path):
    spec = write_spec("""
        name: partly-broken
        datasets: [{dataset: iris}]
        methods:
          - method: logreg
            name: broken
            params: {penalty: elasticnet, solver: lbfgs}
          - method: svm
        """)
    out = tmp_path / "runs"
    result = cli("run", spec, "--out", out, "--jobs", "1")
    assert result.exit_code == 1
    assert "1 job(s) failed" in result.output
    table = pd.read_csv(_run_dir(out) / "metrics.csv")
    by_method = table.set_index("method")
    assert by_method.loc["svm", "status"] == "ok"
    assert by_method.loc["broken", "status"] == "failed"
    error = by_method.loc["broken", "error"]
    assert "elasticnet" in error and "\n" not in error
    log = (_run_dir(out) / "run.log").read_text()
    assert "failed" in log and "ok" in log


def test_check_fails_when_expectation_unmet(cli, write_spec, tmp_path):
    spec = write_spec("""
        name: strict
        datasets: [{dataset: iris}]
        methods: [{method: logreg, params: {max_iter: 500}}]
        expect:
          - {metric: test_error, "<": 0.0, note: impossible on purpose, source: project}
          - {metric: test_error, paper: 0.03, tolerance: 0.2, source: {kind: paper, where: p. 1}}
        """)
    checked = cli("run", spec, "--out", tmp_path / "a", "--jobs", "1", "--check")
    assert checked.exit_code == 1
    assert "FAIL" in checked.output and "expectations met: 1/2" in checked.output
    unchecked = cli("run", spec, "--out", tmp_path / "b", "--jobs", "1")
    assert unchecked.exit_code == 0


def test_existing_run_folder_is_never_reused(tmp_path):
    from safeclf.store.folder import create_run_dir

    first = create_run_dir(tmp_path, "x", stamp="20260101-000000")
    (first / "keep.txt").write_text("keep")
    second = create_run_dir(tmp_path, "x", stamp="20260101-000000")
    assert first != second and (first / "keep.txt").read_text() == "keep"


def test_same_spec_same_numbers(cli, tiny_spec, tmp_path):
    for name in ("a", "b"):
        assert cli("run", tiny_spec, "--out", tmp_path / name, "--profile", "ci", "-j", "1").exit_code == 0
    a = pd.read_csv(_run_dir(tmp_path / "a") / "metrics.csv").drop(columns=TIMING)
    b = pd.read_csv(_run_dir(tmp_path / "b") / "metrics.csv").drop(columns=TIMING)
    pd.testing.assert_frame_equal(a, b)


def test_compare_aligns_runs(cli, tiny_spec, write_spec, tmp_path):
    out = tmp_path / "runs"
    assert cli("run", tiny_spec, "--out", out, "--profile", "ci", "-j", "1").exit_code == 0
    other = write_spec(tiny_spec.read_text().replace("C: 1.0}", "C: 0.01}"), "other.yaml")
    time.sleep(1.0)  # distinct timestamp
    assert cli("run", other, "--out", out, "--profile", "ci", "-j", "1").exit_code == 0
    runs = sorted(p for p in out.iterdir())
    result = cli("compare", *runs, "--format", "csv")
    assert result.exit_code == 0, result.output
    from io import StringIO

    table = pd.read_csv(StringIO(result.output))
    assert list(table.columns[:3]) == ["dataset", "method", "params"]
    first, second = [c for c in table.columns if c.startswith("tiny ") and c[-1].isdigit()][:2]
    assert second.endswith("#2") or first != second
    assert f"Δ {second}" in table.columns and f"p {second}" in table.columns
    assert f"{first} n" in table.columns
    logreg = table[table.method == "logreg"]
    assert (logreg[f"Δ {second}"] == 0).all()  # unchanged method: no difference
    svm = table[table.method == "svm"]
    assert len(svm) == 4  # two C values × two datasets, each only in one run
    assert svm[[first, second]].isna().any(axis=1).all()
    by = cli("compare", *runs, "--by", "method", "--format", "markdown")
    assert by.exit_code == 0 and by.output.count("| logreg |") == 1
    assert by.output.count("| svm |") == 1  # one svm setting per run: datasets pooled as asked
    for run in runs:
        assert str(run) in by.output  # the folders in the footnote
    bad = cli("compare", *runs, "--metric", "test_eror")
    assert bad.exit_code == 2 and "did you mean 'test_error'" in bad.stderr


def _fake_run(folder: Path, name: str, rows: list[dict], methods=({"method": "svm", "name": "svm"},),
              start="2026-01-01T10:00:00+0000"):
    """A run folder written the way the runner writes one, from hand-made job records."""
    from safeclf.store.folder import results_table, write_json, write_tables, write_yaml
    from safeclf.store.result import JobResult

    folder.mkdir(parents=True)
    records = [JobResult.from_record(dict(
        {"fold": None, "status": "ok", "error": None, "dataset": "d", "method": "svm"},
        id=f"j{i}", **r)) for i, r in enumerate(rows)]
    write_tables(folder, results_table(records))
    write_yaml(folder / "spec.yaml", {"name": name, "methods": list(methods)})
    write_json(folder / "manifest.json", {"start": start})
    return folder


def test_compare_fills_defaults_pairs_seeds_and_keeps_signs(cli, tmp_path):
    """{} and {C: 1.0} of an svm are one row; the paired t-test uses matching seeds; Δ keeps
    its sign in csv and markdown; rows whose seeds differ are flagged."""
    from io import StringIO

    from scipy import stats

    a_err, b_err = [0.10, 0.12, 0.15, 0.11], [0.13, 0.16, 0.17, 0.15]
    a = _fake_run(tmp_path / "a", "base", [{"params": {}, "seed": s, "metrics": {"test_error": e}}
                                           for s, e in enumerate(a_err)])
    b = _fake_run(tmp_path / "b", "new", [{"params": {"C": 1.0}, "seed": s,
                                           "metrics": {"test_error": e}}
                                          for s, e in enumerate(b_err)], start="2026-01-02T11:30:00+0000")
    c = _fake_run(tmp_path / "c", "other", [{"params": {"C": 1.0}, "seed": s + 10,
                                             "metrics": {"test_error": 0.05}} for s in range(4)])
    result = cli("compare", a, b, c, "--format", "csv")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(StringIO(result.output), dtype={"Δ new 11:30": str, "Δ other 10:00": str})
    assert len(table) == 1
    row = table.iloc[0]
    assert row["base 10:00 n"] == row["new 11:30 n"] == 4
    expected = stats.ttest_rel(b_err, a_err).pvalue
    assert row["p new 11:30"] == pytest.approx(expected)
    assert row["Δ new 11:30"].startswith("+")
    assert row["Δ other 10:00"].startswith("-")
    assert row["note other 10:00"] == "seeds differ" and np.isnan(row["p other 10:00"])
    md = cli("compare", a, b, c, "--format", "markdown").output
    assert "| +0.0325 |" in md and "paired t-test" in md and "[2] new 11:30: " + str(b) in md
    grid = _fake_run(tmp_path / "grid", "grid", [{"params": {"C": C}, "seed": 0,
                                                  "metrics": {"test_error": C}} for C in (0.1, 1.0)])
    pooled = cli("compare", grid, "--by", "method", "--format", "markdown").output
    assert "'params' was added so grid points are not pooled" in pooled
    assert pooled.count("| svm |") == 2 and "| C=0.1 |" in pooled


SLOW = """
name: slow
seeds: 2
datasets: [{dataset: digits, preprocess: standardize}]
methods:
  - method: svm
    params: {kernel: rbf, C: {grid: [0.01, 0.1, 1.0]}}
"""


def _safeclf(*args, **kw):
    exe = Path(sys.executable).with_name("safeclf")
    return subprocess.Popen([str(exe), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def test_resume_after_sigkill_gives_the_uninterrupted_rows(write_spec, tmp_path):
    from safeclf.api import run as api_run

    spec = write_spec(SLOW)
    # the uninterrupted run and the resume in this process (the API is the command's runner,
    # without a second interpreter's imports); only the run that is killed is a process
    reference = pd.read_csv(api_run(spec, jobs=2, out=tmp_path / "ref").path / "metrics.csv")

    victim = _safeclf("run", spec, "--out", tmp_path / "killed", "-j", "2")
    deadline = time.time() + 120
    results = None
    while time.time() < deadline:
        found = list((tmp_path / "killed").glob("*/results/*.json"))
        if len(found) >= 2:
            results = found
            break
        time.sleep(0.02)
    assert results, "the run produced no results to interrupt"
    # the parent alone, as `kill -9 <pid>` does: its workers and loky's resource tracker end by
    # themselves and clear /dev/shm (test_sigkilled_run_leaves_no_worker_behind); killing the
    # whole group would also kill the tracker and leave its semaphores there on every test run
    family = _descendants(victim.pid)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(p) for p in family):
        time.sleep(0.1)
    run = _run_dir(tmp_path / "killed")
    n_before = len(list((run / "results").glob("*.json")))
    assert 2 <= n_before < len(reference), "the kill must land mid-run"
    assert not (run / "metrics.csv").exists()

    assert api_run(None, resume=run, jobs=2).exit_code == 0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["skipped_on_resume"] >= n_before - 2  # records in flight may be rewritten
    table = pd.read_csv(run / "metrics.csv")
    pd.testing.assert_frame_equal(table.drop(columns=TIMING), reference.drop(columns=TIMING))


def _children_by_parent() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def _descendants(pid: int) -> list[int]:
    children, out, todo = _children_by_parent(), [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (the container's init may not reap)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")
def test_sigkilled_run_leaves_no_worker_behind(write_spec, tmp_path):
    """Only the parent is killed (not its process group): its loky workers and resource
    trackers must end by themselves, within 10 s, and leave nothing in /dev/shm."""
    spec = write_spec(SLOW.replace("seeds: 2", "seeds: 10"))  # 30 jobs: still running when killed
    victim = _safeclf("run", spec, "--out", tmp_path / "runs", "-j", "2")
    try:
        deadline = time.time() + 120
        workers: list[int] = []
        while time.time() < deadline and victim.poll() is None:
            family = _descendants(victim.pid)
            workers = [p for p in family if "loky" in _cmdline(p) and "popen" in _cmdline(p)]
            if len(workers) >= 2 and list((tmp_path / "runs").glob("*/results/*.json")):
                break
            time.sleep(0.1)
        assert len(workers) >= 2 and victim.poll() is None, "no loky workers to orphan"
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        shm = Path("/dev/shm")

        # the pid as a whole number in the name (sem.loky-<pid>-…, joblib_memmapping_folder_
        # <pid>_…): as a substring it also matched other processes' leftovers (pid 1371 in
        # "13718"), a failure that depended on what earlier processes left in /dev/shm
        own = re.compile(rf"(?<!\d){victim.pid}(?!\d)")

        def in_shm():
            return [p.name for p in shm.iterdir() if own.search(p.name)] \
                if shm.is_dir() else []

        # the promise: 10 s after the kill, no process of the run and nothing of it in /dev/shm
        deadline = time.time() + 10
        while time.time() < deadline and (any(_alive(p) for p in family) or in_shm()):
            time.sleep(0.2)
        left = {p: _cmdline(p) for p in family if _alive(p)}
        assert not left, f"alive 10 s after the parent was killed: {left}"
        assert not in_shm(), f"in /dev/shm 10 s after the parent was killed: {in_shm()}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(victim.pid, signal.SIGKILL)  # whatever a failure left behind


def test_resume_refuses_another_spec(cli, tiny_spec, write_spec, tmp_path):
    out = tmp_path / "runs"
    assert cli("run", tiny_spec, "--out", out, "--profile", "ci", "-j", "1").exit_code == 0
    other = write_spec(tiny_spec.read_text().replace("seeds: 2", "seeds: 5"), "other.yaml")
    result = cli("run", other, "--resume", _run_dir(out))
    assert result.exit_code == 2 and "does not describe the jobs" in result.stderr


def test_dask_scheduler_address_on_loopback(cli, write_spec, tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="the dask extra is part of dev installs")
    spec = write_spec("""
        name: on-scheduler
        seeds: 2
        datasets: [{dataset: wine}]
        methods: [{method: logreg, params: {max_iter: 500}}]
        """)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        result = cli("run", spec, "--out", tmp_path / "runs", "--backend", "dask",
                     "--scheduler", cluster.scheduler_address)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(_run_dir(tmp_path / "runs") / "metrics.csv")
    assert len(table) == 2 and set(table["status"]) == {"ok"}


def test_dask_local_cluster_runs_jobs(cli, write_spec, tmp_path):
    pytest.importorskip("dask.distributed", reason="the dask extra is part of dev installs")
    spec = write_spec("""
        name: on-dask
        datasets: [{dataset: iris}]
        methods: [{method: svm}, {method: logreg, params: {max_iter: 500}}]
        """)
    result = cli("run", spec, "--out", tmp_path / "runs", "--backend", "dask", "--jobs", "2")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(_run_dir(tmp_path / "runs") / "metrics.csv")
    assert len(table) == 2 and set(table["status"]) == {"ok"}


def test_compare_names_a_folder_of_runs(cli, tiny_spec, tmp_path):
    out = tmp_path / "runs"
    assert cli("run", tiny_spec, "--out", out / "ci", "--profile", "ci", "-j", "1").exit_code == 0
    result = cli("compare", out / "ci")
    assert result.exit_code == 2
    assert "is not a run folder but holds 1 runs; give them as" in result.stderr


def test_resume_with_edited_expectations_rechecks_them(cli, tiny_spec, write_spec, tmp_path):
    out = tmp_path / "runs"
    assert cli("run", tiny_spec, "--out", out, "--profile", "ci", "-j", "1").exit_code == 0
    run = _run_dir(out)
    edited = write_spec(tiny_spec.read_text().replace('"<=": 0.1,', '"<": 0.0,'), "edited.yaml")
    result = cli("run", edited, "--resume", run, "--profile", "ci", "--check")
    assert result.exit_code == 1 and "expectations met: 0/1" in result.output
    import yaml

    assert yaml.safe_load((run / "spec.yaml").read_text())["expect"][0]["<"] == 0.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["skipped_on_resume"] == 4 and "spec_updated" in manifest["resumed"][-1]


def test_metrics_parquet_has_a_fixed_schema_across_runs(tmp_path):
    """Two runs whose all-missing columns (fold, error) and parameter values (C: 1 vs 0.5)
    differ are read together with pyarrow.dataset, every column typed."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    from safeclf.store.folder import results_table, write_tables
    from safeclf.store.result import JobResult

    def record(i, C, status="ok", error=None):
        return JobResult.from_record({
            "id": f"j{i}", "dataset": "iris", "method": "svm", "params": {"C": C}, "seed": i,
            "fold": None, "status": status, "error": error,
            "metrics": {"test_error": None if error else 0.1 * i}})

    first, second = tmp_path / "a", tmp_path / "b"
    for folder, records in ((first, [record(0, 1), record(1, 1)]),
                            (second, [record(0, 0.5), record(1, 0.5, "failed", "boom")])):
        folder.mkdir()
        write_tables(folder, results_table(records))
    table = pads.dataset([first / "metrics.parquet", second / "metrics.parquet"]).to_table()
    assert table.num_rows == 4
    types = dict(zip(table.schema.names, table.schema.types))
    assert types["fold"] == pa.int64() and types["error"] == pa.string()
    assert types["param.C"] == pa.float64() and types["test_error"] == pa.float64()
    assert sorted(table.column("param.C").to_pylist()) == [0.5, 0.5, 1.0, 1.0]
    assert table.column("error").to_pylist().count("boom") == 1

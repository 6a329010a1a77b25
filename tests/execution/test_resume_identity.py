"""--resume finishes only a run, and only on the data its finished jobs saw."""

from __future__ import annotations

import json

import pytest
from interrupted import as_interrupted

CSV = "a,b,y\n" + "".join(f"{i % 7},{(i * 3) % 11},{int(i % 7 > 3)}\n" for i in range(60))

SPEC = """
name: resumable
seeds: 2
datasets:
  - dataset: csv
    params: {path: data.csv, target: y}
methods:
  - method: logreg
"""


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def half_run(tmp_path, cli):
    """A finished run with one of its two job records removed (as if interrupted)."""
    (tmp_path / "data.csv").write_text(CSV)
    (tmp_path / "spec.yaml").write_text(SPEC)
    result = cli("run", tmp_path / "spec.yaml", "--out", tmp_path / "runs", "-j", "1")
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "runs").iterdir())
    records = sorted((run_dir / "results").iterdir())
    assert len(records) == 2
    as_interrupted(run_dir, records[1:])
    return run_dir


def test_resume_on_unchanged_data_finishes_the_run(half_run, cli):
    result = cli("run", "--resume", half_run, "-j", "1")
    assert result.exit_code == 0, result.output
    assert len(list((half_run / "results").iterdir())) == 2
    assert "data_changed" not in json.loads((half_run / "manifest.json").read_text())["resumed"][-1]


@pytest.mark.parametrize("change", ["edited", "removed"])
def test_resume_refuses_changed_data_and_writes_nothing(half_run, tmp_path, cli, change):
    data = tmp_path / "data.csv"
    if change == "edited":
        data.write_text(CSV.replace("\n1,3,0\n", "\n1,3,1\n", 1))
    else:
        data.unlink()
    before = _snapshot(half_run)
    result = cli("run", "--resume", half_run, "-j", "1")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --resume: data file"), result.stderr
    assert str(data) in " ".join(result.stderr.split())
    assert "--allow-changed-data" in result.stderr
    assert _snapshot(half_run) == before


def test_allow_changed_data_finishes_and_records_both_identities(half_run, tmp_path, cli):
    import hashlib

    data = tmp_path / "data.csv"
    old = json.loads((half_run / "manifest.json").read_text())["data"][0]["sha256"]
    data.write_text(CSV.replace("\n1,3,0\n", "\n1,3,1\n", 1))
    result = cli("run", "--resume", half_run, "--allow-changed-data", "-j", "1")
    assert result.exit_code == 0, result.output
    manifest = json.loads((half_run / "manifest.json").read_text())
    assert manifest["data"][0]["sha256"] == old  # the run's origin is kept
    change = manifest["resumed"][-1]["data_changed"][0]
    assert change["sha256"] == old
    assert change["now"] == hashlib.sha256(data.read_bytes()).hexdigest() != old


@pytest.mark.parametrize("damage", ["no-manifest", "no-results", "results-is-a-file",
                                    "manifest-not-an-object", "manifest-garbage"])
def test_a_folder_that_is_not_a_run_is_never_written_into(half_run, cli, damage):
    import shutil

    if damage == "no-manifest":
        (half_run / "manifest.json").unlink()
    elif damage == "no-results":
        shutil.rmtree(half_run / "results")
    elif damage == "results-is-a-file":
        shutil.rmtree(half_run / "results")
        (half_run / "results").write_text("mine\n")
    elif damage == "manifest-not-an-object":
        (half_run / "manifest.json").write_text("[1, 2]\n")
    else:
        (half_run / "manifest.json").write_bytes(b"\x00{garbage")
    before = _snapshot(half_run)
    result = cli("run", "--resume", half_run, "-j", "1")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --resume"), result.stderr
    assert _snapshot(half_run) == before


def test_a_users_folder_holding_only_a_spec_is_left_alone(tmp_path, cli):
    """The reported case: a folder with the user's spec.yaml and files, no run."""
    folder = tmp_path / "my-project"
    folder.mkdir()
    (folder / "spec.yaml").write_text(SPEC)
    (folder / "notes.txt").write_text("mine\n")
    before = _snapshot(folder)
    result = cli("run", "--resume", folder, "-j", "1")
    assert result.exit_code == 2, result.output
    assert "is not a run folder" in result.stderr
    assert _snapshot(folder) == before

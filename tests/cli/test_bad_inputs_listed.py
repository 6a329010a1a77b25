"""The catalogue of run folders whose per-job files were edited or added to by someone else
(issue 36, item 6): ``predict``, :func:`safeclf.load_model`, :meth:`safeclf.Run.model` and
``deploy`` take a job's files only through its record as the manifest lists it (job id and
SHA-256; the record names its model files' SHA-256). A model dropped in for a job the manifest
does not list, a swapped or edited model or metadata file (feature names reordered), an edited
record, a record path that leaves the folder: each refused with exit code 2 and one line,
nothing written. A record file dropped into ``results/`` is ignored by the readers of one job
(never read) and refused by ``verify`` and ``deploy``, which read every record.

The run is tests/audited_model.py's (a certified ramp on two groups, its models saved)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audited_model import CERTIFIED_RAMP, rows, run_spec
from test_bad_inputs_runtime import _one_error_line, _snapshot

import safeclf


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    base = tmp_path_factory.mktemp("listed")
    rows(1500, 3).to_csv(base / "data.csv", index=False)
    # audited_model's certified ramp, and a plain logreg beside it: models of two jobs at least
    run = run_spec(base, f"\nname: audited\nseeds: 3\n{CERTIFIED_RAMP}  - method: logreg\n"
                         "    name: plain\n    save_model: true\nmetrics: [error, fairness_ratio]\n")
    manifest = json.loads((run / "manifest.json").read_text())
    jobs = sorted(p.stem for p in (run / "models").glob("*.skops"))
    assert len(jobs) >= 2 and set(jobs) <= set(manifest["records"])
    rows(20, 9).drop(columns="y").to_csv(base / "new.csv", index=False)
    return {"run": run, "jobs": jobs, "new": base / "new.csv"}


@pytest.fixture
def run(made, tmp_path):
    return Path(shutil.copytree(made["run"], tmp_path / "run"))


def _meta(run: Path, job: str, change) -> None:
    path = run / "models" / f"{job}.json"
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta, indent=2))


def _dropped_model(run: Path, job: str) -> str:
    """A model and its metadata copied in under a job id the manifest does not list."""
    for ext in ("skops", "json"):
        shutil.copy(run / "models" / f"{job}.{ext}", run / "models" / f"deadbeef0000.{ext}")
    return "deadbeef0000"


def _record(run: Path, job: str, change) -> None:
    path = run / "results" / f"{job}.json"
    rec = json.loads(path.read_text())
    change(rec)
    path.write_text(json.dumps(rec, indent=2))


def _out_of_folder(run: Path, job: str, tmp: Path) -> None:
    outside = tmp / "elsewhere.json"
    shutil.copy(run / "results" / f"{job}.json", outside)
    (run / "results" / f"{job}.json").unlink()
    (run / "results" / f"{job}.json").symlink_to(outside)


# (id, edit(run, jobs, tmp) -> (job to ask for, fragment of the refusal))
EDITS = [
    ("model-dropped-in-for-an-unlisted-job", lambda r, j, t: (
        _dropped_model(r, j[0]), "is not one the run's manifest lists")),
    ("feature-names-swapped-in-metadata", lambda r, j, t: (
        _meta(r, j[0], lambda m: m["feature_names"].reverse()), j[0])[1:] + (
        f"models/{j[0]}.json' is not the file job",)),
    ("columns-swapped-in-metadata", lambda r, j, t: (
        _meta(r, j[0], lambda m: m["columns"].reverse()), j[0])[1:] + (
        "is not the file job",)),
    ("model-swapped-with-another-jobs", lambda r, j, t: (
        shutil.copy(r / "models" / f"{j[1]}.skops", r / "models" / f"{j[0]}.skops"), j[0])[1:]
        + (f"models/{j[0]}.skops' is not the file job",)),
    ("model-removed-metadata-kept", lambda r, j, t: (
        (r / "models" / f"{j[0]}.skops").unlink(), j[0])[1:] + ("no saved model",)),
    ("metadata-removed", lambda r, j, t: (
        (r / "models" / f"{j[0]}.json").unlink(), j[0])[1:] + ("is missing",)),
    ("record-edited-not-relisted", lambda r, j, t: (
        _record(r, j[0], lambda rec: rec["model"].update(json="0" * 64)), j[0])[1:] + (
        "differs from the SHA-256 the run's manifest lists",)),
    ("record-removed", lambda r, j, t: (
        (r / "results" / f"{j[0]}.json").unlink(), j[0])[1:] + ("cannot be read",)),
    ("record-symlinked-inside-to-another", lambda r, j, t: (
        (r / "results" / f"{j[0]}.json").unlink(),
        (r / "results" / f"{j[0]}.json").symlink_to(f"{j[1]}.json"), j[0])[2:] + (
        "cannot be read",)),
    ("record-symlinked-out-of-the-folder", lambda r, j, t: (
        _out_of_folder(r, j[0], t), j[0])[1:] + ("outside",)),
    ("manifest-records-removed", lambda r, j, t: (
        (r / "manifest.json").write_text(json.dumps(
            {k: v for k, v in json.loads((r / "manifest.json").read_text()).items()
             if k != "records"})), j[0])[1:] + ("lists no records",)),
    ("job-with-a-climb", lambda r, j, t: ("../" + j[0], "is not a plain name")),
    ("job-absolute", lambda r, j, t: (str(r / "models" / j[0]), "is not a plain name")),
]


def _edit(eid, edit, run, made, tmp_path):
    out = edit(run, made["jobs"], tmp_path)
    return (out if len(out) == 2 else (out[-2], out[-1])) if eid != \
        "model-dropped-in-for-an-unlisted-job" else ("deadbeef0000", out[1])


@pytest.mark.parametrize("eid,edit", EDITS, ids=[c[0] for c in EDITS])
def test_predict_takes_only_the_files_the_manifest_lists(eid, edit, run, made, tmp_path, cli):
    job, fragment = _edit(eid, edit, run, made, tmp_path)
    before = _snapshot(tmp_path)
    result = cli("predict", run, "--job", job, "--data", made["new"],
                 "--out", tmp_path / "out.csv")
    _one_error_line(result, 2, fragment)
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("eid,edit", EDITS, ids=[c[0] for c in EDITS])
def test_load_model_and_run_model_refuse_the_same(eid, edit, run, made, tmp_path):
    job, fragment = _edit(eid, edit, run, made, tmp_path)
    with pytest.raises(safeclf.SafeclfError, match=None) as info:
        safeclf.load_model(run, job)
    assert fragment in str(info.value)
    if "manifest-records" not in eid:
        with pytest.raises(safeclf.SafeclfError) as info:
            safeclf.load_run(run).model(job)
        assert fragment in str(info.value) or "no saved model" in str(info.value)


def test_a_dropped_record_is_ignored_by_predict_and_refused_by_verify_and_deploy(
        run, made, tmp_path, cli):
    shutil.copy(run / "results" / f"{made['jobs'][0]}.json", run / "results" / "feed0000.json")
    result = cli("predict", run, "--job", made["jobs"][0], "--data", made["new"],
                 "--out", tmp_path / "out.csv")
    assert result.exit_code == 0, result.output  # never read: the job's own record is listed
    assert len((tmp_path / "out.csv").read_text().splitlines()) == 21
    before = _snapshot(tmp_path)
    for args in (["verify", run], ["deploy", run, "--out", tmp_path / "model"]):
        _one_error_line(cli(*args), 2, "'results/feed0000.json' is not listed")
    assert _snapshot(tmp_path) == before


def test_an_untouched_run_predicts_and_loads(run, made, tmp_path, cli):
    job = made["jobs"][0]
    result = cli("predict", run, "--job", job, "--data", made["new"], "--out", tmp_path / "o.csv")
    assert result.exit_code == 0, result.output
    model = safeclf.load_model(run, job)
    import pandas as pd

    frame = pd.read_csv(made["new"])
    assert list(model.predict(frame)) == list(pd.read_csv(tmp_path / "o.csv")["prediction"])
    assert safeclf.load_run(run).model(job).predict is not None

"""The catalogue of run folders edited before ``--resume`` (issue 36, item 6): a record file
edited, swapped, added or removed since the run wrote it, the stored spec edited. Each is
refused with exit code 2, one ``error:`` line naming the file and the fix, nothing written;
an untouched folder, finished or interrupted, resumes and reuses its records as written.

The run is the verify catalogue's (a certified ramp, a certified and a plain logreg), edited
with its :class:`Forger`."""

from __future__ import annotations

import json
import shutil

import pytest
from interrupted import as_interrupted
from test_bad_inputs_runtime import _one_error_line, _snapshot
from test_bad_inputs_verify import Forger, _sha, _threshold_claims, made  # noqa: F401

from safeclf.store.records import JOURNAL


def _interrupted(f: Forger) -> str:
    """The run as if killed before the plain logreg's first job finished; that job's id."""
    job = f.table[f.table.method == "plain"].job.iloc[0]
    as_interrupted(f.run, [f.run / "results" / f"{job}.json"])
    return job


def _forged_record(f: Forger, job: str, other: str) -> None:
    """A record for ``job`` written by hand from ``other``'s (its id and seed changed)."""
    rec = json.loads((f.run / "results" / f"{other}.json").read_text())
    rec["id"] = job
    (f.run / "results" / f"{job}.json").write_text(json.dumps(rec, indent=2))


def _unjournal(f: Forger, job: str) -> None:
    sums = f.run / JOURNAL
    sums.write_text("".join(line for line in sums.read_text().splitlines(keepends=True)
                            if f"results/{job}.json" not in line))


EDITS = [
    # (id, edit(f) -> fragment of the refusal)
    ("record-edited", lambda f: (f.edit_record(f.lr, _threshold_claims, relist=False),
                                 f"results/{f.lr}.json' differs from the SHA-256")[1]),
    ("record-one-byte-appended", lambda f: (
        open(f.run / "results" / f"{f.lr}.json", "a").write(" "),
        "differs from the SHA-256 the run listed")[1]),
    ("record-swapped-with-another-jobs", lambda f: (
        shutil.copy(f.run / "results" / f"{f.jobs['lr_cert'][1]}.json",
                    f.run / "results" / f"{f.lr}.json"), "edited or swapped")[1]),
    ("record-added-foreign-name", lambda f: (
        shutil.copy(f.run / "results" / f"{f.lr}.json", f.run / "results" / "forged.json"),
        "'results/forged.json' is not listed in the run's manifest or records.sha256")[1]),
    ("record-removed", lambda f: ((f.run / "results" / f"{f.lr}.json").unlink(),
                                  f"results/{f.lr}.json', which the run wrote and listed, "
                                  "is missing")[1]),
    ("record-symlink-to-another-record", lambda f: (
        (f.run / "results" / f"{f.lr}.json").unlink(),
        (f.run / "results" / f"{f.lr}.json").symlink_to(f"{f.jobs['lr_cert'][1]}.json"),
        "is a symlink")[2]),
    ("record-is-a-folder", lambda f: ((f.run / "results" / "x.json").mkdir(),
                                      "'results/x.json' is not a regular file")[1]),
    ("manifest-records-not-a-mapping", lambda f: (
        f.write_manifest({**f.manifest(), "records": ["a"]}),
        "its manifest's records are not a list of SHA-256")[1]),
    ("spec-edited", lambda f: (f.edit_spec("kappa: 0.8", "kappa: 0.9"),
                               "spec.yaml' is not the spec its manifest lists")[1]),
    ("interrupted-record-added-for-a-pending-job", lambda f: (
        _forged_record(f, _interrupted(f), f.lr), "(not one the run wrote)")[1]),
    ("interrupted-record-edited", lambda f: (
        _interrupted(f), f.edit_record(f.lr, _threshold_claims, relist=False),
        "differs from the SHA-256")[2]),
    ("interrupted-journal-line-removed", lambda f: (
        _interrupted(f), _unjournal(f, f.lr), f"results/{f.lr}.json' is not listed")[2]),
    ("interrupted-record-removed", lambda f: (
        _interrupted(f), (f.run / "results" / f"{f.lr}.json").unlink(), "is missing")[2]),
    ("interrupted-journal-not-utf8", lambda f: (
        _interrupted(f), (f.run / JOURNAL).write_bytes(b"\xff\xfe"), "cannot be read")[2]),
]


@pytest.mark.parametrize("eid,edit", EDITS, ids=[c[0] for c in EDITS])
def test_resume_refuses_a_record_the_run_did_not_write(tmp_path, made, cli, eid, edit):  # noqa: F811
    f = Forger(tmp_path, made)
    fragment = edit(f)
    before = _snapshot(tmp_path)
    result = cli("run", "--resume", f.run, "-j", "1")
    line = _one_error_line(result, 2, fragment)
    assert line.startswith("error: --resume:")
    assert "remove it" in line or "restore it" in line or "start a new run" in line, line
    assert _snapshot(tmp_path) == before  # nothing written


def test_an_untouched_folder_resumes_and_reuses_its_records(tmp_path, made, cli):  # noqa: F811
    f = Forger(tmp_path, made)
    records = {p.name: p.read_bytes() for p in (f.run / "results").glob("*.json")}
    result = cli("run", "--resume", f.run, "-j", "1")
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in (f.run / "results").glob("*.json")} == records
    manifest = f.manifest()
    assert manifest["skipped_on_resume"] == len(records)
    assert manifest["records"] == {n[:-5]: _sha(b) for n, b in records.items()}
    assert "records_checked" not in manifest["resumed"][-1]


def test_an_interrupted_untouched_folder_resumes_and_lists_each_record(tmp_path, made, cli):  # noqa: F811
    f = Forger(tmp_path, made)
    job = _interrupted(f)
    kept = {p.name: p.read_bytes() for p in (f.run / "results").glob("*.json")}
    result = cli("run", "--resume", f.run, "-j", "1")
    assert result.exit_code == 0, result.output
    now = {p.name: p.read_bytes() for p in (f.run / "results").glob("*.json")}
    assert {k: v for k, v in now.items() if k != f"{job}.json"} == kept and f"{job}.json" in now
    manifest = f.manifest()
    assert manifest["records"] == {n[:-5]: _sha(b) for n, b in now.items()}
    lines = (f.run / JOURNAL).read_text().splitlines()
    assert lines.count(f"{_sha(now[f'{job}.json'])}  results/{job}.json") == 1
    # and the resumed run verifies as the uninterrupted one did
    assert cli("verify", f.run).exit_code == 0

"""Every job record is written once (issue 36, item 8): counted at the one function that
writes a file of the run folder, on a run and on the resume of an interrupted one (only the
jobs left are written again), and the run's own count, ``records.sha256``, agrees."""

from __future__ import annotations

import collections
import json

from interrupted import as_interrupted

from safeclf.execution.options import Options
from safeclf.execution.runner import run
from safeclf.store import folder as run_folder
from safeclf.store.records import JOURNAL

SPEC = """
name: once
seeds: 3
datasets: [{dataset: breast_cancer, preprocess: standardize}]
methods:
  - method: logreg
    params: {C: {grid: [0.1, 1.0]}}
metrics: [error]
"""


def _counting(monkeypatch):
    """Count the writes of each results/*.json (the runner writes records with atomic_write)."""
    counts: collections.Counter = collections.Counter()
    real = run_folder.atomic_write

    def counted(path, text):
        if path.parent.name == "results":
            counts[path.name] += 1
        return real(path, text)

    monkeypatch.setattr(run_folder, "atomic_write", counted)
    return counts


def _journal(run_dir) -> collections.Counter:
    return collections.Counter(line.split("  ", 1)[1].removeprefix("results/")
                               for line in (run_dir / JOURNAL).read_text().splitlines())


def test_each_record_is_written_once_and_a_resume_writes_only_the_rest(
        write_spec, tmp_path, monkeypatch):
    spec = write_spec(SPEC)
    counts = _counting(monkeypatch)
    outcome = run(spec, Options(jobs=2, out=tmp_path / "runs"))
    assert outcome.exit_code == 0
    records = sorted(p.name for p in (outcome.run_dir / "results").glob("*.json"))
    assert len(records) == len(outcome.jobs) == 6
    assert counts == {name: 1 for name in records}
    assert _journal(outcome.run_dir) == counts
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    assert sorted(f"{k}.json" for k in manifest["records"]) == records

    left = [outcome.run_dir / "results" / name for name in records[:2]]
    as_interrupted(outcome.run_dir, left)
    counts.clear()
    resumed = run(None, Options(jobs=1, resume=outcome.run_dir))
    assert resumed.exit_code == 0
    assert counts == {p.name: 1 for p in left}  # the four finished records are not rewritten
    assert _journal(outcome.run_dir) == {name: 1 for name in records}

"""``make reproduce`` resumes (benchmarks/reproduce.sh): at one commit, an item that finished
in an earlier sitting is not run again, an item stopped half-way is resumed from its run
folder, and the rest run afresh; the record says which items an earlier sitting ran. The
runner is a stub that logs its arguments (never a real run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce.sh"
RECORD = SCRIPT.with_name("_reproduce_record.py")

STUB = """#!/bin/sh
case $1 in *_reproduce_record.py) exec "$REAL_PYTHON" "$@";; esac
echo "$0 $*" >> "$CALLS"
out=""; prev=""
while [ $# -gt 0 ]; do
  case $1 in --out) out=$2; shift;; --resume) prev=$2; shift;; esac; shift
done
[ -n "$prev" ] && out=$(dirname "$prev")
mkdir -p "$out/20260101-000000-x"
echo "expectations met: 1/1"
echo "by source: paper 1/1 · figure 0/0 · report 0/0 · project 0/0 · invariant 0/0"
echo "run folder: $out/20260101-000000-x"
"""


def project(tmp_path):
    root = tmp_path / "p"
    (root / "configs").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    shutil.copy(SCRIPT, root / "benchmarks" / "reproduce.sh")
    shutil.copy(RECORD, root / "benchmarks" / "_reproduce_record.py")
    for name in ("a", "b", "c"):
        (root / "configs" / f"{name}.yaml").write_text(f"name: {name}\n")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for exe in ("safeclf", "python"):
        (bin_ / exe).write_text(STUB)
        (bin_ / exe).chmod(0o755)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("runs/\nbenchmarks/results/\n")
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=root, check=True)
    return root, bin_


def reproduce(root, bin_, calls):
    env = {**os.environ, "BIN": str(bin_), "CALLS": str(calls), "REAL_PYTHON": sys.executable}
    return subprocess.run(["sh", "benchmarks/reproduce.sh"], cwd=root, env=env,
                          capture_output=True, text=True)


def test_an_interrupted_reproduce_goes_on_where_it_stopped(tmp_path):
    root, bin_ = project(tmp_path)
    first = reproduce(root, bin_, tmp_path / "calls1")
    assert first.returncode == 0, first.stderr
    assert len((tmp_path / "calls1").read_text().splitlines()) == 3
    state = next((root / "runs").glob("reproduce-*"))
    # a second sitting at the same commit: a finished, b stopped half-way, c never started
    (state / "b" / "done").unlink()
    shutil.rmtree(state / "c")
    second = reproduce(root, bin_, tmp_path / "calls2")
    assert second.returncode == 0, second.stderr
    calls = (tmp_path / "calls2").read_text().splitlines()
    assert len(calls) == 2  # a is not run again
    assert "--resume" in calls[0] and "/b/20260101-000000-x" in calls[0] \
        and "configs/b.yaml" not in calls[0]
    assert "configs/c.yaml" in calls[1] and "--resume" not in calls[1]
    record = sorted((root / "benchmarks" / "results").glob("reproduce-*.md"))[-1].read_text()
    assert "| configs/a.yaml | 1/1 |" in record and "(earlier sitting)" in record
    rows = [r for r in record.splitlines() if r.startswith("| configs/")]
    assert [("(earlier sitting)" in r) for r in rows] == [True, False, False]


def test_a_new_commit_starts_afresh(tmp_path):
    root, bin_ = project(tmp_path)
    assert reproduce(root, bin_, tmp_path / "calls1").returncode == 0
    (root / "configs" / "a.yaml").write_text("name: a\nseeds: 2\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "y"],
                   cwd=root, check=True)
    assert reproduce(root, bin_, tmp_path / "calls2").returncode == 0
    assert len((tmp_path / "calls2").read_text().splitlines()) == 3
    assert len(list((root / "runs").glob("reproduce-*"))) == 2


def test_the_figures_it_copies_do_not_make_the_tree_changed(tmp_path):
    """A first sitting copies figures over committed ones; the second still resumes."""
    root, bin_ = project(tmp_path)
    (root / ".gitignore").write_text("runs/\n")
    (root / "benchmarks" / "results").mkdir()
    (root / "benchmarks" / "results" / "fig.png").write_text("old")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "figs"], cwd=root, check=True)
    assert reproduce(root, bin_, tmp_path / "calls1").returncode == 0
    (root / "benchmarks" / "results" / "fig.png").write_text("new")
    assert reproduce(root, bin_, tmp_path / "calls2").returncode == 0
    assert not (tmp_path / "calls2").exists()  # every item finished in the first sitting
    (root / "configs" / "a.yaml").write_text("name: a\nchanged: 1\n")  # a changed config
    assert reproduce(root, bin_, tmp_path / "calls3").returncode == 0
    assert len((tmp_path / "calls3").read_text().splitlines()) == 3
    assert any(p.name.endswith("-dirty") for p in (root / "runs").iterdir())


def test_the_record_lists_every_cited_figure_beside_ours(tmp_path):
    """The record's second part: one row per cited expectation (paper, figure, report) with
    its reference, tolerance and ours; our own and invariant checks are not listed; an item
    without a run folder is named as such."""
    sys.path.insert(0, str(RECORD.parent))
    import _reproduce_record

    run = tmp_path / "state" / "goh_figure2" / "20260101-000000-goh"
    run.mkdir(parents=True)
    (run / "expectations.csv").write_text(
        "expectation,group,measured,condition,verdict,why,source,source_where,note\n"
        "expect[0] mean(test_error),-,0.1644,figure 0.17 ± 0.014,pass,,figure,Figure 2 (left),\n"
        "expect[1] max(miss),-,0.001,<= 0.02,pass,,invariant,,\n"
        "expect[2] mean(ratio),kappa=0.5,0.516,paper 0.5 ± 0.1,deviation,why,paper,§4.1,\n")
    (tmp_path / "state" / "reproduce_nu_table").mkdir()
    text = _reproduce_record.section(tmp_path / "state")
    rows = [r for r in text.splitlines() if r.startswith("| expect[")]
    assert len(rows) == 2
    assert "figure: Figure 2 (left)" in rows[0] and "figure 0.17 ± 0.014" in rows[0] \
        and "| 0.1644 |" in rows[0]
    assert "| kappa=0.5 |" in rows[1] and "| deviation |" in rows[1]
    assert "### reproduce_nu_table" in text and "No run folder" in text
    assert "max(miss)" not in text

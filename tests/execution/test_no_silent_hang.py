"""A run never hangs silently (issue 35, item 3): text columns that name rows are refused
before anything is fitted, and a run whose output is a log prints plain progress lines, also
while a long job is running."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def test_two_id_like_text_columns_are_refused_before_any_fit(tmp_path, cli):
    rng = np.random.default_rng(0)
    n = 4000
    pd.DataFrame({"x": rng.normal(size=n), "name": [f"person {i}" for i in range(n)],
                  "case_id": [f"C-{rng.integers(10**9)}-{i}" for i in range(n)],
                  "grp": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n)}).to_csv(
        tmp_path / "d.csv", index=False)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"""
name: ids
seeds: 1
datasets:
  - dataset: csv
    params: {{path: {tmp_path / 'd.csv'}, target: y, group: grp}}
methods:
  - method: ramp
    params: {{constraints: [{{rate: fairness_ratio, kappa: 0.8}}]}}
    certify: {{delta: 0.05}}
""")
    for command in (["validate", spec], ["run", spec, "--out", tmp_path / "runs"]):
        res = cli(*command)
        assert res.exit_code == 2
        line = " ".join(res.stderr.split())
        assert "'name' (4,000 distinct values)" in line and "'case_id'" in line
        assert "features: [...]" in line
    assert not (tmp_path / "runs").exists()


class _Log:
    """A console that records what is printed (a log, not a terminal)."""

    is_terminal = False

    def __init__(self):
        self.lines = []

    def print(self, text, **_):
        self.lines.append(text)


class _Done:
    failed = False


def test_plain_progress_speaks_while_a_long_job_runs_and_at_the_end():
    from safeclf.execution.runner import _plain_progress

    log = _Log()
    with _plain_progress(log, total=2, already=0, every=0.02, silence=0.05) as tick:
        tick(_Done())                 # first result: a line
        time.sleep(0.3)               # a long job: the heartbeat repeats the line
        heard = len(log.lines)
        tick(_Done())                 # the last result: a line
    assert log.lines[0].startswith("jobs: 1/2 finished (1 done, 0 failed), 1 remaining")
    assert heard >= 3, log.lines
    assert log.lines[-1].startswith("jobs: 2/2 finished (2 done, 0 failed), 0 remaining")
    count = len(log.lines)
    time.sleep(0.15)
    assert len(log.lines) == count    # the heartbeat stops with the run

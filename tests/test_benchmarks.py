"""``make bench`` tells load from regression (issue 37, item 6): the judgement of each figure
against the machine's two probes, on fake probes and fake loads (never on timings), the
summary's exit status, and what a benchmark records (benchmarks/_machine.py, _record.py,
_summary.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import _machine  # noqa: E402
import _summary  # noqa: E402


def reading(busy=0.1, ceiling=1.97, load1=0.3, cores=2):
    return {"time": "t", "cores": cores, "load": [load1, load1, load1],
            "others_busy_cores": busy, "ceiling": {"value": ceiling, "runs": [ceiling]}}


def fig(met=False, timed=True, load=1.0, target=1.0, name="f", bench="b"):
    return {"benchmark": bench, "figure": name, "value": 1.5 if not met else 0.5,
            "target": target, "sense": None if target is None else "<=", "unit": "×",
            "met": met, "detail": "", "timed": timed, "load": load}


def statuses(figures, start, end):
    return [f["status"] for f in _machine.judge(figures, start, end)["figures"]]


def test_a_quiet_machine_keeps_a_miss_a_miss():
    out = _machine.judge([fig(), fig(met=True), fig(target=None)], reading(), reading())
    assert out["quiet"] and out["why"] == []
    assert [f["status"] for f in out["figures"]] == ["missed", "met", "recorded"]
    assert (out["missed"], out["unreliable"]) == (1, 0)


@pytest.mark.parametrize("start, end", [
    (reading(busy=1.8), reading()),            # another user's CPU at the start
    (reading(), reading(ceiling=1.2)),         # two loops slow each other at the end
    (reading(busy=None, load1=3.0), reading()),  # no CPU counters: the load average decides
    (None, reading()),                         # a probe that did not run: nothing says quiet
])
def test_a_busy_end_makes_a_timed_miss_unreliable_with_its_load(start, end):
    out = _machine.judge([fig(load=4.25), fig(met=True)], start, end)
    assert not out["quiet"] and len(out["why"]) == 1
    assert [f["status"] for f in out["figures"]] == ["unreliable: load 4.25", "met"]
    assert (out["missed"], out["unreliable"]) == (0, 1)


def test_thresholds_are_the_documented_ones():
    assert _machine.quiet(reading(busy=0.99, ceiling=1.9))       # 0.99 < 0.5 × 2 cores
    assert not _machine.quiet(reading(busy=1.0, ceiling=1.97))
    assert not _machine.quiet(reading(busy=0.0, ceiling=1.89))
    assert _machine.quiet(reading(busy=1.9, ceiling=1.95, cores=4))  # per core


def test_load_at_the_figure_itself_marks_contention_between_quiet_ends():
    # 2 cores: the benchmark's own processes may bring the load to 2.5
    assert statuses([fig(load=2.5), fig(load=2.6)], reading(), reading()) == [
        "missed", "unreliable: load 2.60"]


def test_a_figure_that_is_not_a_timing_misses_whatever_the_load():
    assert statuses([fig(timed=False, load=6.0)], reading(busy=2.0, ceiling=0.9),
                    reading(busy=2.0, ceiling=0.9)) == ["missed"]


def test_others_busy_reads_the_busy_share_of_every_core(monkeypatch):
    ticks = iter([(100.0, 1000.0), (250.0, 1200.0)])  # 150 busy of 200 jiffies
    monkeypatch.setattr(_machine, "_cpu_times", lambda: next(ticks))
    monkeypatch.setattr(_machine.time, "sleep", lambda s: None)
    monkeypatch.setattr(_machine.os, "cpu_count", lambda: 2)
    assert _machine.others_busy() == pytest.approx(1.5)
    monkeypatch.setattr(_machine, "_cpu_times", lambda: None)
    assert _machine.others_busy() is None


def test_a_script_fails_when_it_crashed_or_no_miss_explains_its_status():
    lines = [fig(bench="a"), fig(bench="b", met=True), {"benchmark": "c", "crashed": "E"},
             fig(bench="c"), fig(bench="d")]
    got = _summary.failed_scripts(["benchmarks/a.py:1", "benchmarks/b.py:1",
                                   "benchmarks/c.py:1", "benchmarks/d.py:2"], lines)
    assert got == ["benchmarks/b.py (exit status 1)", "benchmarks/c.py (exit status 1)",
                   "benchmarks/d.py (exit status 2)"]


def _summarise(tmp_path, monkeypatch, figures, start, end, statuses=()):
    monkeypatch.chdir(tmp_path)  # the summary writes benchmarks/results/ under the cwd
    rec = tmp_path / "rec.jsonl"
    rec.write_text("".join(json.dumps(f) + "\n" for f in figures))
    paths = []
    for name, r in (("start", start), ("end", end)):
        (tmp_path / name).write_text("" if r is None else json.dumps(r))
        paths.append(str(tmp_path / name))
    rc = _summary.main([str(rec), *paths, *statuses])
    (result,) = (tmp_path / "benchmarks" / "results").glob("*.json")
    return rc, json.loads(result.read_text())


def test_the_summary_fails_only_for_misses_on_a_quiet_machine(tmp_path, monkeypatch):
    rc, out = _summarise(tmp_path, monkeypatch, [fig(bench="x")], reading(busy=1.7), reading(),
                         ["benchmarks/x.py:1"])
    assert rc == 0 and out["unreliable"] == 1 and out["failed_scripts"] == []
    assert out["contention"]["start"]["others_busy_cores"] == 1.7 and not out["contention"]["quiet"]
    assert out["figures"][0]["status"].startswith("unreliable: load")
    for f in (tmp_path / "benchmarks" / "results").glob("*.json"):
        f.unlink()
    rc, out = _summarise(tmp_path, monkeypatch, [fig(bench="x")], reading(), reading(),
                         ["benchmarks/x.py:1"])
    assert rc == 1 and out["missed"] == 1 and out["contention"]["quiet"]


def test_a_benchmark_records_its_load_and_its_crash(tmp_path):
    rec = tmp_path / "rec.jsonl"
    script = tmp_path / "boom.py"
    script.write_text("from _record import figure\n"
                      "figure('ratio', 2.0, 1.0, '<=', '×')\n"
                      "figure('error', 0.1, 0.2, '<=', timed=False)\n"
                      "raise RuntimeError('no data')\n")
    env = {"SAFECLF_BENCH_RECORD": str(rec), "PYTHONPATH": str(BENCH), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "no data" in proc.stderr  # the traceback still shown
    ratio, error, crash = [json.loads(line) for line in rec.read_text().splitlines()]
    assert (ratio["timed"], ratio["met"], error["timed"], error["met"]) == (True, False, False, True)
    assert isinstance(ratio["load"], float) and ratio["load"] >= 0
    assert crash == {"benchmark": "boom", "crashed": "RuntimeError: no data"}


def test_a_speed_up_below_the_machines_own_ceiling_beside_it_is_unreliable():
    """A speed-up target above the machine's own ceiling measured beside the figure (two plain
    loops at once) is out of any code's reach at that moment: the miss is unreliable even
    between quiet probes; a ceiling at or above the target leaves it a miss, and a figure
    that is not a timing, or bounded from above, is not judged by a ceiling."""
    def speedup(value, ceiling, timed=True, sense=">="):
        return {**fig(target=1.9), "value": value, "sense": sense, "met": False,
                "ceiling": ceiling, "timed": timed}

    assert statuses([speedup(1.87, 1.82), speedup(1.87, 1.95), speedup(1.87, None),
                     speedup(1.87, 1.82, timed=False), speedup(1.87, 1.82, sense="<=")],
                    reading(), reading()) == [
        "unreliable: the machine's own ceiling beside it 1.82", "missed", "missed", "missed",
        "missed"]

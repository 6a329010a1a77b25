"""Runner overhead: 200 trivial jobs through the whole runner.

Per-job overhead = (wall time of the run on one worker − the time spent inside the jobs'
fit and predict) / number of jobs: what the runner adds for splitting, metrics, records and
tables. Speed-up = wall time on one worker / wall time on two, for the same 200 jobs (the
jobs are an RBF SVM on breast_cancer, ~7 ms each, issue 24's size: enough to measure the
runner's parallel efficiency rather than process start-up, which a warm-up run pays once).
Targets: overhead < 20 ms per job, speed-up ≥ 1.9 on 2 cores (issue 24; was 1.8). Printed
beside it, as a reference measured in the same run: the machine's own ceiling, the speed-up of
the same jobs run in two plain loops with no runner at all (two busy cores slow each other on a
small virtual machine). Also times `safeclf --help` (target < 0.5 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _record import figure

from safeclf.runner import Options, run

#: Target of issue 24: 2 workers at least 1.9× as fast as one on 6 ms jobs.
SPEEDUP = 1.9


def spec_file(folder: Path, name: str, method: str, seeds: int) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(f"""
        name: {name}
        seeds: {seeds}
        datasets: [{{dataset: breast_cancer, preprocess: standardize}}]
        methods:
          - {method}
        metrics: [error]
        plots: []
    """))
    return path


def timed_run(path: Path, jobs: int, out: Path):
    t0 = time.perf_counter()
    outcome = run(path, Options(jobs=jobs, out=out))
    wall = time.perf_counter() - t0
    assert outcome.exit_code == 0 and len(outcome.results) == len(outcome.jobs)
    inside = sum((r.fit_seconds or 0.0) + (r.predict_seconds or 0.0) for r in outcome.results)
    return wall, inside, len(outcome.jobs)


JOB_LOOP = """
import sys, time
from safeclf.jobs import run_job
from safeclf.runner import payloads
from safeclf.spec import expand, load_spec
spec = load_spec(sys.argv[1], None)
jobs = payloads(spec, expand(spec))
for p in jobs[:20]:
    run_job(p)  # imports and caches warm
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
t0 = time.perf_counter()
for p in jobs:
    run_job(p)
print(time.perf_counter() - t0)
"""


def machine_ceiling(spec_path: Path):
    """The speed-up two workers could reach on this machine for these jobs with no runner at
    all: the jobs in a plain loop, one process alone, then two processes at once (started on
    the same clock tick); 2 × alone / the slower of the two. On a 2-core virtual machine two
    busy cores slow each other (shared caches and memory bandwidth), so this is below 2."""
    def loops(k: int) -> list[float]:
        start = time.time() + 3.0  # after both processes have imported and warmed up
        procs = [subprocess.Popen([sys.executable, "-c", JOB_LOOP, str(spec_path), str(start)],
                                  stdout=subprocess.PIPE, text=True) for _ in range(k)]
        return [float(p.communicate()[0]) for p in procs]

    alone = loops(1)[0]
    together = max(loops(2))
    return 2 * alone / together, alone, together


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trivial = spec_file(tmp, "trivial", "{method: logreg, params: {max_iter: 200}}", 200)
        timed_run(trivial, 1, tmp / "warm")  # imports and dataset cache warm
        wall, inside, n = timed_run(trivial, 1, tmp / "one")
        overhead_ms = 1000 * (wall - inside) / n
        print(f"trivial jobs: {n}, wall {wall:.2f} s on 1 worker, inside jobs {inside:.2f} s")
        print(f"overhead per job: {overhead_ms:.1f} ms (target < 20 ms)")
        met = figure("overhead per job", overhead_ms, 20, "<=", "ms")

        heavy = spec_file(tmp, "heavy",
                          "{method: svm, params: {kernel: rbf, C: 10.0, gamma: 0.001}}", 200)
        w1, in1, _ = timed_run(heavy, 1, tmp / "h1")
        timed_run(trivial, 2, tmp / "warm2")  # start the two workers and fill their caches
        w2, _, _ = timed_run(heavy, 2, tmp / "h2")
        print(f"parallel: {n} jobs of {1000 * in1 / n:.0f} ms, wall 1 worker {w1:.2f} s, "
              f"2 workers {w2:.2f} s, speed-up {w1 / w2:.2f} (target ≥ {SPEEDUP})")
        met &= figure("speed-up on 2 workers", w1 / w2, SPEEDUP, ">=", "×",
               f"1 worker {w1:.2f} s, 2 workers {w2:.2f} s")

        ceiling, alone, together = machine_ceiling(heavy)
        print(f"the machine's own ceiling for these jobs: {ceiling:.2f} (the same {n} jobs in a "
              f"plain loop, no runner: {alone:.2f} s alone, {together:.2f} s for the slower of "
              f"two loops run at once; load {os.getloadavg()[0]:.2f})")
        figure("machine ceiling: two plain job loops at once", ceiling, None, None, "×",
               f"one loop alone {alone:.2f} s, two at once {together:.2f} s")

    exe = Path(sys.executable).with_name("safeclf")
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([str(exe), "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    print(f"safeclf --help: best {min(times):.3f} s, median {sorted(times)[2]:.3f} s (target < 0.5 s)")
    met &= figure("safeclf --help (median)", sorted(times)[2], 0.5, "<=", "s")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

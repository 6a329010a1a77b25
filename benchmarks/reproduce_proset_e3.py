"""Reproduce the report's experiment E3 (full two-stage hyperparameter search) for the
prototype set classifier: `safeclf run configs/proset_benchmark.yaml --profile e3 --check`.

Stage 1 fits 50 (λ_v, λ_w) pairs × 5 folds with B = 1 per data set and seed (5 seeds), stage 2
B ∈ 0..10; folds run in parallel. About an hour on 2 cores. Exit code: the runner's (1 when an
expectation is missed). ``make reproduce`` sets SAFECLF_REPRODUCE_OUT to the folder that
receives the run folder (benchmarks/reproduce.sh resumes it from there after an interruption).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    exe = Path(sys.executable).with_name("safeclf")
    cmd = [str(exe), "run", str(ROOT / "configs" / "proset_benchmark.yaml"), "--profile", "e3",
           "--check", *sys.argv[1:]]
    if os.environ.get("SAFECLF_REPRODUCE_OUT"):
        cmd += ["--out", os.environ["SAFECLF_REPRODUCE_OUT"]]
    print(" ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())

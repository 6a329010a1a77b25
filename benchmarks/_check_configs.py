"""`make check-configs`: every config's CI profile, ``safeclf run CONFIG --profile ci --check
-j 1 --out runs/ci``, as many configs at a time as the machine has cores.

Each core gets one process that runs its configs one after another through the command line's
own entry point (``safeclf.cli.app``, the same code and arguments as the command). A process
of its own per config paid its imports (scikit-learn, SciPy, pandas, matplotlib, the solvers,
the compiled code: 2–3 s) once per config; here once per core. One worker per config: a run's
own start, reading back and report leave its workers idle, so two configs side by side keep two
cores busier than one config on two workers. Longest profile first (robust_socp, about 2 min
on one core), so that it does not start last and leave the other core idle to the end.

Each config's output is printed whole, under its own heading, as it finishes; the count at
the end. Exit 1 when any config did not pass.

    .venv/bin/python benchmarks/_check_configs.py [CONFIG ...]   (default: configs/*.yaml)
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

CONFIGS = "configs/*.yaml"
#: profiles that take longest start first (the rest in name order)
LONGEST_FIRST = ("configs/robust_socp.yaml",)
OUT = os.environ.get("OUT", "runs/ci")


def command(config: str, out: str = OUT) -> list[str]:
    """The arguments of ``safeclf`` that check one config."""
    return ["run", config, "--profile", "ci", "--check", "-j", "1", "--out", out]


def check(config: str) -> tuple[str, int, float, str]:
    """Run one config's check in this process: (config, exit code, seconds, its output)."""
    from safeclf.cli.app import app

    args = command(config)
    buf, t0 = io.StringIO(), time.perf_counter()
    argv, sys.argv = sys.argv, ["safeclf", *args]  # what the manifest records as the command
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                code = app(args, standalone_mode=False)
                rc = code if isinstance(code, int) else 0
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 1
            except Exception:  # noqa: BLE001 - reported with its traceback, counted as failed
                traceback.print_exc(file=buf)
                rc = 1
    finally:
        sys.argv = argv
    return config, rc, time.perf_counter() - t0, buf.getvalue()


def order(configs: list[str]) -> list[str]:
    first = [c for c in LONGEST_FIRST if c in configs]
    return first + sorted(c for c in configs if c not in first)


def main(argv: list[str]) -> int:
    configs = order(argv or sorted(str(p) for p in Path().glob(CONFIGS)))
    Path(OUT).mkdir(parents=True, exist_ok=True)
    failed = []
    workers = min(len(configs), os.cpu_count() or 2)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(check, c): c for c in configs}
        for fut in as_completed(futures):
            try:
                config, rc, seconds, text = fut.result()
            except Exception as exc:  # noqa: BLE001 - the process checking it died
                config, rc, seconds, text = futures[fut], 1, 0.0, f"{type(exc).__name__}: {exc}"
            print(f"== safeclf {' '.join(command(config))} ({seconds:.0f} s)", flush=True)
            print(text, end="" if text.endswith("\n") or not text else "\n", flush=True)
            if rc != 0:
                failed.append(config)
    for config in sorted(failed):
        print(f"!! {config} did not pass (exit code != 0)")
    print(f"configs: {len(configs) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

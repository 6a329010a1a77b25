"""How busy the machine is, so that ``make bench`` can tell load from regression.

A probe (``python benchmarks/_machine.py``, printed as one JSON object) measures, with nothing
of the benchmarks running:

* the **ceiling**: a fixed, BLAS-free pure-Python loop timed in one process alone, then in two
  processes started on the same clock tick; ``2 × alone / the slower of the two`` (median of
  :data:`CEILING_REPEATS`). On an idle 2-core machine it is near 2; every busy core of another
  user pulls it down.
* the **others' CPU**: the busy share of every core over :data:`IDLE_WINDOW` seconds while the
  probe itself sleeps (``/proc/stat``, user + nice + system + irq + softirq + steal), in cores.
  The 1-minute load average is recorded too, but it cannot judge the end of a run: it still
  holds the benchmarks' own last minute.

``make bench`` probes before the first benchmark and after the last. :func:`judge` then states
each figure: ``met``, ``missed``, ``recorded`` (no target), or ``unreliable: load X`` — a timing
that missed its target while the machine was not quiet (:func:`quiet`) at the start or the end,
or while the 1-minute load at the figure itself exceeded the cores + :data:`OWN_LOAD`. Only a
``missed`` figure (or a script that failed) makes ``make bench`` exit non-zero. A figure that is
not a timing (a failure rate, a test error) is judged as measured whatever the load.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time

#: A machine is quiet when the others' CPU is below this share of each core ...
QUIET_BUSY_PER_CORE = 0.5
#: ... and two copies of the ceiling loop run at least this much faster than one
QUIET_CEILING = 1.9
#: The figure's own 1-minute load may exceed the cores by this much (the benchmark itself:
#: its parent process, a worker's start-up) before the figure counts as taken under contention
OWN_LOAD = 0.5
#: Iterations of the ceiling loop (about 0.3 s in one process on the 2-core Xeon of docs/speed.md)
LOOP = 3_000_000
CEILING_REPEATS = 3
IDLE_WINDOW = 2.0


def _spin(n: int) -> int:
    """Integer arithmetic in the interpreter: no BLAS, no memory traffic to speak of."""
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def _timed_spin(n: int, start: float, out) -> None:
    while time.time() < start:
        time.sleep(0.0005)
    t0 = time.perf_counter()
    _spin(n)
    out.put(time.perf_counter() - t0)


def _loops(k: int, n: int) -> list[float]:
    """Wall seconds of ``k`` processes each running the loop, started on the same clock tick."""
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    out = ctx.Queue()
    start = time.time() + 0.3
    procs = [ctx.Process(target=_timed_spin, args=(n, start, out)) for _ in range(k)]
    for p in procs:
        p.start()
    times = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return times


def ceiling(n: int = LOOP, repeats: int = CEILING_REPEATS) -> dict:
    """The speed-up of the loop on two processes over one: median of ``repeats`` pairs."""
    runs = []
    for _ in range(repeats):
        alone = _loops(1, n)[0]
        together = max(_loops(2, n))
        runs.append((2 * alone / together, alone, together))
    value, alone, together = sorted(runs)[len(runs) // 2]
    return {"value": round(value, 3), "runs": [round(r[0], 3) for r in runs],
            "alone_s": round(alone, 4), "together_s": round(together, 4)}


def _cpu_times() -> tuple[float, float] | None:
    """(busy, total) jiffies of all cores since boot, or None where /proc/stat is absent."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [float(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0.0] * 8)[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def others_busy(window: float = IDLE_WINDOW) -> float | None:
    """Cores kept busy by others while this process sleeps for ``window`` seconds (None where
    the system does not say)."""
    a = _cpu_times()
    time.sleep(window)
    b = _cpu_times()
    if a is None or b is None or b[1] <= a[1]:
        return None
    return round((b[0] - a[0]) / (b[1] - a[1]) * (os.cpu_count() or 1), 3)


def probe() -> dict:
    """One reading of the machine: load averages, the others' CPU, the ceiling."""
    busy = others_busy()
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "cores": os.cpu_count() or 1,
            "load": [round(v, 2) for v in os.getloadavg()], "others_busy_cores": busy,
            "ceiling": ceiling()}


def quiet(reading: dict) -> bool:
    """Whether one probe found the machine quiet: the others' CPU below
    :data:`QUIET_BUSY_PER_CORE` per core (the 1-minute load where the system gives no CPU
    counters) and the ceiling at least :data:`QUIET_CEILING`."""
    cores = reading["cores"]
    busy = reading.get("others_busy_cores")
    if busy is None:
        busy = reading["load"][0]
    return busy < QUIET_BUSY_PER_CORE * cores and reading["ceiling"]["value"] >= QUIET_CEILING


def _why_not_quiet(name: str, reading: dict) -> str:
    busy = reading.get("others_busy_cores")
    return (f"{name}: ceiling {reading['ceiling']['value']:.2f} (quiet ≥ {QUIET_CEILING}), "
            f"others' CPU {'?' if busy is None else f'{busy:.2f}'} cores (quiet < "
            f"{QUIET_BUSY_PER_CORE * reading['cores']:g}), load {reading['load'][0]:.2f}")


def _below_ceiling(f: dict) -> bool:
    """Whether a speed-up's target (≥) lies above the machine's own ceiling measured beside
    it: then the machine, not the code, kept the figure from its target."""
    c = f.get("ceiling")
    return c is not None and f.get("sense") == ">=" and c < f["target"]


def judge(figures: list[dict], start: dict | None, end: dict | None) -> dict:
    """Each figure's ``status`` (added to a copy of it) and the run's verdict.

    A probe that is missing counts as not quiet (nothing says the machine was). Returns
    ``{"figures": [...], "quiet": bool, "why": [...], "missed": int, "unreliable": int}``.
    """
    readings = {"start": start, "end": end}
    why = [f"{k}: not measured" if r is None else _why_not_quiet(k, r)
           for k, r in readings.items() if r is None or not quiet(r)]
    calm = not why
    cores = next((r["cores"] for r in readings.values() if r), os.cpu_count() or 1)
    out = []
    for f in figures:
        f = dict(f)
        load = f.get("load")
        busy_then = load is not None and load > cores + OWN_LOAD
        if f.get("target") is None:
            f["status"] = "recorded"
        elif f["met"]:
            f["status"] = "met"
        elif f.get("timed", True) and (not calm or busy_then):
            shown = load if load is not None else max(
                (r["load"][0] for r in readings.values() if r), default=float("nan"))
            f["status"] = f"unreliable: load {shown:.2f}"
        elif f.get("timed", True) and _below_ceiling(f):
            f["status"] = f"unreliable: the machine's own ceiling beside it {f['ceiling']:.2f}"
        else:
            f["status"] = "missed"
        out.append(f)
    return {"figures": out, "quiet": calm, "why": why,
            "missed": sum(f["status"] == "missed" for f in out),
            "unreliable": sum(f["status"].startswith("unreliable") for f in out)}


if __name__ == "__main__":
    json.dump(probe(), sys.stdout)
    print()
    sys.exit(0)

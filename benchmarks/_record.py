"""One way for every benchmark to state a figure against its target.

``figure(...)`` returns whether the target is met and, when ``make bench`` runs the benchmarks
(environment variable :data:`RECORD`), appends the figure as one JSON line to the file it
names, with the 1-minute load average at that moment; ``benchmarks/_summary.py`` then judges
each figure against the machine's contention (``benchmarks/_machine.py``), writes
``benchmarks/results/<date>-<commit>.json`` and prints one table, so a regression is a diff
between two result files. A figure measured by a ratio states both of its times in ``detail``.

A script that ends in an uncaught exception under ``make bench`` records that too (one line
with ``"crashed"``), so that the summary can tell a script that failed from one whose exit
status only reports missed targets.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

#: Environment variable naming the JSON-lines file the figures go to.
RECORD = "SAFECLF_BENCH_RECORD"


def _script() -> str:
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "?"
    return script.removesuffix(".py")


def _append(line: dict) -> None:
    path = os.environ.get(RECORD)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def figure(name: str, value: float, target: float | None, sense: str | None = "<=",
           unit: str = "", detail: str = "", timed: bool = True,
           ceiling: float | None = None) -> bool:
    """Record one figure; ``sense`` ``"<="`` or ``">="`` says on which side of ``target`` the
    value meets it. Returns whether it is met. A figure with no ``target`` (and no ``sense``)
    is recorded for the record (a scaling curve, a warm-start gain) and always met.

    ``timed`` says whether the figure is a timing (a time, a ratio of times, a speed-up),
    which another user's load can move: ``make bench`` reports such a figure's miss on a busy
    machine as unreliable rather than missed. A figure that is not (a failure rate, a test
    error) passes ``timed=False`` and is judged as measured whatever the load.

    ``ceiling``: for a speed-up, the machine's own speed-up on the same kind of work measured
    beside it (two plain loops at once, no safeclf): a target above what the machine itself
    reached then says nothing of the code, and the summary reports the miss as unreliable."""
    if target is None:
        sense, met = None, True
    elif sense not in ("<=", ">="):
        raise ValueError(f"sense must be '<=' or '>=', got {sense!r}")
    else:
        met = bool(value <= target) if sense == "<=" else bool(value >= target)
    _append({"benchmark": _script(), "figure": name, "value": float(value),
             "target": None if target is None else float(target), "sense": sense,
             "unit": unit, "met": met, "detail": detail, "timed": bool(timed),
             "load": round(os.getloadavg()[0], 2),
             "ceiling": None if ceiling is None else float(ceiling)})
    return met


def _crash_hook(kind, value, tb):
    _append({"benchmark": _script(), "crashed": "".join(
        traceback.format_exception_only(kind, value)).strip()})
    _previous_hook(kind, value, tb)


_previous_hook = sys.excepthook
if os.environ.get(RECORD):
    sys.excepthook = _crash_hook

"""One way for every benchmark to state a figure against its target.

``figure(...)`` returns whether the target is met and, when ``make bench`` runs the benchmarks
(environment variable :data:`RECORD`), appends the figure as one JSON line to the file it
names; ``benchmarks/_summary.py`` then writes ``benchmarks/results/<date>-<commit>.json`` and
prints one table, so a regression is a diff between two result files. A figure measured by a
ratio states both of its times in ``detail``.
"""

from __future__ import annotations

import json
import os
import sys

#: Environment variable naming the JSON-lines file the figures go to.
RECORD = "SAFECLF_BENCH_RECORD"


def figure(name: str, value: float, target: float | None, sense: str | None = "<=",
           unit: str = "", detail: str = "") -> bool:
    """Record one figure; ``sense`` ``"<="`` or ``">="`` says on which side of ``target`` the
    value meets it. Returns whether it is met. A figure with no ``target`` (and no ``sense``)
    is recorded for the record (a scaling curve, a warm-start gain) and always met."""
    if target is None:
        sense, met = None, True
    elif sense not in ("<=", ">="):
        raise ValueError(f"sense must be '<=' or '>=', got {sense!r}")
    else:
        met = bool(value <= target) if sense == "<=" else bool(value >= target)
    path = os.environ.get(RECORD)
    if path:
        script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "?"
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"benchmark": script.removesuffix(".py"), "figure": name,
                                "value": float(value),
                                "target": None if target is None else float(target), "sense": sense,
                                "unit": unit, "met": met, "detail": detail}) + "\n")
    return met

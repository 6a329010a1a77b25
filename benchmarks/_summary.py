"""``make bench``'s last step: the figures the benchmarks recorded (``benchmarks/_record.py``)
as one table, and ``benchmarks/results/<UTC date>-<commit>.json`` with the figures, their
targets, the load average before and after, and the machine.

    python benchmarks/_summary.py RECORD_FILE LOAD_BEFORE FAILED_SCRIPTS...

Exit 1 when a figure missed its target or a script failed.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv: list[str]) -> int:
    record, load_before, failed = Path(argv[0]), argv[1], argv[2:]
    figures = [json.loads(line) for line in record.read_text().splitlines() if line.strip()] \
        if record.exists() else []
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    commit = _commit()
    out = {"date": stamp, "commit": commit,
           "machine": {"cpu": _cpu(), "cores": os.cpu_count(), "python": platform.python_version(),
                       "system": platform.platform()},
           "load_average": {"before": load_before, "after": " ".join(
               f"{v:.2f}" for v in os.getloadavg())},
           "figures": figures, "failed_scripts": failed,
           "all_met": all(f["met"] for f in figures) and not failed}
    folder = Path("benchmarks/results")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}-{commit}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    width = max([len(f"{f['benchmark']}: {f['figure']}") for f in figures] + [20])
    print(f"\n{'figure':<{width}}  {'value':>9}  {'target':<12}  met")
    for f in figures:
        label = f"{f['benchmark']}: {f['figure']}"
        target = "—" if f["target"] is None else (
            f"{'≤' if f['sense'] == '<=' else '≥'} {f['target']:g} {f['unit']}")
        print(f"{label:<{width}}  {f['value']:>9.3g}  {target:<12}  {'yes' if f['met'] else 'NO'}")
    for script in failed:
        print(f"{script}: failed (exit status not 0)")
    print(f"load average before {load_before}, after {out['load_average']['after']}; "
          f"written to {path}")
    return 0 if out["all_met"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

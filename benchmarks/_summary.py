"""``make bench``'s last step: the figures the benchmarks recorded (``benchmarks/_record.py``)
judged against the machine's contention (``benchmarks/_machine.py``), as one table, and
``benchmarks/results/<UTC date>-<commit>.json`` with the figures, their targets and status,
the machine's two probes (load averages, the others' CPU, the ceiling) and whether it was
quiet.

    python benchmarks/_summary.py RECORD_FILE START_PROBE END_PROBE [SCRIPT:STATUS ...]

``SCRIPT:STATUS`` names each benchmark script that exited non-zero. Exit 1 when a figure
missed its target on a quiet machine, or a script failed: it crashed, or exited non-zero
without a missed target to explain it. A timing that missed while the machine was busy is
reported ``unreliable: load X`` and does not fail the run.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from _machine import QUIET_BUSY_PER_CORE, QUIET_CEILING, judge


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


def _read_json(path: str) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def failed_scripts(statuses: list[str], lines: list[dict]) -> list[str]:
    """The scripts among ``statuses`` (``path:exit status``) that failed: those that crashed
    (a ``crashed`` line of the record), and those whose non-zero status no target they missed
    explains. A script exits 1 when one of its figures misses; the summary judges those."""
    crashed = {line["benchmark"] for line in lines if "crashed" in line}
    missed = {line["benchmark"] for line in lines if "figure" in line and not line["met"]}
    out = []
    for item in statuses:
        script, _, status = item.rpartition(":")
        name = Path(script).stem
        if name in crashed or name not in missed or status != "1":
            out.append(f"{script} (exit status {status})")
    return out


def main(argv: list[str]) -> int:
    record, start, end, statuses = Path(argv[0]), _read_json(argv[1]), _read_json(argv[2]), argv[3:]
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()] \
        if record.exists() else []
    verdict = judge([line for line in lines if "figure" in line], start, end)
    figures, failed = verdict["figures"], failed_scripts(statuses, lines)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    commit = _commit()
    out = {"date": stamp, "commit": commit,
           "machine": {"cpu": _cpu(), "cores": os.cpu_count(), "python": platform.python_version(),
                       "system": platform.platform()},
           "contention": {"start": start, "end": end, "quiet": verdict["quiet"],
                          "why_not_quiet": verdict["why"],
                          "quiet_means": f"at the start and the end, the others' CPU < "
                                         f"{QUIET_BUSY_PER_CORE} per core and the ceiling ≥ "
                                         f"{QUIET_CEILING}"},
           "figures": figures, "failed_scripts": failed,
           "crashes": [line for line in lines if "crashed" in line],
           "all_met": all(f["met"] for f in figures) and not failed,
           "missed": verdict["missed"], "unreliable": verdict["unreliable"]}
    folder = Path("benchmarks/results")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}-{commit}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    width = max([len(f"{f['benchmark']}: {f['figure']}") for f in figures] + [20])
    print(f"\n{'figure':<{width}}  {'value':>9}  {'target':<12}  status")
    for f in figures:
        label = f"{f['benchmark']}: {f['figure']}"
        target = "—" if f["target"] is None else (
            f"{'≤' if f['sense'] == '<=' else '≥'} {f['target']:g} {f['unit']}")
        print(f"{label:<{width}}  {f['value']:>9.3g}  {target:<12}  {f['status']}")
    for script in failed:
        print(f"{script}: failed")
    for name in ("start", "end"):
        r = out["contention"][name]
        print(f"machine at the {name}: " + ("not measured" if r is None else
              f"load {' '.join(f'{v:.2f}' for v in r['load'])}, others' CPU "
              f"{r['others_busy_cores']} cores, ceiling {r['ceiling']['value']:.2f}, "
              f"the ceiling's loop alone {r['ceiling'].get('alone_s', float('nan')):.3f} s"))
    print("(the loop alone is the machine's speed: a host shared with busy neighbours can be "
          "slower by a third with none of them in this machine's load or CPU counters; the "
          "ratios above are of times measured side by side, absolute times are not)")
    print("the machine was quiet" if verdict["quiet"] else
          "the machine was NOT quiet (" + "; ".join(verdict["why"]) + "): a timing that "
          "missed its target is unreliable, not missed")
    print(f"{verdict['missed']} missed, {verdict['unreliable']} unreliable, {len(failed)} "
          f"scripts failed; written to {path}")
    return 1 if verdict["missed"] or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

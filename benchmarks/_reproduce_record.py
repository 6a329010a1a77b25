"""The second part of ``make reproduce``'s record: every cited figure beside ours.

``python benchmarks/_reproduce_record.py runs/reproduce-<commit>`` reads, for each item that
ran (one folder per config or script, benchmarks/reproduce.sh), its run folder's
``expectations.csv`` and prints one Markdown table per item of the expectations whose reference
is someone else's figure or claim (source ``paper``, ``figure`` read off a plot, or ``report``,
proset's author's report): what is checked, where the figure comes from, the figure with its
tolerance (or the claim's condition), ours, and the verdict. Our own choices (``project``) and
checks true by construction (``invariant``) are counted in the table above it, not listed.
An item without a run folder (a script that checks its own figures) is named with that.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

CITED = ("paper", "figure", "report")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _number(text: str) -> str:
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return _cell(text)


def section(state: Path) -> str:
    """The Markdown section for the items under ``state`` (sorted by name)."""
    out = ["", "## Cited figures against ours", "",
           "Every expectation whose reference is a paper's figure or claim (`paper`, `figure` "
           "read off a plot) or the proset author's report (`report`): the reference with its "
           "tolerance or the claim's condition, our measured value, the verdict (`deviation`: a "
           "stated known deviation, shown and not failing)."]
    for item in sorted(p for p in state.iterdir() if p.is_dir()):
        runs = sorted(item.glob("2*/expectations.csv"))
        if not runs:
            out += ["", f"### {item.name}", "", "No run folder: the script checks its own "
                    "figures (its output above and in the log of this sitting)."]
            continue
        with runs[-1].open(newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r.get("source") in CITED]
        out += ["", f"### {item.name}", ""]
        if not rows:
            out.append("No cited figure (its expectations are our own or invariants).")
            continue
        out += ["| expectation | group | source | reference | ours | verdict |",
                "|---|---|---|---|---|---|"]
        for r in rows:
            where = f"{r['source']}: {r['source_where']}" if r.get("source_where") else r["source"]
            out.append(f"| {_cell(r['expectation'])} | {_cell(r.get('group', '-'))} | "
                       f"{_cell(where)} | {_cell(r['condition'])} | {_number(r['measured'])} | "
                       f"{_cell(r['verdict'])} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python benchmarks/_reproduce_record.py runs/reproduce-<commit>",
              file=sys.stderr)
        return 2
    sys.stdout.write(section(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

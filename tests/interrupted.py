"""A finished run folder made to look like one killed before some of its jobs finished, for the
``--resume`` tests: what such a run leaves is its records so far, each listed in
``records.sha256`` as it was written, and a manifest without the final ``records`` list."""

from __future__ import annotations

import json
from pathlib import Path


def as_interrupted(run_dir: Path, unfinished: list[Path]) -> None:
    """Remove the records ``unfinished`` (paths in ``run_dir/results``), their lines in
    ``records.sha256`` and the manifest's final ``records`` and ``end``."""
    from safeclf.store.records import JOURNAL

    names = {f"results/{p.name}" for p in unfinished}
    for p in unfinished:
        p.unlink()
    sums = run_dir / JOURNAL
    sums.write_text("".join(line for line in sums.read_text().splitlines(keepends=True)
                            if line.split("  ", 1)[1].strip() not in names))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.pop("records")
    manifest["end"] = None
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))

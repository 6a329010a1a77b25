"""What ``--resume`` checks before it writes anything into a folder.

A folder is finished as a run only if it is one: it holds the ``spec.yaml`` and the
``manifest.json`` (a JSON object) that a run writes first, and a ``results`` folder. Any other
folder, however like a run it looks, is the user's and is never written into. Nothing in it may
be a symlink that leads out of it: the resumed run would read its records, or write its tables
and plots, through it.

The jobs still to run must see the data the finished ones saw: the manifest records each data
file's size and SHA-256 (:func:`safeclf.store.folder.data_files`), and a file that changed or
went away since stops the resume with one line, unless the user says
``--allow-changed-data``; the manifest's ``resumed`` entry then records the new identities
beside the old ones, so the table's mixed origin stays visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from safeclf.errors import DataError, SpecError


def check_run_folder(run_dir: Path) -> dict[str, Any]:
    """The manifest of ``run_dir`` if it is a run folder; raises SpecError otherwise, also
    when anything in it is a symlink to a place outside it (:func:`safeclf._utils.paths.links_out`:
    a ``results``, ``models`` or ``plots`` folder, or a record, that leads out)."""
    from safeclf._utils.paths import links_out
    from safeclf.store.read import read_manifest

    where = f"--resume: '{run_dir}'"
    if not run_dir.is_dir():
        raise SpecError(f"{where} is not a folder" if run_dir.exists() else f"{where} does not exist")
    missing = [name for name in ("spec.yaml", "manifest.json") if not (run_dir / name).is_file()]
    if missing:
        raise SpecError(f"{where} is not a run folder (no {' or '.join(missing)}); nothing was "
                        "written to it")
    links_out(run_dir, "--resume:")  # a record read or a plot drawn through it would leave
    manifest = read_manifest(run_dir, where=where)
    results = run_dir / "results"
    if not results.is_dir():
        what = "is not a folder" if results.exists() else "is missing"
        raise SpecError(f"{where} is not a run folder (its 'results' {what}); nothing was "
                        "written to it")
    return manifest


def changed_data(recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The data files in the manifest's ``recorded`` list whose identity differs now: each
    entry the recorded one plus ``now`` (the current SHA-256, or ``None`` when the file cannot
    be read or is not a regular file)."""
    from safeclf.store.folder import file_identity

    changes = []
    for entry in recorded:
        path = Path(entry["path"])
        try:  # a manifest is data: a device or a FIFO it names is not read (it would not end)
            now = file_identity(path) if path.is_file() else None
        except OSError:
            now = None
        if now is None or now["sha256"] != entry.get("sha256"):
            changes.append(dict(entry, now=None if now is None else now["sha256"]))
    return changes


def check_same_data(manifest: dict[str, Any], run_dir: Path, allow: bool) -> list[dict]:
    """Raise DataError when a data file of the run changed (unless ``allow``); return the
    changes (empty when none)."""
    recorded = manifest.get("data")
    if not isinstance(recorded, list) or not all(
            isinstance(e, dict) and isinstance(e.get("path"), str) for e in recorded):
        raise SpecError(f"--resume: '{run_dir}': its manifest.json does not record the run's "
                        "data files; nothing was written to it")
    changes = changed_data(recorded)
    if changes and not allow:
        first = changes[0]
        how = "can no longer be read" if first["now"] is None else (
            f"changed since the run started (SHA-256 {str(first.get('sha256'))[:12]}… then, "
            f"{first['now'][:12]}… now)")
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        raise DataError(f"--resume: data file '{first['path']}' of dataset "
                        f"'{first.get('dataset')}' {how}{more}; the remaining jobs would not see "
                        "the data the finished ones saw. Start a new run, or pass "
                        "--allow-changed-data to finish this one on the new data")
    return changes


def reusable_records(run_dir: Path, manifest: dict[str, Any]) -> dict[str, str] | None:
    """``{job id: record text}`` of the records ``--resume`` may reuse: ``spec.yaml`` must be
    the spec the manifest lists (SHA-256) and every record in ``results/`` one the run listed
    (:func:`safeclf.store.records.run_records`, ``final=False``); else a :class:`SpecError`
    naming the file and the fix, before anything is written. ``None`` for a folder written by
    a safeclf that kept no digests (nothing to check against: its records are read as before).
    """
    from safeclf._utils.paths import inside
    from safeclf.store.folder import text_sha256
    from safeclf.store.records import keeps_digests, run_records

    if not keeps_digests(manifest):
        return None
    spec_file = inside(run_dir, "spec.yaml", what="--resume:")
    if text_sha256(spec_file.read_bytes()) != manifest["spec_sha256"]:
        raise SpecError(f"--resume: '{spec_file}' is not the spec its manifest lists (SHA-256 "
                        "differs): the stored spec was edited after the run; start a new run "
                        "(nothing was written)")
    raw = run_records(run_dir, manifest, "--resume:", final=False,
                      fix="start a new run (nothing was written)")
    out = {}
    for job_id, data in raw.items():
        try:
            out[job_id] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SpecError(f"--resume: record 'results/{job_id}.json' is not UTF-8 text; "
                            "remove it to run that job again") from None
    return out

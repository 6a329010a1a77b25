"""Which job records of a run folder are the run's own: the one check of ``results/<id>.json``
against the digests the run listed when it wrote them.

A run lists the SHA-256 of every record it writes twice over: in ``records.sha256`` (one line
``<sha256>  results/<id>.json`` appended, and flushed, as each record is written, so a run
killed at any moment lists what it wrote; a job run again on ``--resume`` gets a later line)
and, once the run is finished, in ``manifest.json``'s ``records`` (``{job id: sha256}``, the
final list). A record file is the run's own when its SHA-256 is one listed for its job id.

Two uses, two rules (:func:`run_records`):

* ``--resume`` (``final=False``) reuses a record only if it is listed in either, and refuses the
  folder (one line naming the file and the fix, nothing written) when a ``*.json`` file in
  ``results/`` is not listed or listed with another SHA-256 (added, edited or swapped), is a
  symlink or not a regular file, or when a listed record is missing (removed).
* The readers of a finished run (``verify``, ``deploy``, ``predict`` and :func:`safeclf.load_model`
  on a run folder, :meth:`safeclf.Run.model`) take only the manifest's final list: a record
  file it does not list, or lists with another SHA-256, is refused, never read.

Files of ``results/`` that are not ``*.json`` (the temporary ``.<id>.json.<pid>.<n>.tmp`` file a
killed run may leave, anything else put there) are ignored: nothing reads them.

What the digests prove: the records are the bytes the run wrote, unless whoever changed them
also rewrote the manifest and ``records.sha256`` (a digest is not a signature). A run folder
written by a safeclf that kept no digests (its manifest has no ``spec_sha256``) cannot be
checked: ``--resume`` finishes it as before and says so in the manifest's ``resumed`` entry
(``records_checked: false``); the readers refuse it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from safeclf.errors import SpecError

#: The run folder's list of record digests, appended as each record is written.
JOURNAL = "records.sha256"


def journal_line(job_id: str, digest: str) -> str:
    """The line of :data:`JOURNAL` for the record of ``job_id`` with SHA-256 ``digest``."""
    return f"{digest}  results/{job_id}.json\n"


def journal(run_dir: Path, what: str = "--resume:") -> dict[str, set[str]]:
    """``{job id: {sha256, ...}}`` from the folder's :data:`JOURNAL` (empty when it has none);
    a line that is not ``<64 hex>  results/<id>.json`` is skipped (it lists nothing)."""
    from safeclf._utils.paths import inside

    file = inside(run_dir, JOURNAL, what=what)
    out: dict[str, set[str]] = {}
    if not file.is_file():
        return out
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise SpecError(f"{what} '{file}' cannot be read (damaged); the records it lists "
                        "cannot be checked: start a new run") from None
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) == 64 and name.startswith("results/") and name.endswith(".json"):
            out.setdefault(name[len("results/"):-len(".json")], set()).add(digest)
    return out


def keeps_digests(manifest: dict) -> bool:
    """Whether the run that wrote ``manifest`` listed its spec and records (a safeclf from
    issue 36 on: the manifest has ``spec_sha256``)."""
    return isinstance(manifest.get("spec_sha256"), str)


def _files(folder: Path) -> dict[str, os.DirEntry]:
    """``{job id: entry}`` of the ``*.json`` entries of ``results/`` (none when missing)."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SpecError(f"'{folder}' cannot be listed: {exc.strerror}") from None
    return {e.name[:-len(".json")]: e for e in entries
            if e.name.endswith(".json") and not e.name.startswith(".")}


def run_records(run_dir: Path, manifest: dict, what: str, final: bool = True,
                fix: str = "", error: type[Exception] = SpecError) -> dict[str, bytes]:
    """``{job id: record bytes}`` of every record in ``results/``, each one its run listed.

    Parameters
    ----------
    run_dir : Path
        The run folder.
    manifest : dict
        Its ``manifest.json`` (:func:`safeclf.store.read.read_manifest`).
    what : str
        Heads each message (``"--resume:"``, ``"deploy:"``).
    final : bool
        ``True``: only the manifest's final ``records`` count (a finished run's readers).
        ``False`` (``--resume``): the manifest's and :data:`JOURNAL`'s, any digest listed for
        the job.
    error : type
        The exception raised (``verify`` and ``deploy`` raise
        :class:`~safeclf.errors.CertificateError`).
    fix : str
        The other way out, ending each refusal (``"start a new run"``: ``remove it, or start
        a new run``).

    Returns
    -------
    dict
        Job id to the record's bytes as read (read once: what is checked is what is used).

    Raises
    ------
    SpecError
        A ``*.json`` file of ``results/`` that is not listed with its SHA-256, a symlink or not
        a regular file; a listed record that is missing; (``final``) a manifest that lists no
        records. The message names the file.
    """
    from safeclf._utils.paths import inside
    from safeclf.store.folder import text_sha256

    tail = f", or {fix}" if fix else ""
    recorded = manifest.get("records")
    if recorded is not None and not (isinstance(recorded, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in recorded.items())):
        raise error(f"{what} '{run_dir}': its manifest's records are not a list of SHA-256 "
                    f"(damaged or edited){'; ' + fix if fix else ''}")
    if final and recorded is None:
        raise error(f"{what} '{run_dir}': its manifest lists no records (an unfinished run, a "
                    "run made by an earlier safeclf, or an edited manifest); finish it with "
                    "--resume first")
    listed: dict[str, set[str]] = {k: {v} for k, v in (recorded or {}).items()}
    if not final:
        for job_id, digests in journal(run_dir, what).items():
            listed.setdefault(job_id, set()).update(digests)
    folder = inside(run_dir, "results", what=what)
    out: dict[str, bytes] = {}
    for job_id, entry in sorted(_files(folder).items()):
        name = f"results/{entry.name}"
        if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            kind = "a symlink" if entry.is_symlink() else "not a regular file"
            raise error(f"{what} record '{name}' is {kind}; a run writes its records as "
                        f"files: remove it{tail}")
        if job_id not in listed:
            where = "the run's manifest" + ("" if final else f" or {JOURNAL}")
            raise error(f"{what} record '{name}' is not listed in {where} (not one the run "
                        f"wrote): remove it{tail}")
        try:
            with open(inside(run_dir, "results", entry.name, what=what), "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise OSError(0, "not a regular file")
                raw = fh.read()
        except OSError as exc:
            raise error(f"{what} record '{name}' cannot be read: "
                        f"{exc.strerror or exc}; remove it{tail}") from None
        if text_sha256(raw) not in listed[job_id]:
            again = " to run that job again" if not final else ""
            raise error(f"{what} record '{name}' differs from the SHA-256 the run listed for "
                        f"it (edited or swapped after the run wrote it): remove it{again}"
                        f"{tail}")
        out[job_id] = raw
    gone = sorted(set(listed) - set(out))
    if gone:
        raise error(f"{what} record 'results/{gone[0]}.json', which the run wrote and listed, "
                    f"is missing (removed after the run): restore it{tail}")
    return out


def listed_record(run_dir: Path, manifest: dict, job: str, what: str = "--job:",
                  error: type[Exception] = SpecError) -> dict:
    """The record of ``job`` if the manifest's final ``records`` list it and the file is the
    one listed (SHA-256); read once, inside the folder. Other records are not read: one
    dropped into ``results/`` by someone else is ignored by a reader of one job (``verify``
    and ``deploy``, which read them all, refuse it: :func:`run_records`)."""
    import json

    from safeclf._utils.paths import inside, plain_name
    from safeclf.store.folder import text_sha256

    plain_name(job, run_dir, what)
    recorded = manifest.get("records")
    if not keeps_digests(manifest) or not isinstance(recorded, dict):
        raise error(f"{what} '{run_dir}': its manifest lists no records (an unfinished run, a run "
                    "made by an earlier safeclf, or an edited manifest), so no job's files can "
                    f"be checked; give the model file itself (models/{job}.skops) to use it "
                    "anyway")
    if job not in recorded:
        raise error(f"{what} job '{job}' is not one the run's manifest lists "
                    f"({len(recorded)} job(s) listed)")
    name = f"results/{job}.json"
    file = inside(run_dir, "results", f"{job}.json", what=what)
    try:
        if not file.is_file() or file.is_symlink():
            raise OSError(0, "missing, a symlink or not a regular file")
        raw = file.read_bytes()
    except OSError as exc:
        raise error(f"{what} record '{name}' listed in the run's manifest cannot be read "
                    f"({exc.strerror or exc})") from None
    if text_sha256(raw) != recorded[job]:
        raise error(f"{what} record '{name}' differs from the SHA-256 the run's manifest lists "
                    "for it (edited or swapped after the run)")
    try:
        record = json.loads(raw)
    except ValueError:
        record = None
    if not isinstance(record, dict) or record.get("id") != job:
        raise error(f"{what} record '{name}' is not the record of job '{job}'")
    return record


def listed_model(run_dir: Path, manifest: dict, job: str,
                 what: str = "--job:") -> tuple[Path, Path]:
    """``models/<job>.skops`` and ``models/<job>.json`` of a finished run folder (whose
    ``manifest`` is given: :func:`safeclf.store.read.read_manifest`), only when
    they are the files the job's manifest-listed record (:func:`listed_record`) names by
    SHA-256 (its ``model`` entry): a model or metadata file swapped, edited (feature names
    reordered) or dropped in for a job the manifest does not list is refused with one line,
    never loaded. A job with no saved model is a :class:`SpecError` saying so."""
    from safeclf.store.models import model_paths

    path, meta_path = model_paths(run_dir, job, what)
    record = listed_record(run_dir, manifest, job, what)
    if not path.is_file() and not record.get("model"):
        raise SpecError(f"{what} no saved model for job '{job}' in '{run_dir}' (set save_models: "
                        "true in the spec)")
    check_model_files(record, path, meta_path, what)
    return path, meta_path


def check_model_files(record: dict, path: Path, meta_path: Path, what: str,
                      error: type[Exception] = SpecError) -> None:
    """Raise ``error`` unless the model file ``path`` and its metadata ``meta_path`` are the
    files whose SHA-256 the job's ``record`` lists (its ``model`` entry)."""
    from safeclf.store.models import sha256_of

    job = record.get("id")
    digests = record.get("model")
    if not isinstance(digests, dict):
        raise error(f"{what} the record of job '{job}' lists no SHA-256 of its model files "
                    "(the job saved no model, or the run was made by an earlier safeclf); give "
                    f"the model file itself (models/{job}.skops) to use it anyway")
    for file, key in ((path, "skops"), (meta_path, "json")):
        if not file.is_file():
            raise error(f"{what} 'models/{file.name}' of job '{job}' is missing (removed after "
                        "the run)")
        if sha256_of(file) != digests.get(key):
            raise error(f"{what} 'models/{file.name}' is not the file job '{job}' saved (its "
                        "SHA-256 differs from the one its record lists: edited or swapped after "
                        "the run)")

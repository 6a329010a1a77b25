"""``safeclf verify RUN [--job ID]``: re-check the certificates of a run folder (or of a folder
written by ``safeclf deploy``) from the data and the stored model.

A certificate records what it rests on (:mod:`safeclf.guarantees.certify.evidence`). For each
certified job that returned a model, :func:`verify` checks, in order, and refuses with one
line (:class:`~safeclf.errors.CertificateError`, exit code 2) at the first that fails:

1. the folder: every file read stays inside it; ``spec.yaml`` is the spec its manifest lists
   (SHA-256); every record in ``results/`` is one the manifest lists, with the SHA-256 it
   lists; the job's record, the model's metadata and the spec name the same job, dataset and
   method entry;
2. the data: each data file the certificate names is one the manifest lists for the job's
   dataset (none left out), with the SHA-256 it lists, and its content now has that SHA-256;
3. the model: the model file's SHA-256 is the one the certificate was made for, and the
   certificate in its metadata is the record's;
4. the test: the data is loaded, split and preprocessed as the job did
   (:mod:`safeclf.execution.job`), the held-back rows are re-drawn from the seed (their
   positions must hash to the recorded SHA-256), each promise's events are counted under the
   stored model's predictions and the test is re-run by the certification code itself
   (:func:`safeclf.guarantees.certify.recheck`); the counts, limits or p-values, the rule and
   the verdict must be those recorded, and the verdict a pass.

What this proves: the certificate re-checks on the stated data with the stored model. What it
does not: who ran it, or that the held-back rows were not looked at before the test (a model
chosen on them would re-check and still carry no guarantee). See ``docs/verify.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safeclf.errors import CertificateError, SafeclfError, SpecError


@dataclass
class Verified:
    """One certificate that re-checks: its job, method, seed and evidence."""

    job: str
    method: str
    seed: int
    evidence: dict[str, Any]

    def line(self) -> str:
        """What ``safeclf verify`` prints for it."""
        ev = self.evidence
        parts = []
        for name, row in (ev.get("statistic") or {}).items():
            counts = f"{row['k']}/{row['n']}" + (
                f" vs {row['k2']}/{row['n2']}" if row.get("n2") else "")
            value = (f"limit {row['limit']:.4g} {row['sense']} {row['bound']:g}"
                     if "limit" in row else f"p = {row['p_value']:.3g} ≤ δ {ev['delta']:g}")
            parts.append(f"{name} {counts}, {value}")
        return (f"job {self.job} ({self.method}, seed {self.seed}): certificate re-checks on "
                f"{ev['held_back']['n']} held-back rows ({ev['route']}, {ev.get('bound')}): "
                + "; ".join(parts))


def _refuse(message: str):
    raise CertificateError(message)


def is_deployed(path: Path) -> bool:
    """Whether ``path`` is a folder written by ``safeclf deploy`` (``model.json`` and no run
    manifest)."""
    return (path / "model.json").is_file() and not (path / "manifest.json").exists()


def verify(path: str | Path, job: str | None = None) -> list[Verified]:
    """Re-check every certificate of the run folder (or deployed folder) ``path``, or that
    of ``job``; see the module docstring.

    Returns
    -------
    list of Verified
        One per certificate re-checked.

    Raises
    ------
    CertificateError
        A certificate, its model, data or records do not re-check (one line: which and why).
    SpecError
        ``path`` is not a run folder or a deployed model's folder, or ``job`` is not one of
        its certified jobs.
    """
    from safeclf._utils.paths import links_out, what_is

    path = Path(path)
    kind = what_is(path)
    if kind != "a folder":
        raise SpecError(f"verify: '{path}' is not a run folder "
                        f"({'it does not exist' if kind == 'missing' else 'it is ' + kind})")
    links_out(path, "verify:")
    if is_deployed(path):
        if job is not None:
            raise SpecError("verify: --job is for a run folder; a deployed folder holds one "
                            "model")
        return [verify_deployed(path)]
    return verify_run(path, job)


# -- a run folder ------------------------------------------------------------------------------
def listed_run(run_dir: Path, what: str = "verify:"):
    """``(spec, manifest, records)`` of a run folder whose spec and records are the ones its
    manifest lists (SHA-256), each file read inside the folder; ``records`` maps job id to the
    record. Refuses (:class:`CertificateError`) a spec or record the manifest does not list
    or lists with another SHA-256 (:func:`safeclf.store.records.run_records`: a record file
    dropped into ``results/`` is refused, never read)."""
    from safeclf._utils.paths import inside
    from safeclf.spec.check import parse
    from safeclf.spec.yaml import parse_yaml
    from safeclf.store.folder import text_sha256
    from safeclf.store.read import read_manifest
    from safeclf.store.records import run_records

    manifest = read_manifest(run_dir, where=f"{what} '{run_dir}'")
    spec_file = inside(run_dir, "spec.yaml", what=what)
    if not spec_file.is_file():
        raise SpecError(f"{what} '{run_dir}' is not a run folder (no spec.yaml)")
    data = spec_file.read_bytes()
    if not isinstance(manifest.get("spec_sha256"), str):
        _refuse(f"{what} '{run_dir}': its manifest lists no SHA-256 of spec.yaml (a run made "
                "by an earlier safeclf, or an edited manifest); nothing can be checked against it")
    if text_sha256(data) != manifest["spec_sha256"]:
        _refuse(f"{what} '{spec_file}' is not the spec its manifest lists (SHA-256 differs): "
                "the stored spec was edited after the run")
    try:
        spec = parse(parse_yaml(data.decode("utf-8"), "spec.yaml"))
    except (SpecError, UnicodeDecodeError) as exc:
        raise SpecError(f"{what} '{spec_file}' is not a spec this safeclf reads: {exc}") from None
    records = {}
    for job_id, raw in run_records(run_dir, manifest, what, error=CertificateError).items():
        try:
            records[job_id] = json.loads(raw)
        except ValueError:
            _refuse(f"{what} record 'results/{job_id}.json' is not JSON")
    from safeclf.spec.expand import expand

    ids = {j.id for j in expand(spec)}
    foreign = sorted(set(records) - ids)
    if foreign:
        _refuse(f"{what} record 'results/{foreign[0]}.json' is not a job of the run's "
                "spec.yaml (the spec was edited after the run)")
    return spec, manifest, records


def certified_payloads(spec, run_dir: Path | None = None) -> dict[str, dict]:
    """``{job id: payload}`` of the spec's jobs whose method entry is certified (the payloads
    the runner sends: :func:`safeclf.execution.runner.payloads`)."""
    from safeclf.execution.runner import payloads
    from safeclf.spec.expand import expand

    jobs = [j for j in expand(spec) if spec.methods[j.method_index].certify is not None]
    return {p["job"]["id"]: p for p in payloads(spec, jobs, run_dir)}


def verify_run(run_dir: Path, job: str | None = None, what: str = "verify:") -> list[Verified]:
    """:func:`verify` for a run folder."""
    spec, manifest, records = listed_run(run_dir, what)
    wanted = certified_payloads(spec, run_dir)
    if job is not None:
        from safeclf._utils.paths import plain_name

        plain_name(job, run_dir, "--job:")
        if job not in wanted:
            raise SpecError(f"--job: '{job}' is not a certified job of the run "
                            f"({len(wanted)} certified job(s))")
        wanted = {job: wanted[job]}
    elif not wanted:
        raise SpecError(f"{what} '{run_dir}': the run has no certified method (no certify: on "
                        "a method entry); there is no certificate to verify")
    out = []
    for job_id, payload in wanted.items():
        record = records.get(job_id)
        if record is None:
            if job is not None:
                _refuse(f"{what} job '{job_id}' has no record in the run")
            continue  # not run yet (an unfinished run): no certificate claimed
        if record.get("status") != "ok":
            if job is not None:
                raise SpecError(f"--job: job '{job_id}' returned no certified model (status "
                                f"{record.get('status')!r}); there is no certificate to verify")
            continue
        out.append(verify_job(run_dir, payload, record, manifest, what))
    return out


def verify_job(run_dir: Path, payload: dict, record: dict, manifest: dict,
               what: str = "verify:") -> Verified:
    """Re-check the certificate of one job of a run folder whose spec and records the
    manifest lists (:func:`listed_run`)."""
    from safeclf.store import models

    job = payload["job"]
    where = f"{what} job '{job['id']}' ({job['method']}, seed {job['seed']})"
    for key in ("method", "seed", "fold", "params"):
        if not _same(record.get(key), job.get(key)):
            _refuse(f"{where}: its record's {key} {record.get(key)!r} is not the spec's "
                    f"{job.get(key)!r}")
    cert = record.get("certification")
    if not isinstance(cert, dict):
        _refuse(f"{where}: the record claims a certified model but holds no certificate")
    model_path, meta_path = models.model_paths(run_dir, job["id"], what)
    if not model_path.is_file():
        _refuse(f"{where}: no saved model (models/{job['id']}.skops), so its certificate cannot "
                "be re-checked; run the spec with save_model: true on the method")
    meta = models.read_meta(meta_path)
    if not _same(meta.get("certificate"), cert):
        _refuse(f"{where}: the certificate in models/{job['id']}.json is not the one its record "
                "holds")
    listed = [e for e in manifest.get("data") or [] if isinstance(e, dict)
              and e.get("dataset") == job["dataset"]]
    ev = _checked_evidence(cert, model_path, payload["dataset"], payload["method"], where)
    _check_data(ev, listed, where)
    return _recheck(ev, model_path, payload["dataset"], payload["method"], job, where)


# -- a deployed folder --------------------------------------------------------------------------
def verify_deployed(folder: Path, what: str = "verify:") -> Verified:
    """:func:`verify` for a folder written by ``safeclf deploy``: its ``model.json`` carries
    the certificate and its evidence (the dataset and method entries, the data's SHA-256)."""
    from safeclf._utils.paths import inside
    from safeclf.store import models

    meta = models.read_meta(inside(folder, "model.json", what=what))
    where = f"{what} '{folder}'"
    cert = meta.get("certificate")
    if not isinstance(cert, dict):
        raise SpecError(f"{where}: the deployed model is not certified (model.json has no "
                        "certificate); there is nothing to verify")
    model_path = inside(folder, models.DEPLOYED, what=what)
    ev = cert.get("evidence")
    if not isinstance(ev, dict) or not isinstance(ev.get("dataset"), dict) \
            or not isinstance(ev.get("method"), dict) or not isinstance(ev.get("job"), dict):
        _refuse(f"{where}: the certificate records no evidence (dataset, method and job "
                "entries); it cannot be re-checked")
    if not _same(meta.get("dataset"), ev["dataset"]):
        _refuse(f"{where}: model.json's dataset entry is not the one its certificate names")
    deployment = meta.get("deployment") if isinstance(meta.get("deployment"), dict) else {}
    ev = _checked_evidence(cert, model_path, ev["dataset"], ev["method"], where)
    _check_data(ev, [e for e in deployment.get("data") or [] if isinstance(e, dict)], where)
    job = {**ev["job"], "id": deployment.get("job") or "deployed",
           "method": deployment.get("method") or ev["method"].get("method")}
    return _recheck(ev, model_path, ev["dataset"], ev["method"], job, where)


# -- the checks both share ----------------------------------------------------------------------
def _same(a, b) -> bool:
    from safeclf.guarantees.certify.evidence import same

    return same(a, b)


def _checked_evidence(cert: dict, model_path: Path, dentry: dict, mentry: dict,
                      where: str) -> dict:
    """The certificate's evidence, checked against itself, the model file, the certificate's
    own claims and the job's dataset and method entries."""
    from safeclf.guarantees.certify.evidence import KEY, check_shape, claims
    from safeclf.store.models import sha256_of

    ev = cert.get(KEY)
    problem = check_shape(ev)
    if problem:
        _refuse(f"{where}: {problem}; the certificate cannot be re-checked")
    if sha256_of(model_path) != ev.get("model_sha256"):
        _refuse(f"{where}: the model file '{model_path.name}' is not the one its certificate was "
                "made for (SHA-256 differs)")
    wrong = claims(cert)
    if wrong:
        _refuse(f"{where}: the certificate's claims differ from its evidence ({wrong[0]})")
    if not _same(ev.get("dataset"), dentry):
        _refuse(f"{where}: the certificate's dataset entry is not the spec's")
    kept = {k: mentry.get(k) for k in ("method", "certify", "promises", "preprocess")}
    if not _same(ev.get("method"), kept):
        _refuse(f"{where}: the certificate's method entry is not the spec's (its method, "
                "certify options or promises were changed)")
    return ev


def _check_data(ev: dict, listed: list[dict], where: str) -> None:
    """Each data file of the evidence: listed (path and SHA-256), none listed left out, and
    its content now as listed."""
    from safeclf.store.folder import file_identity

    used = ev.get("data")
    if not isinstance(used, list) or not all(isinstance(e, dict) for e in used):
        _refuse(f"{where}: the certificate does not record its data files")
    pairs = {(e.get("path"), e.get("sha256")) for e in listed}
    for e in used:
        if (e.get("path"), e.get("sha256")) not in pairs:
            _refuse(f"{where}: data file '{e.get('path')}' of the certificate is not listed with "
                    "its SHA-256 in the run's manifest (the manifest's data entry was removed "
                    "or changed)")
    if len(pairs) != len({(e.get("path"), e.get("sha256")) for e in used}):
        _refuse(f"{where}: the run's manifest lists data files the certificate does not name")
    for e in used:
        path = Path(str(e["path"]))
        try:
            now = file_identity(path)["sha256"] if path.is_file() else None
        except OSError:
            now = None
        if now is None:
            _refuse(f"{where}: data file '{path}' can no longer be read; the certificate cannot "
                    "be re-checked without it")
        if now != e["sha256"]:
            _refuse(f"{where}: data file '{path}' changed since the certificate was made "
                    "(SHA-256 differs)")


def _recheck(ev: dict, model_path: Path, dentry: dict, mentry: dict, job: dict,
             where: str) -> Verified:
    """Load the data as the job did and re-run the test on the stored model."""
    from safeclf.execution.job import job_preprocess, load_dataset, preprocess, split_task
    from safeclf.guarantees.certify import recheck
    from safeclf.guarantees.certify.evidence import differences
    from safeclf.plugins import registry
    from safeclf.store import models

    pipeline = models.load(model_path)
    plugin = registry.get_method(mentry["method"])
    how = job_preprocess(dentry, mentry)
    try:
        task = split_task(load_dataset(dentry, how, cached=False), dentry, job["seed"],
                          job.get("fold"))
        task = preprocess(task, how)
        found = recheck(plugin, job["params"], task, mentry.get("certify"),
                        mentry.get("promises"), job["seed"], pipeline[-1])
    except SafeclfError as exc:
        _refuse(f"{where}: the test cannot be re-run on the stated data: {exc}")
    if found.get("problem"):
        _refuse(f"{where}: the certificate does not re-check: {found['problem']}")
    diff = differences(ev, found)
    if diff:
        more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
        _refuse(f"{where}: the certificate does not re-check: {diff[0]}{more}")
    if found.get("passed") is not True:
        _refuse(f"{where}: the certificate does not re-check: the test does not pass on the "
                "stated data")
    return Verified(str(job["id"]), str(job.get("method")), int(job["seed"]), ev)

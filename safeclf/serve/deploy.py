"""From a run to the one model to deploy: ``safeclf deploy RUN --method LABEL --out DIR``.

A run fits one model per seed on a part of the rows, to measure; a lender deploys one model.
:func:`deploy` writes it to ``DIR/model.skops`` with ``DIR/model.json`` (the metadata
``safeclf predict`` reads, plus a ``deployment`` record of where the model came from):

* an **uncertified** method is refitted on every row of its dataset (the ``calibration``
  share still held back when the method calibrates), with the parameters the run used and the
  run's ``preprocess`` step (imputation and scaling fitted on all rows). The run's held-out
  figures for those parameters are the evidence for it: they are copied into the record, and
  the refitted model has no test part of its own.
* a **certified** method (``certify`` on its entry) is *not* refitted: its promise holds with
  probability ≥ 1 − δ for the model the safety test passed, and a refit on other rows would be
  a model no test has seen: the certificate would be void. The deployed model is the run's own
  certified model, copied from ``models/<job>.skops`` (the run must have saved it): by default
  the job of the run's lowest seed, chosen before looking at any outcome — when that job
  returned no model, deploy refuses rather than take the next seed that passed (picking
  among the seeds that passed their safety tests covers the chosen model's promise only at
  1 − k·δ for k seeds, a union bound); or the job named with ``--job`` (named in advance,
  it keeps 1 − δ). ``chosen_by`` in the record says which.

A model the run flagged **degenerate** (:mod:`safeclf.guarantees.trivial`: it gives one class to almost
every test row, or is not better than the majority-class rule beyond noise; metrics.csv's
``degenerate``) is refused unless ``--allow-degenerate`` is given: for a certified method, the
job whose model would be copied; for a refit, when at least half of the parameter point's jobs
were flagged (the refit is the same method at the same parameters on more rows). An allowed one
is deployed with the reason in its record.

With several parameter points for the method (a grid), ``--job`` names the job whose parameters
to use. The record holds the run folder, job, parameters, seed and the SHA-256 of the data
file(s) the model was fitted on; a data file that changed since the run is refused (the run's
figures would not describe it).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safeclf.errors import SafeclfError, SpecError
from safeclf.store.models import DEPLOYED

#: Why a certified model is copied, not refitted (said in the output and the record).
NO_REFIT = ("certified: this is the model the run's safety test passed; refitting it on other "
            "rows would void its certificate")


@dataclass
class Deployed:
    """What :func:`deploy` wrote: the model file and its record."""

    path: Path
    record: dict[str, Any]
    #: whether ``safeclf predict`` reads new rows for it (a ``csv`` dataset's model)
    predictable: bool = True
    #: a certified model's certificate as re-checked before the copy (``safeclf verify``'s line)
    rechecked: str | None = None


def _choose(names: list[str], given: str | None, flag: str, what: str, whose: str = "") -> str:
    """``given`` among ``names`` (the only name when none is given); ``what`` names the kind
    (``method``), ``whose`` what they belong to (`` of method 'svm'``)."""
    if given is None:
        if len(names) == 1:
            return names[0]
        raise SpecError(f"{flag}: the run has {len(names)} {what}s{whose} ({', '.join(names)}); "
                        f"choose one with {flag}")
    if given not in names:
        from safeclf.errors import closest

        raise SpecError(f"{flag}: no {what}{whose} named '{given}' in the run "
                        f"({', '.join(names)}){closest(given, names)}")
    return given


def _check_out(out: Path, run_dir: Path) -> None:
    """``--out``: a new or empty folder, outside the run folder, that can be made and written
    (:func:`safeclf._utils.paths.writable_folder`: tried, so ``/proc/x`` is refused here)."""
    from safeclf._utils.paths import not_overwriting, what_is, writable_folder

    kind = what_is(out)
    if kind == "a folder" and any(Path(out).iterdir()):
        raise SpecError(f"--out '{out}' is a folder that is not empty; give a new folder "
                        "(nothing is overwritten)")
    if kind not in ("missing", "a folder"):
        raise SpecError(f"--out '{out}' is {kind}; give a folder to create")
    not_overwriting(out, "--out", folders={"the run folder": run_dir})
    writable_folder(out, "--out:", make_parents=False)


def _jobs(table, method: str, dataset: str, job: str | None):
    """The rows of ``table`` for (dataset, method) at one parameter point."""
    rows = table[(table["method"] == method) & (table["dataset"] == dataset)]
    if job is not None:
        chosen = rows[rows["job"] == job]
        if chosen.empty:
            raise SpecError(f"--job: no job '{job}' of method '{method}' on dataset "
                            f"'{dataset}' in the run")
        return rows[rows["params"] == chosen["params"].iloc[0]]
    points = dict(zip(rows["params"], rows["job"]))
    if len(points) > 1:
        said = [f"{p} (job {j})" for p, j in list(points.items())[:4]]
        raise SpecError(f"--method '{method}' ran at {len(points)} parameter points "
                        f"({'; '.join(said)}{'; ...' if len(points) > 4 else ''}); choose one "
                        "with --job (any job of that point)")
    return rows


def _data_identity(manifest: dict, dataset: str) -> list[dict]:
    """The run's data files of ``dataset``, checked against their content now."""
    from safeclf.store.folder import file_identity

    out = []
    for recorded in manifest.get("data") or []:
        if recorded.get("dataset") != dataset:
            continue
        path = Path(recorded["path"])
        if not path.is_file():
            raise SpecError(f"data file '{path}' of dataset '{dataset}' is gone; the model "
                            "cannot be fitted on the run's data")
        now = file_identity(path)
        if now["sha256"] != recorded.get("sha256"):
            raise SpecError(f"data file '{path}' of dataset '{dataset}' changed since the run "
                            "(SHA-256 differs); the run's figures do not describe a model "
                            "fitted on it: run the spec again, then deploy")
        out.append(now)
    return out


def _evidence(rows) -> dict[str, Any]:
    """The run's held-out figures for the chosen point: mean of each test column."""
    ok = rows[rows["status"] == "ok"]
    cols = [c for c in ok.columns if c.startswith("test_")]
    return {"jobs": list(rows["job"]), "ok": int(len(ok)),
            "test_means": {c: float(ok[c].mean()) for c in cols if ok[c].notna().any()}}


def deploy(run_dir: Path, method: str | None, out: Path, dataset: str | None = None,
           job: str | None = None, allow_degenerate: bool = False) -> Deployed:
    """Write the model to deploy for ``method`` of ``run_dir`` into folder ``out``.

    Parameters
    ----------
    run_dir : Path
        A finished run folder.
    method : str or None
        The method's label in the run (its ``name``, else its plugin name); may be left out
        when the run has one method.
    out : Path
        A new (or empty) folder: receives ``model.skops`` and ``model.json``.
    dataset : str, optional
        The dataset's label; needed when the method ran on several.
    job : str, optional
        A job of the parameter point to use (needed for a grid); for a certified method, the
        job whose certified model to deploy.
    allow_degenerate : bool
        Deploy a model the run flagged degenerate (refused otherwise).

    Returns
    -------
    Deployed
        The model's path and its ``deployment`` record.
    """
    from safeclf.serve.verify import listed_run
    from safeclf.spec.check import parse
    from safeclf.store.read import load_tables as load_run

    run_dir = Path(run_dir)
    _check_out(Path(out), run_dir)
    spec_data, manifest, table = load_run(run_dir)
    try:
        spec = parse(spec_data)
    except SpecError as exc:
        raise SpecError(f"'{run_dir / 'spec.yaml'}' is not a spec this safeclf reads: "
                        f"{exc}") from None
    # the spec and records are the ones the manifest lists (an edited folder is refused)
    _, manifest, records = listed_run(run_dir, "deploy:")
    _table_is_records(table, records, run_dir)
    labels = [spec.method_label(j) for j in range(len(spec.methods))]
    method = _choose(labels, method, "--method", "method")
    m = labels.index(method)
    on = [spec.dataset_label(i) for i in range(len(spec.datasets)) if spec.runs_on(m, i)]
    dataset = _choose(on, dataset, "--dataset", "dataset", f" of method '{method}'")
    d = [spec.dataset_label(i) for i in range(len(spec.datasets))].index(dataset)
    rows = _jobs(table, method, dataset, job)
    record = {"from_run": str(run_dir.resolve()), "method": method, "dataset": dataset,
              "params": json.loads(rows["params"].iloc[0]),
              "data": _data_identity(manifest, dataset), "evidence": _evidence(rows)}
    out = Path(out)
    if spec.methods[m].certify is None:
        record["degenerate"] = _degenerate(rows, None, allow_degenerate)
    with _claiming(out) as stage:
        if spec.methods[m].certify is not None:
            done = _copy_certified(run_dir, rows, job, stage, record, allow_degenerate,
                                   (spec, manifest, records))
        else:
            done = _refit(spec, d, m, rows, job, stage, record)
    return Deployed(out / DEPLOYED, done.record, done.predictable, done.rechecked)


@contextmanager
def _claiming(out: Path):
    """A new staging folder beside ``out`` to write the deployment into, renamed to ``out`` at
    the end in one step. The rename fails when ``out`` is by then a folder that is not empty
    (another deploy finished into it first): that deploy is refused whole, and two deploys
    into one folder cannot interleave their files. The staging folder is removed whatever
    happens."""
    import errno
    import os
    import shutil
    import tempfile

    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".deploying", dir=out.parent))
    try:
        yield stage
        try:
            os.rename(stage, out)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                raise
            raise SpecError(f"--out '{out}' was written by another deploy while this one ran; "
                            "nothing of this one was kept (give a new folder)") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _degenerate(rows, job: str | None, allow: bool) -> str | None:
    """Why the model to deploy is degenerate by the run's evidence (None when it is not, or
    the run predates the column): job ``job``'s flag, or (``job`` None: a refit) the flags of
    the point's jobs with a model, at least half of them set. Raises :class:`SpecError`
    naming the reason and the flag unless ``allow``."""
    if "degenerate" not in rows:
        return None
    ok = rows[rows["status"] == "ok"]
    flags = ok["degenerate"].fillna(0).astype(float) > 0
    reasons = ok.get("degenerate_reason")
    if job is not None:
        hit = ok[(ok["job"] == job) & flags]
        if hit.empty:
            return None
    elif not len(ok) or 2 * int(flags.sum()) < len(ok):
        return None
    else:
        hit = ok[flags]
    seed = int(hit["seed"].iloc[0])
    reason = "" if reasons is None else hit["degenerate_reason"].iloc[0]
    reason = f": {reason}" if isinstance(reason, str) and reason else ""
    if job is not None:
        text = f"the model of job {job} (seed {seed}) is degenerate{reason}"
        then = "it does no better than predicting the training majority for everyone"
    else:
        text = (f"the method's model was degenerate on {int(flags.sum())}/{len(ok)} seeds of "
                f"the run (seed {seed}{reason})")
        then = "a refit on all rows is expected to be degenerate too"
    if not allow:
        raise SpecError(f"{text}; {then}: deploy it anyway with --allow-degenerate")
    return text


def _table_is_records(table, records: dict, run_dir: Path) -> None:
    """The metrics table says what the manifest-listed records say: the same jobs, each with
    its method, dataset, seed and status (deploy chooses from the table)."""
    from safeclf._utils.paths import plain_name

    for row in table.itertuples(index=False):
        plain_name(str(row.job), run_dir, "metrics.csv: job")
        rec = records.get(str(row.job))
        said = None if rec is None else (rec.get("method"), rec.get("dataset"), rec.get("seed"),
                                          rec.get("status"), rec.get("params"))
        if said is None or said != (row.method, row.dataset, int(row.seed), row.status,
                                    json.loads(row.params)):
            raise SpecError(f"deploy: the metrics table's row of job '{row.job}' is not what "
                            "the run's records (listed in its manifest) say; the run folder "
                            "was edited")


def _copy_certified(run_dir: Path, rows, job: str | None, out: Path, record,
                    allow_degenerate: bool = False, listed=None) -> Deployed:
    from safeclf.store import models
    from safeclf.store.folder import atomic_write

    solved = rows[rows["status"] == "ok"]  # narrowed below to the one job deployed
    if job is not None:
        solved = solved[solved["job"] == job]
        if solved.empty:
            raise SpecError(f"--job: job '{job}' has no certified model (its status: "
                            f"{rows.loc[rows['job'] == job, 'status'].iloc[0]})")
    if solved.empty:
        raise SpecError(f"no job of method '{record['method']}' found a solution "
                        f"({len(rows)} jobs, none certified); there is no certified model to "
                        "deploy")
    if job is None:
        # the first seed's job, whatever it returned: a choice made before any outcome
        first = rows.sort_values(["seed", "job"]).iloc[0]
        if first["status"] != "ok":
            raise SpecError(
                f"the run's first seed ({int(first['seed'])}, job '{first['job']}') returned no "
                f"certified model ({first['status']}); deploy does not take the next seed that "
                f"passed ({len(solved)} of {len(rows)} did): choosing among the seeds that "
                "passed their safety tests covers the promise only at 1 − k·δ for k seeds. "
                "Name a job with --job if you chose it in advance, or certify with more rows")
        solved = solved[solved["job"] == first["job"]]
    saved = [j for j in solved["job"]
             if models.model_paths(run_dir, j, "metrics.csv: job")[0].is_file()]
    if not saved:
        raise SpecError(f"the run saved no model of method '{record['method']}'; a certified "
                        "model cannot be refitted (that would void its certificate): run the "
                        "spec again with save_model: true on the method")
    chosen = saved[0]
    record["degenerate"] = _degenerate(rows, chosen, allow_degenerate)
    from safeclf.serve.verify import certified_payloads, verify_job
    from safeclf.store.records import listed_model

    spec, manifest, records = listed
    path, meta_path = models.model_paths(run_dir, chosen, "metrics.csv: job")
    payload = certified_payloads(spec, run_dir).get(chosen)
    if payload is None:
        raise SpecError(f"deploy: job '{chosen}' is not a certified job of the run's spec")
    # the certificate re-checks on the stated data before anything is written
    verified = verify_job(run_dir, payload, records[chosen], manifest, "deploy:")
    # and its files are the ones its manifest-listed record names (feature names in the
    # metadata, which the certificate does not cover, swapped or reordered: refused)
    listed_model(run_dir, manifest, chosen, "deploy:")
    meta = models.read_meta(meta_path)
    models.load(path)  # checked as predict checks it before it is copied
    seed = int(solved.loc[solved["job"] == chosen, "seed"].iloc[0])
    cert = meta.get("certificate") or {}
    chosen_by = ("named with --job" if job is not None else
                 f"the run's first seed, chosen before any outcome ({len(rows)} jobs)")
    record.update(job=chosen, seed=seed, chosen_by=chosen_by, refit=False, why=NO_REFIT,
                  certificate=cert or None,
                  reads_group=cert.get("reads_group") or _reads_group_unknown(cert))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / DEPLOYED, path.read_bytes())
    meta["deployment"] = record
    atomic_write((out / DEPLOYED).with_suffix(".json"),
                 json.dumps(meta, indent=2, default=str) + "\n")
    return Deployed(out / DEPLOYED, record, meta["dataset"].get("dataset") == "csv",
                    verified.line())


def _reads_group_unknown(cert: dict) -> str:
    if cert.get("how") == "threshold":
        return "not recorded (certified by an earlier safeclf): see the certificate's rule"
    return "not recorded: certified in training, the model's features decide"


def _reads_group(task) -> str:
    """Whether a refitted model's decision can read the group: through feature columns that
    encode it (:func:`safeclf.guarantees.group_encoding.encodes_group`)."""
    from safeclf.guarantees.group_encoding import encodes_group

    rows = task.train.rows
    if "groups" not in rows:
        return "no group in the data"
    if encodes_group(task.train.X, rows, task.info.get("group_columns")):
        return "yes: the model's features include the group's columns"
    return "no: no feature column encodes the group"


def _refit(spec, d: int, m: int, rows, job: str | None, out: Path, record) -> Deployed:
    from safeclf.data.preprocessing import steps
    from safeclf.execution.job import all_rows_task, job_preprocess, load_dataset, model_meta, preprocess
    from safeclf.execution.runner import payloads
    from safeclf.plugins import registry
    from safeclf.spec.expand import expand
    from safeclf.store import models

    jobs = [j for j in expand(spec) if j.dataset_index == d and j.method_index == m]
    chosen = job if job is not None else \
        str(rows.sort_values("seed")["job"].iloc[0])
    payload = next((p for p in payloads(spec, jobs) if p["job"]["id"] == chosen), None)
    if payload is None:  # the table and the stored spec disagree
        raise SpecError(f"job '{chosen}' of the metrics table is not a job of the run's "
                        "spec.yaml; the run folder was edited")
    dentry, mentry, params = payload["dataset"], payload["method"], payload["job"]["params"]
    seed = payload["job"]["seed"]
    how = job_preprocess(dentry, mentry)
    plugin = registry.get_method(mentry["method"])
    task = preprocess(all_rows_task(load_dataset(dentry, how), dentry, seed), how)
    plugin.check_task(params, task, steps(how)[1])
    est = plugin.build(params, random_state=seed)
    try:
        est = plugin.fit(est, task) or est
    except SafeclfError as exc:
        raise type(exc)(f"refitting method '{record['method']}' on all rows of "
                        f"'{record['dataset']}': {exc}") from None
    record.update(job=chosen, seed=seed, refit=True, reads_group=_reads_group(task),
                  why="refitted on all rows with the parameters and preprocessing of the run",
                  rows={name: len(part) for name, part in task.parts().items()
                        if name != "test"})
    out.mkdir(parents=True, exist_ok=True)
    meta = model_meta(est, task, dentry, dict(payload["job"], id=None), how)
    models.save(out / DEPLOYED, est, task.preprocessor, {**meta, "deployment": record})
    return Deployed(out / DEPLOYED, record, dentry["dataset"] == "csv")

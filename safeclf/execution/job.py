"""One job, start to end: load the dataset, split it, preprocess, fit, predict, measure.

``run_job`` is what the runner sends to worker processes. It never raises for a problem in
the job itself: the result records ``status: failed`` and the one-line error, so one failing
job does not stop the others.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
import traceback
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from safeclf._utils.blas import job_threads
from safeclf.data.task import Dataset, Task
from safeclf.errors import DataError, SafeclfError
from safeclf.methods._solvers import status as solver_status
from safeclf.store.result import JobResult, JobStatus, check_metric_names


@lru_cache(maxsize=8)
def _load_cached(name: str, params_json: str) -> Dataset:
    from safeclf.plugins import registry

    return annotate(registry.get_dataset(name).load(**json.loads(params_json)))


def annotate(ds: Dataset) -> Dataset:
    """What every job reads from the whole dataset, settled once when it is loaded (before any
    split): the favourable outcome of labels whose loader declares none (0/1 or booleans,
    :func:`safeclf.guarantees.outcome.implicit`) and the reference group of each group column, chosen on
    all the rows (:func:`safeclf.guarantees.groups.references`), so every job and seed compares groups
    in the same direction."""
    from safeclf.guarantees import groups as G
    from safeclf.guarantees import outcome

    info = dict(ds.info)
    if outcome.of(info) is None:
        found = outcome.implicit(ds.y, info.get("target") or "label")
        if found is not None:
            info[outcome.KEY] = found
    classes = np.unique(np.asarray(ds.y))
    if "groups" in ds.rows and classes.size == 2:
        info[G.REFERENCES] = G.references(ds.rows, info, np.asarray(ds.y) == classes[-1])
    ds.info = info
    return ds


def load_dataset(entry: dict, preprocess: Any = None, cached: bool = True) -> Dataset:
    """The dataset of a spec entry, cached per process (workers reuse it across jobs; not
    with ``cached=False``: ``safeclf verify`` reads the files as they are now). When
    the ``preprocess`` step the job applies imputes, a loader with a ``keep_empty`` parameter
    (``csv``) keeps empty numeric cells as NaN for it."""
    from safeclf.data import preprocessing
    from safeclf.plugins import registry

    params = dict(entry.get("params") or {})
    if preprocessing.imputes(preprocess) and "keep_empty" in registry.get_dataset(
            entry["dataset"]).defaults():
        params["keep_empty"] = True
    key = json.dumps(params, sort_keys=True)
    return _load_cached(entry["dataset"], key) if cached else \
        _load_cached.__wrapped__(entry["dataset"], key)


def job_preprocess(dentry: dict, mentry: dict):
    """The ``preprocess`` step of a job: its method entry's, else its dataset entry's."""
    return mentry.get("preprocess") or dentry.get("preprocess")


def split_task(ds: Dataset, entry: dict, seed: int, fold: int | None) -> Task:
    """Split ``ds`` as ``entry["split"]`` says, reproducibly from ``seed`` (and ``fold``)."""
    from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

    split = entry["split"]
    label = entry.get("name") or entry["dataset"]
    idx = np.arange(ds.n_samples)
    stratify = split.get("stratify", True)
    try:
        if split.get("predefined"):
            if "split" not in ds.rows:
                raise DataError(f"dataset '{label}' has no predefined split; use split.test or split.folds")
            marks = np.asarray(ds.rows["split"])
            train_idx, test_idx = idx[marks == "train"], idx[marks == "test"]
        elif split.get("folds"):
            cv = (StratifiedKFold if stratify else KFold)(split["folds"], shuffle=True, random_state=seed)
            train_idx, test_idx = list(cv.split(idx, ds.y if stratify else None))[fold]
        else:
            train_idx, test_idx = train_test_split(
                idx, test_size=split["test"], random_state=seed, stratify=ds.y if stratify else None)
        if split.get("train_rows") and split["train_rows"] < train_idx.size:
            train_idx, _ = train_test_split(
                train_idx, train_size=split["train_rows"], random_state=seed + 15485863,
                stratify=ds.y[train_idx] if stratify else None)
        train_idx, cal_idx = _calibration(ds, split, train_idx, seed)
    except ValueError as exc:
        raise DataError(f"dataset '{label}' cannot be split as asked: {str(exc).splitlines()[0]}") from None
    return _task(ds, label, train_idx, test_idx, cal_idx, seed)


def _calibration(ds: Dataset, split: dict, train_idx, seed: int):
    """``(train, cal)`` positions: the split's ``calibration`` share of ``train_idx`` held
    back (``cal`` is ``None`` without one)."""
    from sklearn.model_selection import train_test_split

    if not split.get("calibration"):
        return train_idx, None
    return train_test_split(train_idx, test_size=split["calibration"], random_state=seed + 7919,
                            stratify=ds.y[train_idx] if split.get("stratify", True) else None)


def _task(ds: Dataset, label: str, train_idx, test_idx, cal_idx, seed: int) -> Task:
    everything = ds.all
    task = Task(dataset=label, train=everything.take(train_idx), test=everything.take(test_idx),
                cal=None if cal_idx is None else everything.take(cal_idx), info=ds.info, seed=seed)
    if np.unique(task.train.y).size < 2:
        raise DataError(f"dataset '{label}': the training part of seed {seed} has only one class")
    return task


def all_rows_task(ds: Dataset, entry: dict, seed: int) -> Task:
    """Every row of ``ds`` for training (a model to deploy): no test part, and the entry's
    ``calibration`` share held back as a job holds it back (``train_rows`` is not applied)."""
    label = entry.get("name") or entry["dataset"]
    idx = np.arange(ds.n_samples)
    try:
        train_idx, cal_idx = _calibration(ds, entry["split"], idx, seed)
    except ValueError as exc:
        raise DataError(f"dataset '{label}' cannot be split as asked: {str(exc).splitlines()[0]}") from None
    return _task(ds, label, train_idx, idx[:0], cal_idx, seed)


def preprocess(task: Task, how: Any) -> Task:
    """Fit the ``how`` step (impute, then scale: :mod:`safeclf.data.preprocessing`) on the
    training part and apply it to every part."""
    from safeclf.data import preprocessing

    transformer = preprocessing.fit(how, task.train.X, f"dataset '{task.dataset}'",
                                    task.info.get("feature_names"))
    if transformer is None:
        return task
    for part in task.parts().values():
        if len(part):
            part.X = transformer.transform(part.X)
    task.preprocessor = transformer
    return task


def _outputs(est, part, info):
    from safeclf.guarantees.metrics import Outputs

    pred = np.asarray(est.predict(part.X))
    score = proba = None
    if hasattr(est, "decision_function"):
        score = np.asarray(est.decision_function(part.X))
    if hasattr(est, "predict_proba"):
        try:
            proba = np.asarray(est.predict_proba(part.X))
        except (AttributeError, NotImplementedError):
            proba = None
    classes = getattr(est, "classes_", None)
    classes = np.unique(part.y) if classes is None else np.asarray(classes)
    return Outputs(y=np.asarray(part.y), pred=pred, classes=classes, score=score, proba=proba,
                   rows=part.rows, info=info)


def _plain(value):
    """JSON-friendly copy of ``value`` (numpy scalars and arrays become Python objects)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else value
    return value


def model_meta(est, task: Task, dentry: dict, job: dict, how: Any, promises=None,
               certificate=None) -> dict[str, Any]:
    """What using a fitted model needs and what it promises: its job, dataset entry, feature
    columns and names, the ``preprocess`` step, classes, promises and certificate (the
    ``models/<job>.json`` of :mod:`safeclf.store.models`)."""
    from safeclf.data.preprocessing import steps

    impute, scale = steps(how)
    return {"job": job, "dataset": dentry, "feature_names": task.info.get("feature_names"),
            "preprocess": {"impute": impute, "scale": scale},
            "columns": task.info.get("columns"),
            "classes": _plain(getattr(est, "classes_", None)),
            "outcome": task.info.get("outcome"),
            "promises": promises if promises is not None else [], "certificate": certificate}


def _save_model(path, est, task: Task, dentry: dict, job: dict, result: JobResult,
                how=None) -> None:
    """Keep the fitted model with what using it needs and what it promises (the promises as
    checked on this job's test data, and the certificate of a certified fit, whose evidence
    gains the model file's SHA-256: :func:`safeclf.store.models.save`)."""
    from safeclf.guarantees.certify.evidence import KEY
    from safeclf.store import models

    digest = models.save(path, est, task.preprocessor, model_meta(
        est, task, dentry, job, how, result.promises, result.certification))
    if isinstance((result.certification or {}).get(KEY), dict):
        result.certification[KEY]["model_sha256"] = digest
    result.model = {"skops": digest, "json": models.sha256_of(Path(path).with_suffix(".json"))}


def _with_identity(record: dict, dentry: dict, mentry: dict, job: dict) -> dict:
    """A certificate's ``record`` whose evidence (:mod:`safeclf.guarantees.certify.evidence`)
    also names what the job ran: its seed, fold and parameters, the dataset and method
    entries, and the SHA-256 of each data file the dataset entry reads."""
    from safeclf.guarantees.certify.evidence import KEY
    from safeclf.spec.check import path_params
    from safeclf.store.folder import file_identity

    if not isinstance(record.get(KEY), dict):
        return record
    files = []
    for key in path_params(dentry["dataset"]):
        value = (dentry.get("params") or {}).get(key)
        if value:
            files.append({"param": key, **file_identity(Path(value))})
    evidence = {**record[KEY], "job": {"seed": job["seed"], "fold": job["fold"],
                                       "params": job["params"]},
                "dataset": dentry, "method": {k: mentry.get(k) for k in
                                              ("method", "certify", "promises", "preprocess")},
                "data": files}
    return {**record, KEY: evidence}


def run_path(payloads: list[dict[str, Any]]) -> list[JobResult]:
    """Run the jobs of one path unit (see :func:`safeclf.spec.expand.path_units`): the same data,
    seed and method, one grid point each, in grid order. The plugin's ``fit_path`` fits them
    in turn, each from the previous solution; each point's record is exactly what
    :func:`run_job` makes for it (its ``fit_seconds`` the time of its own step of the path)."""
    if len(payloads) == 1:
        return [run_job(payloads[0])]
    path: dict[str, Any] = {}

    def step(i, plugin, est, task):
        if "fits" not in path:  # the first point to get here starts the path for all
            ests = [plugin.build(p["job"]["params"], random_state=p["job"]["seed"])
                    for p in payloads]
            path["fits"] = enumerate(plugin.fit_path(ests, task))
        for k, out in path["fits"]:  # points whose job failed before fitting are passed over
            if k == i:
                if isinstance(out, BaseException):
                    raise out
                return out
        raise RuntimeError(f"the path ended before its grid point {i}")

    return [run_job(p, fit=functools.partial(step, i)) for i, p in enumerate(payloads)]


def run_recorded(payloads: list[dict[str, Any]]) -> list[tuple[JobResult, str]]:
    """:func:`run_path`, each result with the text of its record (``results/<id>.json``): made
    where the jobs ran, so the process that writes the records only writes them."""
    from safeclf.store.folder import json_text

    return [(r, json_text(r.to_record())) for r in run_path(payloads)]


def run_job(payload: dict[str, Any], fit=None) -> JobResult:
    """Run one job described by ``payload`` (job fields, dataset entry, method entry, metric
    names) and return its result. ``fit(plugin, estimator, task)`` replaces the
    plugin's fit (:func:`run_path` passes the next step of a path)."""
    from safeclf._utils import jit
    from safeclf.guarantees.certify import NO_SOLUTION, certified_fit
    from safeclf.guarantees.metrics import evaluate
    from safeclf.guarantees.outcome import name_promises
    from safeclf.plugins import registry

    job, dentry, mentry = payload["job"], payload["dataset"], payload["method"]
    result = JobResult(**job)
    caught: list = []
    compiled = None
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as threads:
            warnings.simplefilter("always")
            plugin = registry.get_method(mentry["method"])
            compiled = jit.compile_seconds()  # the plugin's modules (and numba) are imported now
            how = job_preprocess(dentry, mentry)
            task = split_task(load_dataset(dentry, how), dentry, job["seed"], job["fold"])
            task = preprocess(task, how)
            threads.enter_context(job_threads(task.train.X))
            result.sizes = {k: len(p) for k, p in task.parts().items()}
            t0 = time.perf_counter()
            certify = mentry.get("certify")
            if certify:
                outcome = certified_fit(plugin, job["params"], task, certify,
                                        mentry.get("promises"), job["seed"])
                result.certification = _plain(_with_identity(outcome.record, dentry, mentry,
                                                             job))
                result.fit_seconds = time.perf_counter() - t0
                if not outcome.passed:
                    from safeclf.guarantees.promises import promise_metrics

                    records = _unchecked(name_promises(outcome.promises, task.info),
                                         outcome.record.get("reason"))
                    result.status = JobStatus(NO_SOLUTION)
                    result.error = outcome.record.get("reason")
                    result.metrics = _plain({"no_solution": 1.0, **_pass_metric(outcome),
                                             **promise_metrics(records),
                                             **_trivial(result, task, None)})
                    result.promises = _plain(records)
                    return _finish(result, caught, compiled)
                est, declared = outcome.estimator, outcome.promises
            else:
                est = plugin.build(job["params"], random_state=job["seed"])
                est = (plugin.fit(est, task) if fit is None else fit(plugin, est, task)) or est
                declared = None
                result.fit_seconds = time.perf_counter() - t0
            # a certified rule wraps the plugin's model: the plugin reports on its own model
            from safeclf.guarantees.certify.threshold import CertifiedClassifier

            own = est.estimator_ if isinstance(est, CertifiedClassifier) else est
            result.solver_status, result.n_iter = solver_status.of_estimator(own)
            t0 = time.perf_counter()
            metrics: dict[str, float] = {}
            for name, part in task.parts().items():
                outputs = _outputs(est, part, task.info)
                metrics.update(evaluate(payload["metrics"], outputs, name))
                if name == "test":
                    metrics.update(_trivial(result, task, outputs.pred))
            report = plugin.report(own, task)
            result.predict_seconds = time.perf_counter() - t0
            check_metric_names(report.metrics, f"method '{plugin.name}'")
            metrics.update({k: float(v) for k, v in report.metrics.items()})
            from safeclf.guarantees.promises import check, promise_metrics

            if declared is None:
                from safeclf.guarantees.certify.posthoc import declared_promises

                declared = plugin.promises(est, task)
                stated = declared_promises(mentry.get("promises"), task, est.classes_)
                if stated:  # the user's promises replace "makes no promise"
                    declared = [p for p in declared if p.kind != "none"] + stated
            promises = check(plugin, name_promises(declared, task.info), est, task,
                             payload.get("confidence", 0.95))
            metrics.update(promise_metrics(promises))
            if certify:
                metrics.update({"no_solution": 0.0, **_pass_metric(outcome)})
            result.promises = _plain(promises)
            from safeclf.report.by_group import of_job

            result.by_group = _plain(of_job(est, task, payload.get("confidence", 0.95)))
            result.metrics = _plain(metrics)
            result.details = _plain(report.details)
            if payload.get("model_path"):
                _save_model(Path(payload["model_path"]), est, task, dentry, job, result, how)
    except SafeclfError as exc:
        result.fail(str(exc))
    except Exception as exc:  # a job's bug must not stop the run; keep the evidence
        result.fail(f"{type(exc).__name__}: {' '.join(str(exc).split())}", traceback.format_exc())
    return _finish(result, caught, compiled)


def _trivial(result: JobResult, task: Task, pred) -> dict[str, float]:
    """``test_trivial_error`` (the majority rule of the training labels on the test rows) and
    ``degenerate`` (0/1, nan without a model: ``pred`` None) of :mod:`safeclf.guarantees.trivial`; a
    degenerate model's reason goes to ``result.degenerate_reason``."""
    from safeclf.guarantees import trivial

    y_test = np.asarray(task.test.y)
    if pred is None:
        return {"test_trivial_error": trivial.trivial_error(task.train.y, y_test),
                "degenerate": float("nan")}
    columns, verdict = trivial.job_metrics(task.train.y, y_test, pred)
    if verdict is not None and verdict.degenerate:
        result.degenerate_reason = verdict.reason
    return columns


def _pass_metric(outcome) -> dict:
    """``certify_pass_probability``: the predicted probability that certification returns a
    model (post-hoc route), as a metric column."""
    value = outcome.record.get("pass_probability")
    return {} if value is None else {"certify_pass_probability": float(value)}


def _unchecked(promises, reason: str | None = None) -> list[dict]:
    """The records of promises a job without a model could not check (no_solution), with the
    reason certification gave."""
    from safeclf.guarantees.promises import Checked

    nan = float("nan")
    why = f"; {reason}" if reason else ""
    return [Checked(p, nan, nan, nan, 0, nan, "no solution", False,
                    f"no model returned: nothing deployed, nothing violated{why}").record()
            for p in promises]


def _finish(result: JobResult, caught, compiled: float | None = None) -> JobResult:
    """Attach the distinct warnings seen during the job, and the seconds numba spent compiling
    since ``compiled`` (:func:`safeclf._utils.jit.compile_seconds` at the job's start)."""
    from safeclf._utils import jit

    now = jit.compile_seconds()
    if now is not None:
        result.compile_seconds = round(now - (compiled or 0.0), 3)
    result.warnings = list(dict.fromkeys(
        f"{w.category.__name__}: {' '.join(str(w.message).split())}" for w in caught or []))
    return result

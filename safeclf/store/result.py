"""What one job returns: a typed record (after Hydra's ``JobReturn`` and MLflow's run status).

A :class:`JobResult` is written to ``results/<id>.json`` as a plain JSON object
(:meth:`JobResult.to_record`) and read back with :meth:`JobResult.from_record`, so resume and
the tables see the same fields. Identity, status and timing fields are columns of the metrics
table under their own names (:data:`RESERVED_COLUMNS`); a method's metrics share that table,
so a metric may not take one of those names (:func:`check_metric_names`).
"""

from __future__ import annotations

import enum
from dataclasses import MISSING, dataclass, field, fields
from typing import Any


class JobStatus(str, enum.Enum):
    """How a job ended: ``ok`` (fitted and measured), ``no_solution`` (a certified fit
    returned no model, as it may: counted, not measured) or ``failed`` (``error`` says why)."""

    OK = "ok"
    NO_SOLUTION = "no_solution"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


#: Columns of the metrics table that are not metrics: a job's identity, status and timings.
RESERVED_COLUMNS = frozenset({
    "job", "dataset", "method", "params", "seed", "fold", "status", "error",
    "fit_seconds", "predict_seconds", "solver_status", "n_iter", "degenerate_reason",
})


def check_metric_names(names, source: str) -> None:
    """Raise ``ValueError`` if a metric of ``source`` takes a reserved column's name or a
    ``param.`` prefix (the table would lose one of the two values)."""
    for name in names:
        if name in RESERVED_COLUMNS or str(name).startswith("param."):
            raise ValueError(f"{source} reports a metric named '{name}', a column the runner "
                             "reserves; give it another name")


def ok_rows(frame):
    """The rows of a metrics table whose job ended ``ok``."""
    return frame[frame["status"] == JobStatus.OK.value]


@dataclass
class JobResult:
    """One job's record.

    Attributes
    ----------
    id, dataset, method, plugin, params, seed, fold
        The job's identity: its id, dataset and method labels, the method's plugin name, the
        parameter point, the seed and the fold (``None`` without folds).
    status : JobStatus
    error : str or None
        One line saying why a failed job failed.
    metrics : dict of str to float
        Shared metrics (``train_error``, ...) and the plugin's own.
    details : dict
        JSON-serialisable data the plugin keeps for plots and audits.
    warnings : list of str
        Each distinct warning raised while the job ran, as ``Category: message``.
    fit_seconds, predict_seconds : float or None
        Wall time of ``fit`` and of predicting and measuring every part.
    compile_seconds : float or None
        Seconds numba spent compiling while the job ran (a worker's first fit of a method
        with compiled code, when numba's cache did not hold it); None when the process had
        not imported numba (:mod:`safeclf._utils.jit`).
    solver_status : str or None
        The estimator's ``solver_status_`` (see :mod:`safeclf.methods._solvers.status`), when it has one.
    n_iter : int or None
        The estimator's ``n_iter_`` (summed when it is per class or per stage), when it has one.
    sizes : dict of str to int
        Samples in each part (train, cal, test).
    promises : list of dict
        Each promise the model made and its held-out check (:mod:`safeclf.guarantees.promises`).
    certification : dict or None
        A certified fit's record (:mod:`safeclf.guarantees.certify.training`).
    by_group : list of dict
        Each rate per group and each ratio and difference per compared pair on the test
        split, with intervals (:mod:`safeclf.report.by_group`); empty without groups.
    traceback : str or None
        For a failure that is a bug rather than a user's mistake.
    degenerate_reason : str or None
        Why the model is degenerate on the test rows (:mod:`safeclf.guarantees.trivial`), in words; None
        when it is not (or there is no model).
    model : dict or None
        When the job saved its model: the SHA-256 of ``models/<id>.skops`` and of
        ``models/<id>.json`` (``{"skops": ..., "json": ...}``), so the files read back are
        the ones this record, listed in the manifest, was written with
        (:func:`safeclf.store.records.listed_model`).
    """

    id: str
    dataset: str
    method: str
    params: dict[str, Any]
    seed: int
    plugin: str | None = None
    fold: int | None = None
    status: JobStatus = JobStatus.OK
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    fit_seconds: float | None = None
    predict_seconds: float | None = None
    compile_seconds: float | None = None
    solver_status: str | None = None
    n_iter: int | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    promises: list[dict] = field(default_factory=list)
    certification: dict[str, Any] | None = None
    by_group: list[dict] = field(default_factory=list)
    traceback: str | None = None
    degenerate_reason: str | None = None
    model: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.status is JobStatus.OK

    @property
    def failed(self) -> bool:
        return self.status is JobStatus.FAILED

    @property
    def finished(self) -> bool:
        """Ended as it may (ok or no solution): not run again on resume."""
        return not self.failed

    def fail(self, error: str, traceback: str | None = None) -> None:
        self.status, self.error, self.traceback = JobStatus.FAILED, error, traceback

    def to_record(self) -> dict[str, Any]:
        """The JSON object stored in ``results/<id>.json``. Its values are the result's own,
        not copies (asdict's deep copy cost more than the JSON text): read it, or copy it
        before changing it."""
        record = {f.name: getattr(self, f.name) for f in fields(self)}
        record["status"] = self.status.value
        for key in ("traceback", "certification", "degenerate_reason", "compile_seconds",
                    "model"):
            if record[key] is None:
                del record[key]
        return record

    @classmethod
    def from_record(cls, data: Any) -> JobResult | None:
        """The result a stored record describes, or ``None`` if it is incomplete (a job that
        has to run again on resume)."""
        names = {f.name for f in fields(cls)}
        required = {f.name for f in fields(cls)
                    if f.default is MISSING and f.default_factory is MISSING}
        required |= {"fold", "status", "metrics"}
        if not isinstance(data, dict) or not required <= set(data):
            return None
        try:
            status = JobStatus(data["status"])
        except ValueError:
            return None
        return cls(**{k: v for k, v in data.items() if k in names and k != "status"},
                   status=status)


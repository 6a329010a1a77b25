"""The one reader of a run folder: its spec, manifest, metrics table, summary, promise and
expectation tables and plots, each file read through :func:`safeclf._utils.paths.inside` (a run
folder may come from anyone: nothing it holds leads the reader outside it).

:func:`read_manifest` is the one way a manifest is read (by ``--resume``, ``compare``,
``report``, ``deploy`` and :func:`safeclf.load_run`): a damaged or foreign one is refused with
one line, never taken for an empty one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from safeclf.errors import SpecError

if TYPE_CHECKING:
    import pandas as pd



@dataclass
class RunFolder:
    """A finished run folder, read back.

    Attributes
    ----------
    path : pathlib.Path
        The run folder.
    spec : dict
        The resolved spec the run was made from (``spec.yaml``: profile and overrides applied).
    manifest : dict
        ``manifest.json``: command, profile, overrides, data files and their SHA-256, versions
        of Python, safeclf and every library, backend, start and end, counts of jobs.
    metrics : pandas.DataFrame
        One row per job (``metrics.parquet``): dataset, method, params (JSON), seed, fold,
        status, error, ``param.<name>`` columns, every metric (``train_*``, ``cal_*``,
        ``test_*``), timings.
    summary : pandas.DataFrame
        ``summary.csv``: mean ± std of every metric over seeds and folds, one row per dataset,
        method and parameter point.
    promises : pandas.DataFrame
        ``promises.csv``: every promise each fitted model makes, checked on its test split
        (estimate, interval, verdict); a method without a promise has one ``none`` row.
    expectations : pandas.DataFrame
        ``expectations.csv``: the spec's ``expect`` entries with the measured value, the
        condition (the reference value where given), the verdict and the ``source`` of the
        reference (paper, figure, report, project, invariant; ``source_where`` the page,
        table or figure); empty without ``expect``.
    exit_code : int
        What the ``safeclf run`` command would have exited with: 1 when a job failed or (with
        ``check=True``) an expectation was not met, else 0. ``None`` for :func:`load_run`.
    """

    path: Path
    spec: dict[str, Any]
    manifest: dict[str, Any]
    metrics: pd.DataFrame
    summary: pd.DataFrame
    promises: pd.DataFrame
    expectations: pd.DataFrame
    exit_code: int | None = None
    plots: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The run's name (the spec's ``name``, or ``--name``)."""
        return str(self.spec.get("name", self.path.name))

    @property
    def failed(self) -> pd.DataFrame:
        """The rows of :attr:`metrics` whose job failed, with their one-line errors."""
        return self.metrics[self.metrics["status"] == "failed"]

    @property
    def expectations_met(self) -> bool:
        """Whether no expectation failed, as ``run --check`` decides it: each passed or is a
        stated deviation (verdict ``deviation``; ``True`` when the spec has none)."""
        from safeclf.spec.schema import NOT_FAILED

        return bool(self.expectations.empty
                    or self.expectations["verdict"].isin(NOT_FAILED).all())

    @property
    def report(self) -> Path:
        """The run's one-page report, ``report.html``."""
        return self.path / "report.html"

    def model(self, job: str):
        """The fitted pipeline (preprocessing and estimator) saved for ``job``, checked as
        ``safeclf predict`` checks it: only a job the manifest lists, whose model files are
        the ones its record names (:func:`safeclf.store.records.listed_model`). The run must
        have been made with ``save_models: true``.
        """
        from safeclf.store import models
        from safeclf.store.records import listed_model

        path, meta_path = models.model_paths(self.path, job)
        if not path.is_file():
            raise SpecError(f"no saved model for job '{job}' in '{self.path}' "
                            "(set save_models: true in the spec)")
        path, meta_path = listed_model(self.path, self.manifest, job, "model:")
        models.read_meta(meta_path)
        return models.load(path)

    def __repr__(self) -> str:
        ok = int((self.metrics["status"] == "ok").sum()) if "status" in self.metrics else 0
        met = (f", expectations {int((self.expectations['verdict'] == 'pass').sum())}/"
               f"{len(self.expectations)} met" if not self.expectations.empty else "")
        return f"<Run {self.name!r}: {ok}/{len(self.metrics)} jobs ok{met}; {self.path}>"


def read_table(path: Path):
    """The metrics table at ``path`` (``.parquet`` or ``.csv``); a file that cannot be read or
    lacks the identity columns is a :class:`SpecError` naming it."""
    import pandas as pd

    try:
        table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except PermissionError:
        raise SpecError(f"'{path}' cannot be read: permission denied") from None
    except Exception as exc:  # pyarrow and pandas raise many types for a damaged file
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SpecError(f"'{path}' cannot be read (damaged or empty): {reason[:200]}") from None
    missing = [c for c in ("dataset", "method", "params", "status") if c not in table.columns]
    if missing:
        raise SpecError(f"'{path}' is not a safeclf metrics table (no column {missing[0]!r})")
    return table


def load_tables(run_dir: str | Path):
    """``(spec_dict, manifest, table)`` of a finished run folder, for compare; each file read
    through :func:`safeclf._utils.paths.inside` (no symlink out of the folder)."""
    from safeclf._utils.paths import inside, what_is
    from safeclf.spec.yaml import parse_yaml

    path = Path(run_dir)
    kind = what_is(path)
    if kind != "a folder":
        raise SpecError(f"'{run_dir}' is not a run folder (it "
                        f"{'does not exist' if kind == 'missing' else 'is ' + kind})")
    if not os.access(path, os.R_OK | os.X_OK):
        raise SpecError(f"'{run_dir}' cannot be read: permission denied")
    table_path = inside(path, "metrics.parquet")  # a run folder may come from anyone
    if not table_path.is_file():
        table_path = inside(path, "metrics.csv")
        if not table_path.is_file():
            inner = [p for p in path.iterdir() if (p / "spec.yaml").is_file()]
            if inner:
                raise SpecError(f"'{run_dir}' is not a run folder but holds {len(inner)} runs; "
                                f"give them as {run_dir}/*")
            hint = (f"; finish it with: safeclf run --resume {run_dir}"
                    if (path / "spec.yaml").is_file() else "")
            raise SpecError(f"'{run_dir}' is not a finished run folder (no metrics table){hint}")
    table = read_table(table_path)
    file = inside(path, "spec.yaml")  # through the spec's own reader
    try:
        spec = parse_yaml(file.read_text(encoding="utf-8"), "spec.yaml") if file.is_file() else {}
    except (ValueError, UnicodeDecodeError):  # parse_yaml's SpecError is a ValueError
        raise SpecError(f"'{path / 'spec.yaml'}' cannot be read (damaged)") from None
    return (spec if isinstance(spec, dict) else {}), read_manifest(path, required=False), table


def read_manifest(run_dir: Path, required: bool = True, where: str = "") -> dict[str, Any]:
    """``manifest.json`` of ``run_dir`` as a dict (read through
    :func:`safeclf._utils.paths.inside`). Missing: ``{}``, or a :class:`SpecError` when
    ``required``; not JSON, or JSON that is not an object: a :class:`SpecError` (damaged or
    foreign), never an empty manifest. ``where`` starts the message (``--resume: 'RUN'``)."""
    from safeclf._utils.paths import inside

    file = inside(Path(run_dir), "manifest.json")
    where = where or f"'{run_dir}'"
    if not file.is_file():
        if required:
            raise SpecError(f"{where} is not a run folder (no manifest.json); nothing was "
                            "written to it")
        return {}
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        manifest = None
    if not isinstance(manifest, dict):
        raise SpecError(f"{where}: its manifest.json is not a run manifest (damaged or foreign); "
                        "nothing was written to it" if required else
                        f"'{file}' is not a run manifest (damaged or foreign)")
    return manifest


def read(path: str | Path) -> RunFolder:
    """Read a finished run folder (:class:`RunFolder`); :class:`SpecError` when ``path`` is
    not one (the message says what it is instead) or a file it would read leads outside it."""
    import pandas as pd

    from safeclf._utils.paths import inside

    path = Path(path)
    spec, manifest, metrics = load_tables(path)

    def table(name: str) -> pd.DataFrame:
        file = inside(path, name)
        return pd.read_csv(file) if file.is_file() else pd.DataFrame()

    folder = inside(path, "plots")  # every file read is one of the folder (no symlink out)
    plots = sorted(p for p in folder.glob("*.png") if inside(path, "plots", p.name).is_file()) \
        if folder.is_dir() else []
    return RunFolder(path=path, spec=spec, manifest=manifest, metrics=metrics,
                     summary=table("summary.csv"), promises=table("promises.csv"),
                     expectations=table("expectations.csv"), plots=plots)

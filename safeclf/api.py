"""The Python entry point: :func:`run` a spec, :func:`load_run` a finished run folder.

The ``safeclf`` command is a thin layer over the same calls: both validate the spec the same
way, run the jobs through :func:`safeclf.execution.runner.run` and write the same run folder; a
:class:`Run` is that folder read back (:func:`safeclf.store.folder.load_run`), so its tables are
the files the command line wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from safeclf.spec.schema import Spec


@dataclass
class Run:
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
        condition (the paper's value where given) and the verdict; empty without ``expect``.
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
        """Whether every expectation passed (``True`` when the spec has none)."""
        return bool(self.expectations.empty or (self.expectations["verdict"] == "pass").all())

    @property
    def report(self) -> Path:
        """The run's one-page report, ``report.html``."""
        return self.path / "report.html"

    def model(self, job: str):
        """The fitted pipeline (preprocessing and estimator) saved for ``job``, checked as
        ``safeclf predict`` checks it. The run must have been made with ``save_models: true``.
        """
        from safeclf.store import models

        path, meta_path = models.model_paths(self.path, job)
        if not path.is_file():
            from safeclf.errors import SpecError

            raise SpecError(f"no saved model for job '{job}' in '{self.path}' "
                            "(set save_models: true in the spec)")
        models.read_meta(meta_path)
        return models.load(path)

    def __repr__(self) -> str:
        ok = int((self.metrics["status"] == "ok").sum()) if "status" in self.metrics else 0
        met = (f", expectations {int((self.expectations['verdict'] == 'pass').sum())}/"
               f"{len(self.expectations)} met" if not self.expectations.empty else "")
        return f"<Run {self.name!r}: {ok}/{len(self.metrics)} jobs ok{met}; {self.path}>"

    def _repr_html_(self) -> str:  # Jupyter
        from safeclf.report.html import render_tables

        return render_tables(self)


def load_run(path: str | Path) -> Run:
    """Read a finished run folder.

    Parameters
    ----------
    path : str or pathlib.Path
        A run folder written by ``safeclf run`` or :func:`run`.

    Returns
    -------
    Run
        The run's spec, manifest and tables.

    Raises
    ------
    safeclf.errors.SpecError
        ``path`` is not a finished run folder (the message says what it is instead), or a
        file it would read is a symlink to a file outside it.
    """
    import pandas as pd

    from safeclf.store import folder as run_folder
    from safeclf._utils.paths import inside

    path = Path(path)
    spec, manifest, metrics = run_folder.load_run(path)

    def table(name: str) -> pd.DataFrame:
        file = inside(path, name)
        return pd.read_csv(file) if file.is_file() else pd.DataFrame()

    folder = inside(path, "plots")  # every file read is one of the folder (no symlink out)
    plots = sorted(p for p in folder.glob("*.png") if inside(path, "plots", p.name).is_file()) \
        if folder.is_dir() else []
    return Run(path=path, spec=spec, manifest=manifest, metrics=metrics,
               summary=table("summary.csv"), promises=table("promises.csv"),
               expectations=table("expectations.csv"), plots=plots)


def read_spec(spec: str | Path | Mapping[str, Any] | Spec, profile: str | None = None,
              overrides: Sequence[str] = ()) -> Spec:
    """A checked :class:`~safeclf.spec.schema.Spec` from a YAML path, a mapping or a ``Spec``, with
    ``profile`` and ``overrides`` applied as the command line applies them. Relative data paths
    in a mapping are taken from the current folder (from the file's folder for a path)."""
    from safeclf.spec import schema as specs

    if isinstance(spec, (str, Path)):
        return specs.load_spec(spec, profile, overrides=list(overrides))
    if isinstance(spec, specs.Spec):
        spec = spec.resolved()
    if not isinstance(spec, Mapping):
        from safeclf.errors import SpecError

        raise SpecError(f"a spec is a path, a mapping or a Spec, got {type(spec).__name__}")
    data = copy.deepcopy(dict(spec))  # the caller's mapping is left as it was
    parsed = specs.parse(specs.apply_overrides(specs.apply_profile(data, profile),
                                               list(overrides)))
    specs.check(parsed)
    specs.resolve_paths(parsed, Path.cwd())
    return parsed


def run(spec: str | Path | Mapping[str, Any] | Spec, *, jobs: int = -1,
        out: str | Path = "runs", name: str | None = None, profile: str | None = None,
        overrides: Sequence[str] = (), check: bool = False, backend: str = "loky",
        scheduler: str | None = None, resume: str | Path | None = None,
        allow_changed_data: bool = False, mlflow: str | None = None,
        mlflow_experiment: str | None = None, progress: bool = False) -> Run:
    """Run every job of a spec and return the finished run, as ``safeclf run`` does.

    Parameters
    ----------
    spec : str, pathlib.Path, dict or safeclf.spec.schema.Spec
        A YAML file, the same content as a dict, or a parsed spec.
    jobs : int, default -1
        Parallel workers (-1: all cores). ``--jobs``.
    out : str or pathlib.Path, default "runs"
        Folder that receives the timestamped run folder. ``--out``.
    name : str, optional
        Run name (default: the spec's). ``--name``.
    profile : str, optional
        Apply ``profiles.<profile>`` of the spec (e.g. ``"ci"``). ``--profile``.
    overrides : sequence of str
        Hydra-style ``key=value`` overrides applied after the profile
        (``["seeds=1", "methods[0].params.C=10"]``), recorded in the manifest.
    check : bool, default False
        Make :attr:`Run.exit_code` 1 when an expectation is not met. ``--check``.
    backend : {"loky", "dask"}, default "loky"
        Local processes, or a Dask cluster (``scheduler``, else a local cluster).
    scheduler : str, optional
        Dask scheduler address, ``tcp://host:8786``.
    resume : str or pathlib.Path, optional
        Finish an interrupted run folder (``spec`` may then be ``None``). ``--resume``.
    allow_changed_data : bool, default False
        With ``resume``: go on although a data file changed since the run began.
    mlflow, mlflow_experiment : str, optional
        Log the finished run to this MLflow tracking URI and experiment.
    progress : bool, default False
        Show the progress bar on stderr.

    Returns
    -------
    Run
        The run folder read back; :attr:`Run.exit_code` says what the command would exit
        with.

    Raises
    ------
    safeclf.errors.SpecError
        A bad spec, option or data file (the message names the place); nothing was run.

    Examples
    --------
    >>> import safeclf
    >>> r = safeclf.run("configs/quickstart.yaml", profile="ci", out="runs")
    >>> r.exit_code, r.expectations_met
    (0, True)
    >>> list(r.summary.columns[:3])
    ['dataset', 'method', 'params']
    """
    from safeclf.execution.runner import Options
    from safeclf.execution.runner import run as run_spec

    given = None if spec is None and resume is not None else spec
    if given is not None and not isinstance(given, (str, Path)):
        given = read_spec(given, profile, overrides)
    opts = Options(jobs=jobs, out=Path(out), name=name,
                   resume=None if resume is None else Path(resume), backend=backend,
                   scheduler=scheduler, check=check, profile=profile,
                   overrides=list(overrides), allow_changed_data=allow_changed_data,
                   mlflow=mlflow, mlflow_experiment=mlflow_experiment,
                   command=["safeclf.run", _describe(spec)])
    console = None
    if progress:
        from rich.console import Console

        console = Console(stderr=True)
    outcome = run_spec(given, opts, console=console)
    result = load_run(outcome.run_dir)
    result.exit_code = outcome.exit_code
    return result


def _describe(spec) -> str:
    """What the manifest's ``command`` records of the spec given to :func:`run`."""
    if spec is None or isinstance(spec, (str, Path)):
        return str(spec)
    return f"<{type(spec).__name__}>"

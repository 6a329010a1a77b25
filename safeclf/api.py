"""The Python entry point: :func:`run` a spec, :func:`load_run` a finished run folder.

The ``safeclf`` command is a thin layer over the same calls: both validate the spec the same
way, run the jobs through :func:`safeclf.execution.runner.run` and write the same run folder; a
:class:`Run` is that folder read back (:func:`safeclf.store.read.read`), so its tables are
the files the command line wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from safeclf.store.read import RunFolder, read

if TYPE_CHECKING:  # pragma: no cover
    from safeclf.spec.schema import Spec


class Run(RunFolder):
    """A finished run folder, read back (:class:`safeclf.store.read.RunFolder`: its spec,
    manifest, metrics, summary, promise and expectation tables, plots and ``exit_code``), shown
    as its tables in a notebook."""

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
    from dataclasses import fields

    folder = read(path)
    return Run(**{f.name: getattr(folder, f.name) for f in fields(folder)})


def read_spec(spec: str | Path | Mapping[str, Any] | Spec, profile: str | None = None,
              overrides: Sequence[str] = ()) -> Spec:
    """A checked :class:`~safeclf.spec.schema.Spec` from a YAML path, a mapping or a ``Spec``, with
    ``profile`` and ``overrides`` applied as the command line applies them. Relative data paths
    in a mapping are taken from the current folder (from the file's folder for a path)."""
    from safeclf.spec.check import check, check_sources, load_spec, parse, resolve_paths
    from safeclf.spec.schema import Spec
    from safeclf.spec.yaml import apply_overrides, apply_profile

    if isinstance(spec, (str, Path)):
        return load_spec(spec, profile, overrides=list(overrides))
    if isinstance(spec, Spec):
        spec = spec.resolved()
    if not isinstance(spec, Mapping):
        from safeclf.errors import SpecError

        raise SpecError(f"a spec is a path, a mapping or a Spec, got {type(spec).__name__}")
    data = copy.deepcopy(dict(spec))  # the caller's mapping is left as it was
    parsed = parse(apply_overrides(apply_profile(data, profile), list(overrides)))
    check(parsed)
    check_sources(parsed)
    resolve_paths(parsed, Path.cwd())
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
    from safeclf.execution.options import Options
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

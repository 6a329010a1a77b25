"""The Python entry point: :func:`run` a spec, :func:`load_run` a finished run folder.

The ``safeclf`` command is a thin layer over the same calls: both validate the spec the same
way, run the jobs through :func:`safeclf.execution.runner.run` and write the same run folder; a
:class:`Run` is that folder read back (:func:`safeclf.store.read.read`), so its tables are
the files the command line wrote.
"""

from __future__ import annotations

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

    _arguments(path=(path, "path"))
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
        _arguments(profile=(profile, "str?"), overrides=(overrides, "strs"))
        return load_spec(spec, profile, overrides=list(overrides))
    if isinstance(spec, Spec):
        spec = spec.resolved()
    if not isinstance(spec, Mapping):
        from safeclf.errors import SpecError

        raise SpecError(f"a spec is a path, a mapping or a Spec, got {type(spec).__name__}")
    _arguments(profile=(profile, "str?"), overrides=(overrides, "strs"))
    data = plain(spec)  # a copy: the caller's mapping is left as it was
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

    jobs = _arguments(
        jobs=(jobs, "int"), out=(out, "path"), name=(name, "str?"), profile=(profile, "str?"),
        overrides=(overrides, "strs"), check=(check, "bool"), backend=(backend, "backend"),
        scheduler=(scheduler, "str?"), resume=(resume, "path?"),
        allow_changed_data=(allow_changed_data, "bool"), mlflow=(mlflow, "str?"),
        mlflow_experiment=(mlflow_experiment, "str?"), progress=(progress, "bool"))["jobs"]
    if spec is None and resume is None:
        from safeclf.errors import SpecError

        raise SpecError("spec: give a spec (a path, a mapping or a Spec), or resume=RUN_DIR")
    from safeclf.spec.schema import Spec as Parsed

    if spec is not None and not isinstance(spec, (str, Path, Mapping, Parsed)):
        from safeclf.errors import SpecError

        raise SpecError(f"spec: a spec is a path, a mapping or a Spec, got "
                        f"{type(spec).__name__}")
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


#: How deep a spec mapping may nest (lists and mappings): far beyond any spec, well within
#: Python's recursion limit.
MAX_DEPTH = 50

#: What each kind of argument of the public functions must be (the command line's types).
_KINDS = {"int": "an integer", "bool": "True or False", "str?": "a string or None",
          "path": "a path (str or pathlib.Path)", "path?": "a path (str or pathlib.Path) or None",
          "strs": "a list of strings", "backend": "'loky' or 'dask'"}


def _arguments(**given) -> dict[str, Any]:
    """Each ``name=(value, kind)`` checked as the command line checks its option (``kind`` a
    key of :data:`_KINDS`); numpy integers are integers. Returns the values, converted
    (``int`` for an integer). Raises :class:`~safeclf.errors.SpecError` naming the argument."""
    import numbers

    from safeclf.errors import SpecError

    out = {}
    for name, (value, kind) in given.items():
        ok = {"int": isinstance(value, numbers.Integral) and not isinstance(value, bool),
              "bool": isinstance(value, bool),
              "str?": value is None or isinstance(value, str),
              "path": isinstance(value, (str, Path)),
              "path?": value is None or isinstance(value, (str, Path)),
              "strs": not isinstance(value, (str, bytes, Mapping)) and isinstance(
                  value, (list, tuple)) and all(isinstance(v, str) for v in value),
              "backend": value in ("loky", "dask") and isinstance(value, str)}[kind]
        if not ok:
            raise SpecError(f"{name} must be {_KINDS[kind]}, got {_shown(value)}")
        if isinstance(value, str) and "\0" in value:
            raise SpecError(f"{name} must not hold a NUL character")
        out[name] = int(value) if kind == "int" else value
    return out


def _shown(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def plain(value, where: str = "spec", depth: int = 0):
    """A copy of a spec given as Python data, with only what a YAML file can hold: mappings
    with string keys, lists (a tuple is one), strings, numbers, booleans and None; numpy
    scalars become Python numbers. Anything else (a set, bytes, an object), or nesting deeper
    than :data:`MAX_DEPTH`, is a :class:`~safeclf.errors.SpecError` naming the place."""
    import numbers

    import numpy as np

    from safeclf.errors import SpecError

    if depth > MAX_DEPTH:
        at = where if len(where) <= 60 else where[:57] + "..."
        raise SpecError(f"{at}: the spec nests more than {MAX_DEPTH} levels deep; a spec "
                        "is not")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise SpecError(f"{where}: key {_shown(k)} is not a string")
            out[k] = plain(v, f"{where}.{k}", depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise SpecError(f"{where} is a {type(value).__name__}, which a spec cannot hold (a string, "
                    "number, boolean, list or mapping)")


def _describe(spec) -> str:
    """What the manifest's ``command`` records of the spec given to :func:`run`."""
    if spec is None or isinstance(spec, (str, Path)):
        return str(spec)
    return f"<{type(spec).__name__}>"

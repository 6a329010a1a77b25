"""The command-line options of a run, checked before anything runs or is written.

``run`` (with or without ``--dry-run``) and ``validate`` call :func:`check` with the options
given, so a bad ``--jobs``, ``--out``, ``--name``, ``--backend``/``--scheduler`` or
``--mlflow`` stops with one line and exit code 2 before the first job, instead of after every
job ran (an MLflow server that does not answer used to cost 250 s of retries at the end).
Nothing here writes: folders are judged by what exists and the permissions on it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from safeclf.errors import SpecError
from safeclf.spec.schema import MAX_NAME, NAME_PATTERN

#: Schemes of a Dask scheduler address (distributed's comm backends).
SCHEDULER_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


@dataclass
class Options:
    """How a spec is run (the command line's options; :func:`check` checks those given)."""

    jobs: int = -1
    out: Path = Path("runs")
    name: str | None = None
    resume: Path | None = None
    dry_run: bool = False
    backend: str = "loky"
    scheduler: str | None = None
    check: bool = False
    profile: str | None = None
    overrides: list[str] = field(default_factory=list)
    allow_changed_data: bool = False  # --resume although a data file changed since the run began
    mlflow: str | None = None  # tracking URI: log the finished run there
    mlflow_experiment: str | None = None  # default: the spec's name
    command: list[str] = field(default_factory=lambda: list(sys.argv))




def check(opts) -> None:
    """Check the options of ``opts`` (an :class:`Options`) that were given;
    raises :class:`SpecError` naming the option."""
    if opts.jobs is not None and (opts.jobs == 0 or opts.jobs < -1):
        raise SpecError(f"--jobs must be a positive number of workers or -1, got {opts.jobs}")
    if opts.name is not None:
        check_name(opts.name, "--name")
    if opts.out is not None and opts.resume is None:
        check_out(Path(opts.out))
    if opts.scheduler is not None:
        if opts.backend != "dask":
            raise SpecError("--scheduler names a Dask scheduler: give it with --backend dask")
        check_scheduler(opts.scheduler)
    if opts.mlflow_experiment is not None and not opts.mlflow_experiment.strip():
        raise SpecError("--mlflow-experiment must not be empty")
    if opts.mlflow is not None:
        from safeclf.store import mlflow as tracking

        tracking.require()
        tracking.check_uri(opts.mlflow)


def check_name(name: str, where: str) -> None:
    """A run name: letters, digits, ``_ . -``, at most :data:`MAX_NAME` characters."""
    if len(name) > MAX_NAME:
        raise SpecError(f"{where} is {len(name)} characters long; at most {MAX_NAME} are "
                        "allowed (it names the run folder)")
    if not re.match(NAME_PATTERN, name):
        raise SpecError(f"{where} must be letters, digits, '_', '.' or '-' (it names the run "
                        f"folder), got {name!r}")


def check_out(out: Path) -> None:
    """``--out``: a folder this process can write into, or one it can create (its nearest
    existing ancestor is a writable folder): :func:`safeclf._utils.paths.writable_folder`."""
    from safeclf._utils.paths import writable_folder

    writable_folder(out, "--out:", noun="output folder")


def check_scheduler(address: str) -> None:
    """``--scheduler``: ``[scheme://]host:port`` with a scheme distributed knows and a port
    from 1 to 65535 (``inproc://`` takes any name)."""
    hint = "; write it as tcp://host:port (e.g. tcp://10.0.0.5:8786)"
    text = address if "://" in address else f"tcp://{address}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise SpecError(f"--scheduler: '{address}' is not an address ({exc}){hint}") from None
    if parts.scheme not in SCHEDULER_SCHEMES:
        raise SpecError(f"--scheduler: unknown scheme '{parts.scheme}' in '{address}' (known: "
                        f"{', '.join(SCHEDULER_SCHEMES)}){hint}")
    if parts.scheme == "inproc":
        return
    if not parts.hostname or port is None or parts.path not in ("", "/") or parts.query:
        raise SpecError(f"--scheduler: '{address}' needs a host and a port{hint}")
    if not 1 <= port <= 65535:
        raise SpecError(f"--scheduler: port {port} in '{address}' is not from 1 to 65535")

"""safeclf: an experiment runner for classifiers that come with a promise."""

import os as _os
import sys as _sys


def _user_cache() -> str:
    """The user's cache folder: ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")


#: The modules holding compiled (numba) code, relative to this package.
COMPILED_MODULES = ("_utils/prefetch.py", "guarantees/pairtest.py", "methods/mcsvm/dual.py",
                    "methods/mcsvm/kernels.py", "methods/proset/objective.py",
                    "methods/ramp/box_qp.py", "methods/ramp/dcd.py", "methods/ramp/joint_qp.py",
                    "methods/ramp/svm.py")


def _compiled_fingerprint(root: str) -> str:
    """12 hex digits of a hash of the compiled modules' names, sizes and modification times
    under ``root``. numba checks a cached function against its own file only, and a caller's
    cached code holds the callees it was compiled with: a changed kernels.py would leave the
    dual solver running the old rows. A cache folder per fingerprint cannot."""
    import hashlib

    h = hashlib.sha1()
    for name in COMPILED_MODULES:
        try:
            st = _os.stat(_os.path.join(root, name))
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns};".encode())
        except OSError:
            h.update(f"{name}:missing;".encode())
    return h.hexdigest()[:12]


def _numba_cache_dir() -> str:
    """numba's on-disk cache under the user's cache folder
    (``$XDG_CACHE_HOME/safeclf/numba/<fingerprint>``, :func:`_compiled_fingerprint`), never
    beside the installed sources (numba's default when that folder is writable)."""
    return _os.path.join(_user_cache(), "safeclf", "numba",
                         _compiled_fingerprint(_os.path.dirname(_os.path.abspath(__file__))))


def _writable(path: str) -> bool:
    """Whether ``path`` is a folder this process can write in, or could be made as one: its
    nearest existing ancestor is a writable folder (nothing is created here)."""
    path = _os.path.abspath(path)
    while not _os.path.lexists(path):
        parent = _os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return _os.path.isdir(path) and _os.access(path, _os.W_OK | _os.X_OK)


def _set_cache_dirs() -> None:
    """Point numba's cache (``NUMBA_CACHE_DIR``, default :func:`_numba_cache_dir`) at a folder
    that can be written. When it, or matplotlib's cache under the same user cache folder,
    cannot be written (a file in the path, no permission), both go to a new private temporary
    folder removed at exit, with a one-line warning, instead of stopping safeclf (numba fails
    to compile cached functions without a cache, or writes beside the installed sources) or
    printing matplotlib's own warnings. Never a shared ``/tmp`` name: numba's cache files are
    pickles, and another user's could run code."""
    env = _os.environ
    wanted = {"NUMBA_CACHE_DIR": env.get("NUMBA_CACHE_DIR") or _numba_cache_dir()}
    if not env.get("MPLCONFIGDIR"):  # matplotlib's default cache folder
        wanted["MPLCONFIGDIR"] = _os.path.join(_user_cache(), "matplotlib")
    env["NUMBA_CACHE_DIR"] = wanted["NUMBA_CACHE_DIR"]
    unwritable = [name for name, path in wanted.items() if not _writable(path)]
    if not unwritable:
        return
    import atexit
    import shutil
    import tempfile

    fallback = tempfile.mkdtemp(prefix="safeclf-cache-")
    atexit.register(shutil.rmtree, fallback, True)  # workers inherit the paths, not this hook
    for name in unwritable:
        env[name] = _os.path.join(fallback, name.lower())
    _sys.stderr.write(f"warning: cache folder '{wanted[unwritable[0]]}' cannot be written (see "
                      f"XDG_CACHE_HOME, NUMBA_CACHE_DIR); caching in '{fallback}' for this run "
                      "only\n")


# Set before any module imports numba or matplotlib; worker processes inherit the environment
# (and so the fallback, without a warning of their own).
_set_cache_dirs()
if "numba" in _sys.modules:  # imported before safeclf: its config has already read the environment
    _sys.modules["numba"].config.CACHE_DIR = _os.environ["NUMBA_CACHE_DIR"]

from safeclf._utils.version import __version__  # noqa: E402  (after the cache set-up)

#: The public Python API, imported on first use so that ``import safeclf`` (and the command
#: line's start-up) stays cheap: name -> module defining it.
_LAZY = {"run": "safeclf.api", "load_run": "safeclf.api", "Run": "safeclf.api",
         "read_spec": "safeclf.api", "Spec": "safeclf.spec.schema", "SafeclfError": "safeclf.errors",
         "SpecError": "safeclf.errors", "DataError": "safeclf.errors",
         "load_model": "safeclf.serve.model", "audit": "safeclf.serve.audit"}

__all__ = ["DataError", "Run", "SafeclfError", "Spec", "SpecError", "__version__", "audit",
           "estimators", "load_model", "load_run", "read_spec", "run"]


def __getattr__(name: str):
    import importlib

    if name == "estimators":
        return importlib.import_module("safeclf.estimators")
    if name not in _LAZY:
        raise AttributeError(f"module 'safeclf' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

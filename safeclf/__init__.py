"""safeclf: an experiment runner for classifiers that come with a promise."""

import os as _os
import sys as _sys


def _numba_cache_dir() -> str:
    """numba's on-disk cache under the user's cache folder (``$XDG_CACHE_HOME/safeclf/numba``),
    never beside the installed sources (numba's default when that folder is writable)."""
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    return _os.path.join(base, "safeclf", "numba")


# Set before any module imports numba; worker processes inherit the environment.
_os.environ.setdefault("NUMBA_CACHE_DIR", _numba_cache_dir())
if "numba" in _sys.modules:  # imported before safeclf: its config has already read the environment
    _sys.modules["numba"].config.CACHE_DIR = _os.environ["NUMBA_CACHE_DIR"]

__version__ = "0.1.0"

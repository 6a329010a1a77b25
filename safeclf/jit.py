"""numba's ``njit`` with its on-disk cache outside the source tree.

Compiled code is cached (``cache=True``) under the user's cache folder
(``$XDG_CACHE_HOME/safeclf/numba`` or ``~/.cache/safeclf/numba``) unless ``NUMBA_CACHE_DIR``
is set: without this, numba writes ``__pycache__`` files next to the module, i.e. into the
source tree. Import ``njit`` from here before decorating; the folder is chosen once, when this
module is first imported.
"""

from __future__ import annotations

import os
from pathlib import Path

import numba
from numba import njit

__all__ = ["njit", "cache_dir"]


def cache_dir() -> str:
    """The folder numba caches compiled code in (created on first use by numba)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "safeclf" / "numba")


if not numba.config.CACHE_DIR:
    numba.config.CACHE_DIR = cache_dir()

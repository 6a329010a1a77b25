"""Seconds numba spends compiling in this process, for the job records and the run's log.

numba compiles a function on its first call unless its on-disk cache (``NUMBA_CACHE_DIR``,
set in ``safeclf/__init__.py``) holds the compiled code; ``make install`` fills that cache
(``python -m safeclf.cli.warm``), so a first run loads instead of compiling. The timer counts
the outermost ``numba:compile`` events only (a function's callees compile inside its event).
"""

from __future__ import annotations

import os
import sys
import time

_state = {"seconds": 0.0, "depth": 0, "start": 0.0, "listening": False}


def compile_seconds() -> float | None:
    """Seconds numba has spent compiling in this process since the timer started listening
    (the first call made after numba was imported); None while numba is not imported, so
    that a process that never uses compiled code does not import it."""
    if "numba" not in sys.modules:
        return None
    if not _state["listening"]:
        _listen()
    return _state["seconds"]


def cache_dir() -> str:
    """Where numba reads and writes its compiled code (``NUMBA_CACHE_DIR``)."""
    return os.environ.get("NUMBA_CACHE_DIR", "")


def _listen() -> None:
    from numba.core import event

    class _Timer(event.Listener):
        def on_start(self, ev):
            if _state["depth"] == 0:
                _state["start"] = time.perf_counter()
            _state["depth"] += 1

        def on_end(self, ev):
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _state["seconds"] += time.perf_counter() - _state["start"]

    event.register("numba:compile", _Timer())
    _state["listening"] = True

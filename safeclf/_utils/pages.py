"""Ordinary (4 kB) pages for numpy's large arrays within a block of code.

numpy advises every array of 4 MiB and more for transparent huge pages. Where the kernel's THP
defrag setting is ``madvise`` (a common default) the first touch of each 2 MiB page may then
wait for direct compaction, and on a virtual machine for the host to back the whole 2 MiB:
certifying a model on a million rows spent 0.16–0.32 s of system time in those first
touches, against 0.05–0.08 s with ordinary pages, and the same user time
(benchmarks/NOTES.md). Code that allocates many short-lived large arrays runs inside
:func:`small_pages`; numpy's setting is restored when the last such block (of any thread) ends.
"""

from __future__ import annotations

import contextlib
import threading

_lock = threading.Lock()
_inside = 0  # blocks open in this process
_before = None  # numpy's setting when the first of them began


def _setter():
    """numpy's switch of the advice (returns the previous setting), None where it has none."""
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy 1.x
        from numpy.core import multiarray
    return getattr(multiarray, "_set_madvise_hugepage", None)


def huge_pages_advised() -> bool | None:
    """Whether numpy advises its large arrays for huge pages now (None: it cannot tell)."""
    switch = _setter()
    if switch is None:
        return None
    with _lock:
        now = switch(True)
        switch(now)
    return bool(now)


@contextlib.contextmanager
def small_pages():
    """numpy's large arrays allocated in this block are not advised for huge pages."""
    global _inside, _before
    switch = _setter()
    if switch is None:
        yield
        return
    with _lock:
        if _inside == 0:
            _before = switch(False)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                switch(_before)

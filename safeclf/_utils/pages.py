"""Ordinary (4 kB) pages for large, short-lived arrays: numpy's within a block of code
(:func:`small_pages`), or one array in a mapping of its own (:func:`small_page_array`).

numpy advises every array of 4 MiB and more for transparent huge pages. Where the kernel's THP
defrag setting is ``madvise`` (a common default) the first touch of each 2 MiB page may then
wait for direct compaction, and on a virtual machine for the host to back the whole 2 MiB:
certifying a model on a million rows spent 0.16–0.32 s of system time in those first
touches, against 0.05–0.08 s with ordinary pages, and the same user time
(benchmarks/NOTES.md), and an MC-SVM fit of 0.11 s sometimes took 0.5 s touching its kernel
cache. Code that allocates many short-lived large arrays runs inside :func:`small_pages`;
numpy's setting is restored when the last such block (of any thread) ends. One large buffer
that a process fills again and again is a :func:`small_page_array`.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
import weakref

import numpy as np

_lock = threading.RLock()  # re-entrant: a finalizer (_give_back) may run inside a block
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


#: At most one mapping that a dropped :func:`small_page_array` gave back, for the next one of
#: this process that fits in it (a grid of fits on the same rows then touches fresh memory once).
_spare: list[mmap.mmap] = []


def small_page_array(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-ordered array in an anonymous mapping of its own, advised against
    huge pages where the platform has that advice; only the pages written are ever touched.

    When the array and every view of it are gone, the mapping is kept as this process's one
    spare (its pages marked free, so the system takes them back under memory pressure), and the
    next such array that fits in it reuses it instead of touching fresh pages."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    nbytes = max(count, 1) * dtype.itemsize
    buf = None
    with _lock:
        if _spare and len(_spare[0]) >= nbytes:
            buf = _spare.pop()
    if buf is None:
        buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        advice = getattr(mmap, "MADV_NOHUGEPAGE", None)
        if advice is not None:
            buf.madvise(advice)
    whole = np.frombuffer(buf, dtype=dtype, count=max(count, 1))
    # every view of the array (rows, slices, reshapes) has ``whole`` as its base: the mapping
    # is given back only once none is left
    weakref.finalize(whole, _give_back, buf).atexit = False
    return whole[:count].reshape(shape)


def _give_back(buf: mmap.mmap) -> None:
    free = getattr(mmap, "MADV_FREE", None)
    if free is not None:
        buf.madvise(free)
    with _lock:
        _spare[:] = [buf]

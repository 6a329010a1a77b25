"""Worker processes that end when the process that started them dies.

loky keeps idle workers for five minutes, and a worker whose parent was SIGKILLed (no chance
to shut the pool down) would stay that long, holding its memory and joblib's ``/dev/shm``
folders. Each worker runs :func:`exit_with_parent` as its initializer: a daemon thread that
sees the worker re-parented (``os.getppid()`` changes when the parent dies) and ends the
process; loky's resource tracker then sees its last client gone, removes what they shared and
exits. Polling rather than Linux's ``PR_SET_PDEATHSIG``, which fires when the *thread* that
started the worker ends (loky may start workers from a thread that ends before the pool).
The thread needs the GIL: a worker inside one long compiled call (numba without ``nogil``)
ends when that call returns.
"""

from __future__ import annotations

import os
import threading
import time

#: Seconds between two looks at the parent.
INTERVAL = 0.5


def exit_with_parent() -> None:
    """Start the watcher thread in this worker (a loky ``initializer``)."""
    parent = os.getppid()
    threading.Thread(target=_watch, args=(parent,), name="safeclf-exit-with-parent",
                     daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(INTERVAL)
    os._exit(70)  # the parent is gone: nobody will read this worker's results

"""Paths a user names on the command line, checked before they are read: a missing file is
told apart from a folder, a device, a FIFO, a socket and a symlink loop, each said as it is
(reading ``/dev/zero`` or a FIFO as a spec would never end)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from safeclf.errors import SpecError

_KINDS = [(stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a regular file"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")]


def what_is(path: str | Path) -> str:
    """``"a folder"``, ``"a regular file"``, ``"a FIFO (named pipe)"``, ... for what exists at
    ``path``; ``"a symlink loop"``, ``"missing"`` or ``"unreachable (<reason>)"`` otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "missing"
        return f"unreachable ({exc.strerror})"
    return next((name for test, name in _KINDS if test(mode)), "not a file or folder")


def require_file(path: str | Path, what: str, folder_hint: str = "") -> None:
    """Raise a :class:`SpecError` naming ``what`` unless ``path`` is a regular file this
    process may read; ``folder_hint`` follows the message when ``path`` is a folder."""
    kind = what_is(path)
    if kind == "a regular file":
        if not os.access(path, os.R_OK):
            raise SpecError(f"{what} '{path}' cannot be read: permission denied")
        return
    if kind == "missing":
        raise SpecError(f"{what} '{path}' does not exist")
    if kind == "a folder":
        raise SpecError(f"{what} '{path}' is a folder" + (f"; {folder_hint}" if folder_hint else ""))
    raise SpecError(f"{what} '{path}' is {kind}, not a regular file")


def require_folder(path: str | Path, what: str, writable: bool = False) -> None:
    """Raise a :class:`SpecError` naming ``what`` unless ``path`` is a folder this process may
    list (and, with ``writable``, write into)."""
    kind = what_is(path)
    if kind == "missing":
        raise SpecError(f"{what} '{path}' does not exist")
    if kind != "a folder":
        raise SpecError(f"{what} '{path}' is {kind}, not a folder")
    if not os.access(path, os.R_OK | os.X_OK):
        raise SpecError(f"{what} '{path}' cannot be read: permission denied")
    if writable and not os.access(path, os.W_OK):
        raise SpecError(f"{what} '{path}' is not writable")

"""Paths a user names on the command line, checked before they are read or written.

* What a path is: a missing file is told apart from a folder, a device, a FIFO, a socket and a
  symlink loop, each said as it is (reading ``/dev/zero`` or a FIFO as a spec would never end).
* Inside a folder (:func:`inside`, :func:`links_out`): a run folder, or a folder written by
  ``safeclf deploy``, may come from someone else and is data. Every file safeclf reads from it,
  and every name it takes from its records (a job id in ``metrics.csv``) or from ``--job``, is
  a file *of that folder*: a name with ``/`` or ``..``, an absolute path, or a symlink whose
  target lies outside the folder is refused, so a folder cannot make safeclf read (and embed
  in a report) or write a file elsewhere.
* Where to write (:func:`writable_folder`, :func:`writable_file`, :func:`not_overwriting`):
  the one check that a folder can be written into or created, tried rather than guessed
  (``os.access`` says yes to root everywhere, ``/proc`` and ``/sys`` included), and that an
  output is not one of the command's inputs nor inside the folder it reads."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
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


# --------------------------------------------------------------------------------------------
# inside a folder


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def plain_name(name: str, folder: str | Path, what: str = "") -> str:
    """``name`` if it names an entry of a folder: not empty, not ``.`` or ``..``, without a path
    separator or a NUL; else a :class:`SpecError` headed by ``what`` (``"--job:"``)."""
    text = str(name)
    if text in ("", ".", "..") or "/" in text or os.sep in text or "\0" in text \
            or (os.altsep and os.altsep in text):
        raise SpecError(f"{what + ' ' if what else ''}'{text}' is not a plain name: a path read "
                        f"from a run folder's records or given for it must stay inside "
                        f"'{folder}'")
    return text


def inside(folder: str | Path, *names: str, what: str = "") -> Path:
    """``folder/names...``, a path the folder holds: the one check of every file safeclf reads
    from a run folder (or a deployed model's folder).

    Parameters
    ----------
    folder : str or Path
        The folder (itself may be a symlink: its target is the folder).
    *names : str
        The path's components below ``folder``, each a plain name: not empty, not ``.`` or
        ``..``, without a path separator or a NUL (so neither an absolute path nor a climb).
    what : str
        Where a name came from, heading the message (``"--job:"``).

    Returns
    -------
    Path
        ``Path(folder, *names)`` (it need not exist).

    Raises
    ------
    SpecError
        A name is not a plain name, or a component on the way is a symlink whose target
        (followed to the end) lies outside ``folder``.
    """
    head = f"{what} " if what else ""
    for name in names:
        plain_name(name, folder, what)
    root = os.path.realpath(folder)
    path = Path(folder)
    for name in names:
        path = path / name
        if os.path.islink(path):
            target = os.path.realpath(path)
            if not _within(target, root):
                raise SpecError(
                    f"{head}'{path}' is a symlink to '{target}', outside '{folder}'; safeclf "
                    "reads only files inside the folder it is given (a folder received from "
                    "someone else is data), so it is refused")
    return path


def links_out(folder: str | Path, what: str = "") -> None:
    """Raise :func:`inside`'s :class:`SpecError` for the first symlink anywhere under
    ``folder`` (symlinked folders are not entered) whose target lies outside it: for a command
    that will write into the folder (``--resume``), where a plot drawn through such a link
    would overwrite the file it points to. Only symlinks are resolved, so a folder of many
    records is scanned at the cost of listing it."""
    stack = [()]
    while stack:
        below = stack.pop()
        try:
            entries = list(os.scandir(Path(folder, *below)))
        except OSError:
            continue  # an unreadable folder is the reader's to report
        for entry in entries:
            if entry.is_symlink():
                inside(folder, *below, entry.name, what=what)
            elif entry.is_dir(follow_symlinks=False):
                stack.append((*below, entry.name))


# --------------------------------------------------------------------------------------------
# where to write


def _probe(folder: Path) -> str | None:
    """``None`` if a folder can be made (and is removed at once) in ``folder``, else why not."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".safeclf-probe-", dir=folder))
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def writable_folder(path: str | Path, what: str, noun: str = "folder",
                    make_parents: bool = True) -> None:
    """Raise a :class:`SpecError` headed by ``what`` (``"--out:"``) unless ``path`` is a folder
    this process can write into, or a folder it can create (``make_parents``: its nearest
    existing ancestor is a writable folder; else its parent must exist). Writability is tried:
    a folder is made in the folder that would receive the writes, and removed at once."""
    path = Path(path)
    kind = what_is(path)
    if kind == "a folder":
        why = _probe(path)
        if why is not None:
            raise SpecError(f"{what} {noun} '{path}' is not writable ({why})")
        return
    if kind != "missing":
        raise SpecError(f"{what} '{path}' is {kind}, not a folder")
    parent = path.absolute().parent
    if make_parents:
        while what_is(parent) == "missing" and parent != parent.parent:
            parent = parent.parent
    kind = what_is(parent)
    if kind == "missing":
        raise SpecError(f"{what} folder '{parent}' does not exist")
    if kind != "a folder":
        raise SpecError(f"{what} cannot create {noun} '{path}': '{parent}' is {kind}, not a "
                        "folder")
    why = _probe(parent)
    if why is not None:
        raise SpecError(f"{what} cannot create {noun} '{path}': folder '{parent}' is not "
                        f"writable ({why})")


def writable_file(path: str | Path, what: str, expected: str = "a CSV file") -> None:
    """Raise a :class:`SpecError` headed by ``what`` (``"--out"``) unless ``path`` is a file
    that can be written: missing or a regular file, in an existing folder where a file can be
    made (tried, as :func:`writable_folder` does)."""
    path = Path(path)
    kind = what_is(path)
    if kind not in ("missing", "a regular file"):
        raise SpecError(f"{what} '{path}' is {kind}; give the path of {expected} to write")
    parent = path.absolute().parent
    if what_is(parent) != "a folder":
        raise SpecError(f"{what}: folder '{Path(path).parent}' does not exist")
    why = _probe(parent)
    if why is not None or (kind == "a regular file" and not os.access(path, os.W_OK)):
        raise SpecError(f"{what} '{path}' cannot be written: "
                        f"{why or 'permission denied'}")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def not_overwriting(path: str | Path, what: str, files: dict[str, Path] | None = None,
                    folders: dict[str, Path] | None = None) -> None:
    """Raise a :class:`SpecError` when the output ``path`` is (through any symlink or hard
    link) one of the command's input ``files`` or lies inside one of its input ``folders``
    (or is that folder); the keys say what each input is (``"the --data file"``)."""
    for said, file in (files or {}).items():
        if file is not None and _same_file(Path(path), Path(file)):
            raise SpecError(f"{what} '{path}' is {said}; an input is never overwritten: give "
                            "another path (nothing was written)")
    target = os.path.realpath(path)
    for said, folder in (folders or {}).items():
        if folder is not None and _within(target, os.path.realpath(folder)):
            where = "is" if target == os.path.realpath(folder) else "is inside"
            raise SpecError(f"{what} '{path}' {where} {said} '{folder}'; its files are never "
                            "overwritten: give a path outside it (nothing was written)")

"""Atomic file writes: a temporary file in the target's folder, fsync, then ``os.replace``."""

from __future__ import annotations

import contextlib
import os

from kagreport._signals import stops_deferred

__all__ = ["write_atomic", "write_atomic_set"]


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a part.

    Raises
    ------
    OSError
        If the folder is missing or not writable; ``path`` is then untouched.
    """
    temporary = _prepare(path, data)
    try:
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(path)


def write_atomic_set(folder: str | os.PathLike[str], files: dict[str, bytes | str]) -> None:
    """Write ``files`` (name -> data) into ``folder`` as one set: every file is written and
    synced first, then all are renamed into place with stop signals held
    (:func:`kagreport._signals.stops_deferred`), so a reader, or a Ctrl-C, sees the old set
    or the new one, never a mix (short of a power cut between the renames).

    Raises
    ------
    OSError
        If the folder is missing or not writable; its files are then untouched.
    """
    ready: list[tuple[str, str]] = []
    try:
        for name, data in files.items():
            target = os.path.join(folder, name)
            ready.append((_prepare(target, data), target))
        with stops_deferred():
            for temporary, target in ready:
                os.replace(temporary, target)
    except BaseException:
        for temporary, _ in ready:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise
    _sync_folder(os.path.join(folder, "."))


def _prepare(path: str | os.PathLike[str], data: bytes | str) -> str:
    """The finished, synced temporary file beside ``path`` that will replace it."""
    import tempfile  # here: `kagreport stats` without a store writes nothing (random, shutil)

    target = os.fspath(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    folder = os.path.dirname(os.path.abspath(target))
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        if os.path.exists(target):
            # Keep the permissions the file had, not mkstemp's 0600.
            os.chmod(temporary, os.stat(target).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def _sync_folder(path: str | os.PathLike[str]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    with contextlib.suppress(OSError):  # make the rename durable where the OS allows
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

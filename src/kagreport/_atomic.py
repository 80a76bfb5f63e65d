"""Atomic file writes: a temporary file in the target's folder, fsync, then ``os.replace``."""

from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a part.

    Raises
    ------
    OSError
        If the folder is missing or not writable; ``path`` is then untouched.
    """
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
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # make the rename durable where the OS allows
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

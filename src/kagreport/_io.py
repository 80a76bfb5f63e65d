"""Reading a whole file a user named, without blocking on what is not a regular file."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from kagreport._errors import NotRegularFileError

__all__ = ["open_regular_file", "read_regular_file"]

# Non-blocking: opening a FIFO must not wait for a writer (it is then refused).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """A regular file opened for reading (binary), refused as :func:`read_regular_file`
    refuses it (a FIFO with no writer cannot hang the caller): for readers that seek,
    such as :class:`zipfile.ZipFile`. The caller closes it.

    Raises
    ------
    IsADirectoryError, NotRegularFileError, OSError
        As :func:`read_regular_file`.
    """
    name = os.fspath(path)
    fd = os.open(name, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(0, "not a regular file (a FIFO, socket or device)", name)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_regular_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file.

    The file is opened non-blocking, so a FIFO with no writer cannot hang the caller, and
    refused unless ``fstat`` says it is a regular file.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a folder (``strerror`` "Is a directory").
    NotRegularFileError
        If it is a FIFO, socket or device (``strerror`` "not a regular file (a FIFO,
        socket or device)").
    OSError
        As :func:`os.open` and :func:`os.read` do.
    """
    with open_regular_file(path) as file:
        return file.read()

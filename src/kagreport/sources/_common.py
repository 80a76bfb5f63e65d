"""What the readers share: a look at a file's first bytes for format detection."""

from __future__ import annotations

from pathlib import Path

__all__ = ["file_head"]


def file_head(path: Path, suffixes: tuple[str, ...], size: int = 4096) -> bytes | None:
    """The first ``size`` bytes of ``path`` if it is a regular file named ``*<suffix>``
    for one of ``suffixes``; None otherwise or when it cannot be read.

    Never raises, and never blocks: a FIFO or device is not a regular file.
    """
    if path.suffix not in suffixes or not path.is_file():
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return None

"""What the readers share: a look at a file's first bytes for format detection, and the
lines of a JSON Lines text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import AnyStr

__all__ = ["file_head", "json_lines"]


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


def json_lines(text: AnyStr) -> Iterator[tuple[int, AnyStr]]:
    r"""(line number from 1, line) of each non-blank line of a JSON Lines text (str or bytes).

    Lines end at ``\n`` only (jsonlines.org), never at the other breaks
    :meth:`str.splitlines` knows: U+2028, U+2029 and U+0085 may stand raw inside a JSON
    string. A ``\r`` before the ``\n`` is JSON white space and is left to the decoder.
    """
    newline = "\n" if isinstance(text, str) else b"\n"
    for number, line in enumerate(text.split(newline), 1):
        if line.strip():
            yield number, line

"""Text in and out of the command line whatever the locale.

Out: standard streams that write what they cannot encode as escapes, JSON that stays JSON.
In: command-line values and file names as text that can be written to a UTF-8 file.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import re
import sys

__all__ = ["as_text", "inert", "write_json", "write_lossily"]

_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
# Controls but the line feed (C0, DEL, C1), line and paragraph separators, and the bidi
# controls that would reorder a terminal's line (U+061C, U+200E/F, U+202A-E, U+2066-9).
_UNSAFE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def inert(text: str) -> str:
    """``text`` as a terminal shows it as it is: an escape sequence or a bidi override
    (U+202E) from a result file's name is written as its escape (``\\x1b``, ``\\u202e``),
    as ``repr`` writes it. Line feeds stay: kag's own messages (an invalid regular
    expression) span lines, and the library quotes names (``repr``) where it names them."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 result file``, ``2 result files``: a count and its noun in the right number, as
    every view writes them (``kagreport._format.plural``, which the CLI does not import)."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


def write_lossily() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` write what their encoding lacks as escapes.

    Whatever the locale (ASCII, cp1252, Latin-1, ``LC_ALL=C``), a character the stream
    cannot encode is written as a backslash escape (``\\xe9``, ``\\u23ce``) instead of ending
    the command with a ``UnicodeEncodeError``. On a UTF-8 stream every valid character is
    written unchanged; lone surrogates (undecodable bytes of a file name) are escaped.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors != "backslashreplace":
            # A closed or detached stream fails later, where the command writes to it.
            with contextlib.suppress(OSError, ValueError):
                stream.reconfigure(errors="backslashreplace")


def write_json(text: str) -> None:
    """Write JSON text to ``sys.stdout``; as is on UTF-8, else ASCII with ``\\uXXXX`` escapes.

    Outside its strings JSON is ASCII, so escaping every other character keeps the document
    valid and equal (RFC 8259, section 7), where backslash escapes such as ``\\xe9`` would not.
    """
    if not _is_utf8(getattr(sys.stdout, "encoding", None)):
        text = _NOT_ASCII.sub(_json_escape, text)
    sys.stdout.write(text)


def _is_utf8(encoding: str | None) -> bool:
    try:
        return encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def _json_escape(match: re.Match[str]) -> str:
    # UTF-16 code units: a pair for a character beyond U+FFFF, as JSON spells it.
    units = match.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i] << 8 | units[i + 1]:04x}" for i in range(0, len(units), 2))


def as_text(value: str) -> str:
    """A command-line value or file name as text fit for a report, a page or a title.

    Python hands over bytes it cannot decode (any byte but ASCII under ``LC_ALL=C``, a
    Latin-1 file name under UTF-8) as lone surrogates, which no UTF-8 file can hold. Here
    those bytes are decoded again as UTF-8, and what is still not UTF-8 becomes U+FFFD, as
    ``kag`` shows such names. Text without surrogates is returned unchanged. Paths keep
    their surrogates: they name the file.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            data = os.fsencode(value)
        except UnicodeEncodeError:  # not from the command line: undo surrogateescape only
            data = value.encode("utf-8", "surrogateescape")
        return data.decode("utf-8", "replace")
    return value

"""``kag stats find``: search the responses of a result tree with a regular expression.

Source: kag ``src/subcommand/stats/subcommand/find/mod.rs`` and ``KAG_STATS_SPEC.md`` section 3.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kagreport._errors import UsageError
from kagreport.grading._grade import ProgressCallback
from kagreport.grading._rule import WHITE_SPACE
from kagreport.kag import decode_result, iter_find_entries, read_bytes
from kagreport.kag._jsonfmt import dumps_pretty

__all__ = ["FindMatch", "FindReport", "Pattern", "compile_pattern", "find"]

logger = logging.getLogger("kagreport.grading")


@dataclass(frozen=True, slots=True)
class FindMatch:
    """One result file whose response matched: its path and the full, untrimmed response."""

    path: str
    response: str

    @property
    def display_path(self) -> str:
        """The path as text; bytes that are not UTF-8 (in folder names) become U+FFFD."""
        return self.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    @property
    def line(self) -> str:
        """``<path>\\t<response>`` with each newline shown as `` ⏎ `` (kag's fzf line)."""
        return f"{self.display_path}\t{self.response.replace(chr(10), ' ⏎ ')}"


@dataclass(frozen=True, slots=True)
class FindReport:
    """The matches of a search, sorted by path, and how many files were searched.

    Attributes
    ----------
    matches : tuple of FindMatch
        Sorted by path (spec decision; kag keeps the file system's order).
    total : int
        Qualifying files (``<prefix>*.json`` at any depth), readable or not.
    skipped : tuple of str
        Qualifying files that could not be read or parsed (warned about; kag too
        skips them).
    """

    matches: tuple[FindMatch, ...]
    total: int
    skipped: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.matches)

    def __iter__(self) -> Iterator[FindMatch]:
        return iter(self.matches)

    def to_dict(self) -> dict[str, Any]:
        """kag's JSON document: ``{"matches", "total", "paths"}``."""
        return {
            "matches": len(self.matches),
            "total": self.total,
            "paths": [m.display_path for m in self.matches],
        }

    def to_json(self) -> str:
        """``kag stats find --format json`` output (with its trailing newline)."""
        return dumps_pretty(self.to_dict()) + "\n"

    @property
    def summary(self) -> str:
        """The closing line kag prints on stderr in text mode."""
        if not self.matches:
            return "No result matched the pattern."
        return (
            f"{len(self.matches)} occurrence(s) out of {self.total} result file(s) "
            "matched the pattern."
        )


class Pattern:
    """A compiled ``stats find`` pattern: Rust's ``regex`` crate, as kag compiles it.

    Attributes
    ----------
    pattern : str
        The pattern as given.
    search : callable
        ``search(text) -> bool``: whether the pattern matches anywhere in ``text``
        (``Regex::is_match``).
    """

    __slots__ = ("pattern", "search")

    def __init__(self, pattern: str, search: Any) -> None:
        self.pattern = pattern
        self.search = search

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


_RY_PREFIX = "Invalid regex: "  # what the binding puts before the crate's own message


def compile_pattern(pattern: str | Any) -> Any:
    """Compile a search pattern with Rust's ``regex`` crate, as kag does.

    kag parses its ``REGEX`` argument with ``regex::Regex::new`` (clap's value
    parser), so the syntax, Unicode classes (``\\d`` matches U+0663), the 10 MiB
    compiled size limit and what is invalid are the crate's: the same crate, through
    the ``ry`` binding (regex 1.13.1, regex-syntax 0.8.11, kag's ``Cargo.lock``),
    built with the crate's defaults. Matching is linear in the text, so no pattern
    can hang a search. Anything else (an object with a ``search(text)`` method
    whose result is true on a match) is returned unchanged.

    Returns
    -------
    Pattern

    Raises
    ------
    UsageError
        If the crate refuses the pattern (exit code 2); the message names the
        pattern and gives the crate's error, as kag prints it.
    """
    if not isinstance(pattern, str):
        return pattern
    from ry import Regex

    try:
        regex = Regex(pattern)
    except ValueError as exc:
        reason = str(exc)
        reason = reason.removeprefix(_RY_PREFIX)
        raise UsageError(f"invalid regular expression {pattern!r}: {reason}") from None
    return Pattern(pattern, regex.is_match)


def find(
    pattern: str | Any,
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
) -> FindReport:
    """Find the result files whose response matches ``pattern``.

    Parameters
    ----------
    pattern : str or Pattern
        Searched anywhere (Rust ``regex`` syntax, see :func:`compile_pattern`)
        in each response trimmed of Unicode White_Space.
    results : path, default "."
        The results root; walked to any depth.
    prefix : str, default ""
        Only files named ``<prefix>*.json`` are searched.
    progress : callable, optional
        Called with the number of files searched so far, every 1,000 files.

    Returns
    -------
    FindReport

    Raises
    ------
    UsageError
        If ``pattern`` is not a valid regular expression.
    ResultTreeError
        If the root is missing or a folder cannot be read.

    Notes
    -----
    Files that cannot be read or parsed, or are not regular files, are logged
    as warnings and skipped (still counted in ``total``); error records are
    skipped silently; file names that are not UTF-8 are not searched (as kag).
    Paths are ``results`` joined with each file's relative path.
    """
    search = compile_pattern(pattern).search
    matches = []
    skipped = []
    total = 0
    for entry in iter_find_entries(results, prefix):
        path = entry.path
        total += 1
        if progress is not None and total % 1000 == 0:
            progress(total)
        try:
            # The folder entry's type says "regular file" without a stat; a
            # symlink is followed. A FIFO or device: kag would block on it, or
            # read without end.
            if not entry.is_file(follow_symlinks=False) and not stat.S_ISREG(os.stat(path).st_mode):
                raise OSError(0, "not a regular file")
            data = read_bytes(path)
        except OSError as exc:
            logger.warning("failed to read result file %s: %s", path, exc.strerror or exc)
            skipped.append(path)
            continue
        try:
            result = decode_result(data).result
        except ValueError as exc:
            logger.warning("failed to parse result file %s: %s", path, exc)
            skipped.append(path)
            continue
        if result is not None and search(result.strip(WHITE_SPACE)):
            matches.append(FindMatch(path, result))
    matches.sort(key=lambda m: m.path)
    return FindReport(tuple(matches), total, tuple(skipped))

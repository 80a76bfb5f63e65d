"""``kag stats find``: search the responses of a result tree with a regular expression.

Source: kag ``src/subcommand/stats/subcommand/find/mod.rs`` and ``KAG_STATS_SPEC.md`` section 3.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kagreport._errors import UsageError
from kagreport.grading._grade import ProgressCallback
from kagreport.grading._rule import WHITE_SPACE
from kagreport.kag import decode_result, iter_find_candidates, read_bytes
from kagreport.kag._jsonfmt import dumps_pretty

__all__ = ["FindMatch", "FindReport", "compile_pattern", "find"]

logger = logging.getLogger("kagreport.grading")


@dataclass(frozen=True, slots=True)
class FindMatch:
    """One result file whose response matched: its path and the full, untrimmed response."""

    path: str
    response: str

    @property
    def line(self) -> str:
        """``<path>\\t<response>`` with each newline shown as `` ⏎ `` (kag's fzf line)."""
        return f"{self.path}\t{self.response.replace(chr(10), ' ⏎ ')}"


@dataclass(frozen=True, slots=True)
class FindReport:
    """The matches of a search, sorted by path, and how many files were searched.

    Attributes
    ----------
    matches : tuple of FindMatch
        Sorted by path (spec decision; kag keeps the file system's order).
    total : int
        Qualifying files (``<prefix>*.json`` at any depth), readable or not.
    """

    matches: tuple[FindMatch, ...]
    total: int

    def __len__(self) -> int:
        return len(self.matches)

    def __iter__(self) -> Iterator[FindMatch]:
        return iter(self.matches)

    def to_dict(self) -> dict[str, Any]:
        """kag's JSON document: ``{"matches", "total", "paths"}``."""
        return {
            "matches": len(self.matches),
            "total": self.total,
            "paths": [m.path for m in self.matches],
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


def compile_pattern(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    """Compile a search pattern (Python :mod:`re` syntax).

    Raises
    ------
    UsageError
        If the pattern is not a valid regular expression (exit code 2).
    """
    if isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"invalid regular expression {pattern!r}: {exc}") from None


def find(
    pattern: str | re.Pattern[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
) -> FindReport:
    """Find the result files whose response matches ``pattern``.

    Parameters
    ----------
    pattern : str or re.Pattern
        Searched (``re.search``) in each response trimmed of Unicode White_Space.
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
    Files that cannot be read or parsed are logged as warnings and skipped
    (still counted in ``total``); error records are skipped silently.
    Paths are ``results`` joined with each file's relative path.
    """
    regex = compile_pattern(pattern)
    matches = []
    total = 0
    for path in iter_find_candidates(results, prefix):
        total += 1
        if progress is not None and total % 1000 == 0:
            progress(total)
        try:
            data = read_bytes(path)
        except OSError as exc:
            logger.warning("failed to read result file %s: %s", path, exc.strerror or exc)
            continue
        try:
            record = decode_result(data)
        except ValueError as exc:
            logger.warning("failed to parse result file %s: %s", path, exc)
            continue
        if record.result is not None and regex.search(record.result.strip(WHITE_SPACE)):
            matches.append(FindMatch(path, record.result))
    matches.sort(key=lambda m: m.path)
    return FindReport(tuple(matches), total)

"""Searching a run's responses as ``kagreport stats find`` does: ``response_matcher``."""

from __future__ import annotations

from collections.abc import Callable

from kagreport.grading._find import compile_pattern
from kagreport.grading._rule import WHITE_SPACE

__all__ = ["response_matcher"]


def response_matcher(pattern: str) -> Callable[[str | None], bool]:
    """A test of one response against ``pattern``, as ``kag stats find`` tests it.

    The pattern is Rust ``regex`` syntax (the crate kag uses, through ``ry``); it is
    searched in the response trimmed of Unicode White_Space. ``None`` (no response: an
    error record, an unreadable file) never matches.

    Raises
    ------
    UsageError
        For a pattern the regex crate refuses (the message names it and gives the
        crate's reason).
    """
    regex = compile_pattern(pattern)

    def matches(response: str | None) -> bool:
        return response is not None and bool(regex.search(response.strip(WHITE_SPACE)))

    return matches

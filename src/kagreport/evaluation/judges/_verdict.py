"""Reading a score from a judge model's reply: a labelled verdict line, a yes/no, a
rating on a 1-5 or 1-10 scale, or a JSON object (see ``parse_verdict``); and the
judgement of one reply, read up to ``MAX_REPLY_CHARS`` characters."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from kagreport.evaluation.judges._protocol import JudgeFailure, Judgement, Usage

if TYPE_CHECKING:
    from kagreport.evaluation._items import AnswerItem

__all__ = ["MAX_REPLY_CHARS", "Scale", "parse_verdict"]

#: The verdict scales a judge can read.
Scale = Literal["binary", "1-5", "1-10", "json"]
_SCALES: tuple[str, ...] = get_args(Scale)

# The JSON verdict search gives up after this many candidate objects, or after decoding
# about this many characters in all: a hostile reply costs linear time, not quadratic.
_MAX_JSON_ATTEMPTS = 64
_JSON_SCAN_BUDGET = 4_000_000

_SURROGATE = re.compile("[\ud800-\udfff]")

#: Longest reply text read and kept (characters); a longer one is cut, marked, not cached.
MAX_REPLY_CHARS = 1_000_000


def _valid_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD (valid UTF-8)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _shorten(text: str, limit: int = 200) -> str:
    return _valid_text(text if len(text) <= limit else text[:limit] + "...")


# A labelled line: optional Markdown decoration, "Verdict"/"Score"/"Rating" (optionally
# "Final ..." and a parenthesis such as "(1-5)"), then ":" or "=".
_LABEL = re.compile(
    r"^[\s*_#>`~-]*(?:final\s+)?(?:verdict|score|rating)(?:\s*\([^)]*\))?[\s*_`]*[:=](?P<rest>.*)$",
    re.IGNORECASE,
)
_BINARY = re.compile(
    r"(?<![\w./-])(?P<token>yes|no|correct|incorrect|pass|fail|true|false|1(?:\.0+)?|0(?:\.0+)?)"
    r"(?![\w-]|\.\d)",
    re.IGNORECASE,
)
_POSITIVE = {"yes", "correct", "pass", "true"}
# A negation just before the token (at most one word between): "not correct",
# "isn't entirely correct", "cannot pass".
_NEGATED = re.compile(r"\b(?:not|never|cannot|no\s+longer|\w+n[’']t)\s+(?:\w+\s+)?$", re.IGNORECASE)
_RANGE = re.compile(r"(?<![\w.])\d+\s*(?:-|–|to)\s*\d+(?![\w.])", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.-])(?P<value>\d+(?:\.\d+)?)(?!\w|\.\d)"
    r"(?:\s*(?:/|out\s+of)\s*(?P<denominator>\d+(?:\.\d+)?))?",
    re.IGNORECASE,
)


def _candidate(text: str, truncated: bool) -> str | None:
    """The part of the reply that holds the verdict (see ``parse_verdict``)."""
    lines = text.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        match = _LABEL.match(lines[index])
        if match is None:
            continue
        rest = match["rest"].strip(" \t*_`")
        if rest:
            return rest
        # "Verdict:" alone on its line: the value is on the next non-empty line.
        return next((line for line in lines[index + 1 :] if line.strip()), None)
    if truncated:
        # The last line of a cut-off reply is unfinished: not a verdict.
        return None
    return next((line for line in reversed(lines) if line.strip()), None)


def _parse_binary(text: str, truncated: bool) -> float:
    candidate = _candidate(text, truncated)
    if candidate is None:
        raise ValueError("no labelled verdict line" if truncated else "the reply is empty")
    matches = list(_BINARY.finditer(candidate))
    if not matches:
        raise ValueError(
            f"no yes/no, correct/incorrect, pass/fail, true/false or 1/0 in {candidate.strip()!r}"
        )
    last = matches[-1]
    if _NEGATED.search(candidate[: last.start()]):
        raise ValueError(f"the verdict is negated ({candidate.strip()!r}); not guessing")
    token = last["token"].lower()
    return 1.0 if token in _POSITIVE or token.startswith("1") else 0.0


def _parse_rating(text: str, top: int, truncated: bool) -> float:
    candidate = _candidate(text, truncated)
    if candidate is None:
        raise ValueError("no labelled score line" if truncated else "the reply is empty")
    found: float | None = None
    for match in _NUMBER.finditer(_RANGE.sub(" ", candidate)):
        value = float(match["value"])
        denominator = match["denominator"]
        if denominator is not None and float(denominator) != top:
            continue  # "7/10" on a 1-5 scale is another scale's score
        if value.is_integer() and 1 <= value <= top:
            found = value
    if found is None:
        raise ValueError(f"no integer from 1 to {top} in {candidate.strip()!r}")
    return (found - 1) / (top - 1)


# Where a JSON object can start: "{", JSON whitespace, then a key's quote or "}". Other
# "{"s (prose, "{{{{...") cannot start one, so they cost no decoding attempt.
_OBJECT_START = re.compile(r'\{[ \t\n\r]*["}]')


def _first_json_object(text: str) -> dict[str, Any]:
    """The first complete JSON object in ``text``; ``ValueError`` saying why there is none.

    Candidates are tried in order of their opening brace; the search stops after
    ``_MAX_JSON_ATTEMPTS`` of them or about ``_JSON_SCAN_BUDGET`` decoded characters, and
    an object nested more deeply than Python's JSON reader allows does not count.
    """
    decoder = json.JSONDecoder()
    budget = _JSON_SCAN_BUDGET
    too_deep = False
    for attempt, match in enumerate(_OBJECT_START.finditer(text)):
        if attempt == _MAX_JSON_ATTEMPTS or budget <= 0:
            deep = "; one is nested too deeply to be read" if too_deep else ""
            raise ValueError(
                f"no complete JSON object among the first {attempt} places one could start "
                f"(kagreport looks no further{deep})"
            )
        start = match.start()
        try:
            value, _ = decoder.raw_decode(text, start)
        except RecursionError:
            too_deep = True
            budget -= len(text) - start
            continue
        except ValueError as exc:  # JSONDecodeError, or an integer of too many digits
            position = getattr(exc, "pos", None)
            if not isinstance(position, int) or str(exc).startswith("Unterminated string"):
                position = len(text)  # read to the end
            budget -= max(position - start, 1)
            continue
        if isinstance(value, dict):
            return value
    if too_deep:
        raise ValueError(
            "no complete JSON object in the reply (one is nested too deeply to be read)"
        )
    raise ValueError("no complete JSON object in the reply")


def _parse_json(
    text: str, criteria: Sequence[str], score_range: tuple[float, float]
) -> dict[str, float]:
    data = _first_json_object(text)
    missing = [name for name in criteria if name not in data]
    if missing:
        raise ValueError(f"the JSON object has no {', '.join(map(repr, missing))}")
    low, high = score_range
    scores: dict[str, float] = {}
    for name in criteria:
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name!r} is {_shorten(repr(value))}, not a number")
        # Compared as is: an integer of 400 digits is out of range, not an OverflowError.
        if not low <= value <= high:
            raise ValueError(f"{name!r} is {_shorten(repr(value))}, outside [{low:g}, {high:g}]")
        scores[name] = (float(value) - low) / (high - low) + 0.0  # + 0.0: no -0.0
    return scores


def parse_verdict(
    text: str,
    scale: Scale,
    criteria: Sequence[str] = ("score",),
    *,
    score_range: tuple[float, float] = (0.0, 1.0),
    truncated: bool = False,
) -> dict[str, float]:
    """Read the scores from a judge model's reply.

    Parameters
    ----------
    text : str
        The model's message content.
    scale : {"binary", "1-5", "1-10", "json"}
        How the verdict is written.
    criteria : sequence of str
        The names of the scores: one for the binary and 1-N scales; for ``"json"``, the
        keys read from the JSON object.
    score_range : (float, float)
        ``"json"`` only: the range the model scores on, mapped linearly to [0, 1].
    truncated : bool
        The reply was cut off (``finish_reason == "length"``): the last line is not read
        as a verdict, only a labelled line or a complete JSON object.

    Returns
    -------
    dict of str to float
        Criterion -> score in [0, 1].

    Raises
    ------
    ValueError
        If no verdict can be read, with the reason.

    Notes
    -----
    **Where the verdict is.** The *verdict text* is what follows the label on the last
    line labelled ``Verdict:``, ``Score:`` or ``Rating:`` (case-insensitive; Markdown
    such as ``**Verdict:**``, a leading ``Final``, a parenthesis as in ``Score (1-5):``
    and ``=`` for ``:`` are accepted; a label alone on its line takes the next non-empty
    line). Without such a line it is the last non-empty line, unless ``truncated``.

    **binary.** The last of these whole words in the verdict text, case-insensitive:
    ``yes``, ``correct``, ``pass``, ``true``, ``1`` (or ``1.0``) score 1; ``no``,
    ``incorrect``, ``fail``, ``false``, ``0`` (or ``0.0``) score 0; a number after ``/``
    is a denominator, not a verdict (``0/1`` scores 0). A negation at most one word
    before it (``not``, ``never``, ``cannot``, ``no longer``, ``...n't``: "not correct",
    "isn't fully correct") makes the verdict unreadable rather than guessed.

    **1-5, 1-10.** Ranges such as ``1-5`` or ``1 to 10`` are ignored; of the remaining
    numbers, the last integer ``x`` from 1 to the top of the scale (``4``, ``4.0``,
    ``4/5``, ``4 out of 5``; ``8/10`` does not count on the 1-5 scale) gives
    ``(x - 1) / (top - 1)``.

    **json.** The first complete JSON object in the reply (code fences are fine); each
    criterion must be a key whose value is a number (not a string, not a boolean)
    within ``score_range``, else the verdict is unreadable. Scores are mapped by
    ``(x - low) / (high - low)``. The search is bounded so that any reply costs linear
    time: it tries at most 64 places where an object could start (a ``{`` followed by a
    key or ``}``) and decodes about 4 million characters in all; an object nested more
    deeply than Python's JSON reader allows (about 1,000 levels) is unreadable.

    **length.** ``LLMJudge`` reads at most the first 1,000,000 characters of a
    reply (``MAX_REPLY_CHARS``), as a cut-off reply; ``parse_verdict`` itself reads
    all of ``text``, in time linear in its length.
    """
    if scale == "binary":
        return {criteria[0]: _parse_binary(text, truncated)}
    if scale == "1-5":
        return {criteria[0]: _parse_rating(text, 5, truncated)}
    if scale == "1-10":
        return {criteria[0]: _parse_rating(text, 10, truncated)}
    if scale == "json":
        return _parse_json(text, criteria, score_range)
    raise ValueError(f"`scale` must be one of {', '.join(_SCALES)}; got {scale!r}")


def _cut(text: str) -> tuple[str, str | None]:
    """The part of a reply that is read, and the verdict to keep if it was cut (else None)."""
    if len(text) <= MAX_REPLY_CHARS:
        return text, None
    readable = text[:MAX_REPLY_CHARS]
    marker = (
        f"\n[kagreport: reply cut here; only its first {MAX_REPLY_CHARS:,} of "
        f"{len(text):,} characters are kept and read]"
    )
    return readable, readable + marker


def _describe(exc: BaseException, plain: tuple[type[BaseException], ...] = ()) -> str:
    """An exception as text, never empty: its type name unless it is one of ``plain``."""
    text = str(exc)
    if text and isinstance(exc, plain):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _read_judgement(
    judge: str,
    endpoint: str,
    item: AnswerItem,
    text: str,
    usage: Usage,
    truncated: bool,
    scale: Scale,
    criteria: Sequence[str],
    score_range: tuple[float, float],
) -> Judgement:
    """Scores from a reply's text (from ``endpoint``, named in a failure); a reply over
    MAX_REPLY_CHARS is read as cut off."""
    readable, kept = _cut(text)
    verdict = text if kept is None else kept
    try:
        scores = parse_verdict(
            readable,
            scale,
            criteria,
            score_range=score_range,
            truncated=truncated or kept is not None,
        )
    except Exception as exc:  # unreadable, whatever the reason: text and usage are kept
        if kept is not None:
            cut = f" (only its first {MAX_REPLY_CHARS:,} characters are read)"
        elif truncated:
            cut = " (the reply was cut off: finish_reason 'length')"
        else:
            cut = ""
        raise JudgeFailure(
            f"judge {judge!r}: no {scale} verdict in the reply from {endpoint} for item "
            f"{item.identifier!r}{cut}: {_describe(exc, (ValueError,))}",
            verdict=verdict,
            usage=usage,
            cause=f"no {scale} verdict in the reply",
        ) from None
    return Judgement(scores=scores, verdict=verdict, usage=usage)

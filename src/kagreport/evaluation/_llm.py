"""An LLM judge over any OpenAI-compatible chat-completions endpoint.

OpenAI, vLLM, Ollama, llama.cpp's server and the like all take the same request. The judge
renders a Jinja2 prompt for an item, sends it (temperature 0 and a seed by default), reads a
score from the reply and reports what the call cost. It retries 429s, 5xx replies, timeouts
and connection errors itself, with back-off, and keeps at most ``max_concurrency`` requests
in flight. With a :class:`~kagreport.evaluation._cache.JudgeCache`, a response already seen
for the same judge identity and the same request is read from disk and costs nothing.

What counts as a response (``Usage.responses``)
-----------------------------------------------
A *model response* is an HTTP 2xx reply whose body is a JSON object with a ``choices``
list. Every one counts once in ``responses``, whether its verdict parses or not, and adds
its ``usage.prompt_tokens``/``completion_tokens``; when ``usage`` is missing, ``null`` or
lacks either count, it adds no tokens and counts in ``responses_without_token_counts``.
A cached response counts in ``responses`` and ``cached_responses`` and adds no tokens.
Not model responses, and counted nowhere: a retried or final 429/5xx, any other 4xx, a
timeout, a connection error, and a 2xx whose body is not JSON or has no ``choices`` (such
as ``{"error": {...}}``, which some servers send for rate limits). Those end in a
:class:`~kagreport.evaluation._judge.JudgeFailure` without being retried (a 2xx is not a
signal to retry) and are never cached.

Text the judge keeps
--------------------
A reply's text is the verdict kept in reports and stored in the cache, so it must be
valid UTF-8: lone UTF-16 surrogates (a JSON escape such as ``\\ud83d`` left alone, from a
reply cut in the middle of an emoji) become U+FFFD as soon as the reply is decoded, and so
do any in a rendered prompt. A reply longer than 1,000,000 characters is read, kept and
reported as its first 1,000,000 characters followed by a marker, as if cut off by
``max_tokens`` (only a labelled verdict line or a complete JSON object in that part counts),
and it is never cached. A rendered prompt (each message) longer than 1,000,000 characters,
or a template that fails in any way, fails the item before any request.

Token counts outside [0, 2**63) are treated as missing (``responses_without_token_counts``).

The cache is a convenience: when reading or writing it fails after it opened, the judge
logs a WARNING, stops using it (:meth:`JudgeCache.disable
<kagreport.evaluation._cache.JudgeCache.disable>`, with one ERROR line per cache) and goes
on; neither the verdict nor the usage counts change.

Keys and stops
--------------
The key sent is the one given; without one, ``OPENAI_API_KEY`` goes to OpenAI's own API
only, and any other server gets a placeholder and none of the settings the ``openai``
package reads from the environment (see ``api_key``). Keys are in no identity, cache,
report, log or message. Judging for :func:`~kagreport.evaluation.evaluate_answers`, the
judge sends nothing once the evaluation was stopped (Ctrl-C, SIGTERM), not even a retry.

The ``openai`` package (about a second to import) is imported on the first request.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import math
import os
import re
import string
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from kagreport._errors import KagreportError
from kagreport._optional import optional
from kagreport.evaluation._cache import JudgeCache
from kagreport.evaluation._evaluate import current_stop
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._judge import JudgeFailure, Judgement, Usage, identity_hash

if TYPE_CHECKING:
    from jinja2 import Environment, Template
    from jinja2.runtime import Context
    from openai import OpenAI

__all__ = ["MAX_PROMPT_CHARS", "MAX_REPLY_CHARS", "LLMJudge", "Scale", "parse_verdict"]

logger = logging.getLogger(__name__)

#: The verdict scales a judge can read.
Scale = Literal["binary", "1-5", "1-10", "json"]
_SCALES: tuple[str, ...] = get_args(Scale)

# Bump when anything that changes a verdict for the same response changes (parsing rules,
# request shape): it is part of the identity, hence of every cache key.
# 2: lone surrogates replaced, replies and prompts capped, bounded JSON search, identity
#    without None values.
_VERSION = 2

# A server asking to wait longer than this (seconds) is not waited for: the item fails.
_MAX_RETRY_AFTER = 120.0

#: Longest reply text read and kept (characters); a longer one is cut, marked, not cached.
MAX_REPLY_CHARS = 1_000_000
#: Longest rendered prompt message (characters); a longer one fails the item.
MAX_PROMPT_CHARS = 1_000_000
# The JSON verdict search gives up after this many candidate objects, or after decoding
# about this many characters in all: a hostile reply costs linear time, not quadratic.
_MAX_JSON_ATTEMPTS = 64
_JSON_SCAN_BUDGET = 4_000_000
# A template may not compute an integer power of more bits than this.
_MAX_POWER_BITS = 100_000
# Bounds of the settings.
_MAX_SECONDS = 3600.0
_MAX_RETRIES = 100
_MAX_INT64 = 2**63 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD (valid UTF-8)."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


_TEMPLATE_VARIABLES = ("item", "context")

# ---------------------------------------------------------------------------------------
# Verdict parsing
# ---------------------------------------------------------------------------------------

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
    """The part of the reply that holds the verdict (see :func:`parse_verdict`)."""
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

    **length.** :class:`LLMJudge` reads at most the first 1,000,000 characters of a
    reply (:data:`MAX_REPLY_CHARS`), as a cut-off reply; ``parse_verdict`` itself reads
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


# ---------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------


class _NoneInPrompt(ValueError):
    pass


class _PromptTooLong(ValueError):
    pass


def _refuse_none(value: Any) -> Any:
    # A prompt reading "Reference: None" is a bug to report, not a prompt to send.
    if value is None:
        raise _NoneInPrompt(
            "it prints a value that is None (an item without a reference, or without "
            "metadata['context']?); guard it with {% if ... %}"
        )
    return value


def _too_big(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > MAX_PROMPT_CHARS


def _size_problem(what: str, values: Iterable[object]) -> str | None:
    for value in values:
        if _too_big(value):
            return (
                f"{what} of {value:,} is more than the {MAX_PROMPT_CHARS:,} characters a "
                "prompt may have"
            )
    return None


def _spec_problem(what: str, specs: Iterable[str], arguments: Iterable[object]) -> str | None:
    """A width or precision in format specs (or, for ``*`` and nested fields, in the
    arguments) beyond what a prompt may hold."""
    nested = False
    for spec in specs:
        nested = nested or "*" in spec or "{" in spec
        for digits in re.findall(r"\d+", spec):
            if (
                len(digits.lstrip("0")) > len(str(MAX_PROMPT_CHARS))
                or int(digits) > MAX_PROMPT_CHARS
            ):
                return (
                    f"{what} asks for a width or precision of {digits} characters, more than "
                    "a prompt may have"
                )
    return _size_problem(f"{what}: a width", arguments) if nested else None


_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*((?:\*|\d+)?(?:\.(?:\*|\d+))?)")


def _printf_problem(template: object, arguments: object) -> str | None:
    if not isinstance(template, str):
        return None
    values = arguments if isinstance(arguments, tuple) else (arguments,)
    specs = (match.group(1) for match in _PRINTF_SPEC.finditer(template))
    return _spec_problem("'%' formatting", specs, values)


def _str_format_problem(
    template: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> str | None:
    try:
        specs = [spec for _, _, spec, _ in string.Formatter().parse(template) if spec]
    except ValueError:
        return None  # format() itself says what is wrong
    values = [*args, *kwargs.values()]
    values += [v for arg in args if isinstance(arg, Mapping) for v in arg.values()]
    return _spec_problem("str.format", specs, values)


def _binop_problem(operator: str, left: Any, right: Any) -> str | None:
    """Why ``left <operator> right`` would be too big to compute in a prompt, or None."""
    if operator == "*":
        for sequence, count in ((left, right), (right, left)):
            if (
                isinstance(sequence, str | bytes | list | tuple)
                and isinstance(count, int)
                and len(sequence) * count > MAX_PROMPT_CHARS
            ):
                return (
                    f"'*' would make {len(sequence) * count:,} characters or items, more than "
                    f"the {MAX_PROMPT_CHARS:,} a prompt may have"
                )
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        bits = right * (abs(left).bit_length() - 1)
        if bits > _MAX_POWER_BITS:
            return f"'**' would make a number of about {bits:,} bits"
    elif operator == "%":
        return _printf_problem(left, right)
    return None


# str methods whose integer arguments are the length of what they return.
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


@functools.cache
def _environment_class() -> type[Environment]:
    with optional("jinja2"):
        from jinja2.exceptions import SecurityError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

    def checked(problem: str | None) -> None:
        if problem is not None:
            raise SecurityError(problem)

    class PromptEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, plus size checks on the usual ways a template builds a huge
        string ('*', '**', '%', str.format, padding methods and filters), so that they
        fail at once instead of taking the memory or minutes. Anything else still meets
        the cap on the rendered prompt, and any error fails only the item."""

        # Intercepted operators are also not folded into constants at compile time.
        intercepted_binops = frozenset({"*", "**", "%"})

        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            filters = self.filters
            format_filter, center_filter, indent_filter = (
                filters["format"],
                filters["center"],
                filters["indent"],
            )

            def format_checked(value: Any, *args: Any, **kwargs: Any) -> Any:
                checked(_printf_problem(str(value), tuple(kwargs.values()) or args))
                return format_filter(value, *args, **kwargs)

            def center_checked(value: Any, width: Any = 80) -> Any:
                checked(_size_problem("center: a width", [width]))
                return center_filter(value, width)

            def indent_checked(value: Any, width: Any = 4, *args: Any, **kwargs: Any) -> Any:
                checked(_size_problem("indent: a width", [width]))
                return indent_filter(value, width, *args, **kwargs)

            filters.update(format=format_checked, center=center_checked, indent=indent_checked)

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            checked(_binop_problem(operator, left, right))
            return super().call_binop(context, operator, left, right)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            template = value.__self__

            def format_checked(*args: Any, **kwargs: Any) -> str:
                checked(_str_format_problem(template, args, kwargs))
                return wrapped(*args, **kwargs)

            return format_checked

        def call(
            __self,
            __context: Context,
            __obj: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            name = getattr(__obj, "__name__", None)
            if isinstance(getattr(__obj, "__self__", None), str) and name in _PADDING_METHODS:
                arguments = [*args, *kwargs.values()]
                checked(_size_problem(f"str.{name}: a width", arguments))
            return super().call(__context, __obj, *args, **kwargs)

    return PromptEnvironment


def _environment() -> Environment:
    with optional("jinja2"):
        from jinja2 import StrictUndefined

    # Sandboxed and immutable: a template may read the item, not call into or change it.
    # No autoescape: prompts are plain text, and "&amp;" would change what the model reads.
    return _environment_class()(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=_refuse_none,
    )


def _compile(environment: Environment, source: object, parameter: str) -> Template:
    with optional("jinja2"):
        from jinja2 import TemplateSyntaxError, meta

    if not isinstance(source, str) or not source.strip():
        raise ValueError(
            f"`{parameter}` must be a non-empty Jinja2 template string, not {source!r}"
        )
    try:
        tree = environment.parse(source)
    except TemplateSyntaxError as exc:
        raise ValueError(
            f"`{parameter}` is not a valid Jinja2 template (line {exc.lineno}): {exc.message}"
        ) from exc
    unknown = meta.find_undeclared_variables(tree) - set(_TEMPLATE_VARIABLES)
    unknown -= set(environment.globals)
    if unknown:
        raise ValueError(
            f"`{parameter}` uses undefined variable(s) {', '.join(sorted(unknown))}; templates "
            "see `item` (item.question, item.answer, item.reference, item.identifier, "
            "item.metadata) and `context` (item.metadata['context'], or None)"
        )
    return environment.from_string(source)


# ---------------------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reply:
    text: str | None
    finish_reason: object
    usage: Usage
    input_tokens: int | None
    output_tokens: int | None


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: object) -> TypeGuard[int]:
    """A token count: an integer in [0, 2**63) (larger ones fit no report or cache)."""
    return _is_int(value) and 0 <= value <= _MAX_INT64


def _read_usage(value: object) -> tuple[Usage, int | None, int | None]:
    """Usage of one model response; ``usage`` may be missing, null or partial."""
    if isinstance(value, Mapping):
        prompt, completion = value.get("prompt_tokens"), value.get("completion_tokens")
        if _is_count(prompt) and _is_count(completion):
            return (
                Usage(responses=1, input_tokens=prompt, output_tokens=completion),
                prompt,
                completion,
            )
    return Usage(responses=1, responses_without_token_counts=1), None, None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, else ``Retry-After``."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    seconds = headers.get("retry-after")
    if seconds is None:
        return None
    try:
        return max(0.0, float(seconds))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(seconds)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _shorten(text: str, limit: int = 200) -> str:
    return _valid_text(text if len(text) <= limit else text[:limit] + "...")


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


#: The placeholder key sent where there is no key to send (local servers ignore it).
_NO_KEY = "not-needed"
# What a request to a server other than OpenAI's may carry (besides the SDK's
# x-stainless-* description of itself, and the judge's own Authorization).
_PLAIN_HEADERS = frozenset(
    {"host", "accept", "accept-encoding", "connection", "content-type", "content-length",
     "user-agent"}
)  # fmt: skip


def _origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, lower-case, the default port spelled out; a URL
    that does not parse gives an origin no other URL has."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return ("", url, -1)
    if port is None:
        port = {"https": 443, "http": 80}.get(scheme)
    return scheme, (parts.hostname or "").rstrip("."), port


def _is_openai(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own API (https://api.openai.com, any path)."""
    credentials = urllib.parse.urlsplit(base_url.strip()).netloc.rpartition("@")[1]
    return not credentials and _origin(base_url) == ("https", "api.openai.com", 443)


def _restore(name: str, settings: dict[str, Any]) -> LLMJudge:
    return LLMJudge(name, **settings)


class LLMJudge:
    """A judge that asks a chat model, through any OpenAI-compatible endpoint.

    Parameters
    ----------
    name : str
        The judge's name (its metric is ``name``, or ``name.<criterion>`` for several).
    model : str
        The model name the server expects.
    base_url : str
        The endpoint up to ``/v1`` (e.g. ``"http://127.0.0.1:8000/v1"``).
    prompt : str
        Jinja2 template of the user message. It sees ``item`` (the
        :class:`~kagreport.evaluation._items.AnswerItem`: ``item.question``,
        ``item.answer``, ``item.reference``, ``item.metadata``...) and ``context``
        (``item.metadata.get("context")``). Rendering is sandboxed; an undefined name or
        attribute, or a printed ``None``, fails that item with a message saying why.
    system_prompt : str, optional
        Jinja2 template of the system message, with the same variables.
    api_key : str, optional
        The key sent to ``base_url``. Default: the ``OPENAI_API_KEY`` environment variable
        when ``base_url`` is OpenAI's own API (``https://api.openai.com``), else the
        placeholder ``"not-needed"`` (local servers ignore it): a key from the environment
        never goes to another server, nor does anything else the ``openai`` package reads
        from there (``OPENAI_ORG_ID``, ``OPENAI_CUSTOM_HEADERS``...). Give ``api_key``
        (``api_key_env`` in a judges file) to send a key to another server. Not part of
        the identity, and never written anywhere.
    scale : {"binary", "1-5", "1-10", "json"}
        How the model writes its verdict; see :func:`parse_verdict` for the exact rules.
    criteria : sequence of str
        The score names: one for the binary and 1-N scales (default ``("score",)``), the
        keys of the JSON object for ``"json"``.
    score_range : (float, float), optional
        ``"json"`` only: the range the model scores on (default ``(0, 1)``), mapped
        linearly to [0, 1]; values outside it fail the item.
    temperature : float
        Sampling temperature (default 0).
    seed : int or None
        Sent as ``seed`` (default 0); ``None`` leaves it out of the request.
    max_tokens : int, optional
        Cap on the reply's length, in tokens (from 1 to 2**63 - 1).
    timeout : float
        Seconds allowed for each attempt's connect, send and each read (httpx timeouts
        apply per operation, so a server trickling bytes can take longer in total); more
        than 0 and at most 3600.
    max_retries : int
        Extra attempts after a 429, a 5xx, a timeout or a connection error (default 3, at
        most 100). Other 4xx replies fail at once.
    backoff : float
        Seconds before the first retry, doubling at each one (0.5, 1, 2, ...); more than
        0 and at most 3600. A longer ``retry-after-ms`` or ``Retry-After`` header wins. A
        server asking for more than 120 s fails the item instead.
    max_concurrency : int
        Requests this judge keeps in flight at most, across threads (default 4). A request
        waiting to be retried gives its slot up meanwhile.
    cache : JudgeCache or path, optional
        A response cache, or the path of one to open (and close with :meth:`close`).

    Raises
    ------
    ValueError
        If an argument is out of its domain (the message names it and what is allowed;
        booleans are not integers here), or a template does not compile or uses a
        variable other than ``item`` and ``context``.
    KagreportError
        If ``cache`` is a path that cannot be opened as a judge cache.

    Notes
    -----
    ``identity`` holds what determines a verdict: kind, model, base URL, the SHA-256 of
    both templates, temperature, seed, scale, criteria, max_tokens (and score_range for
    JSON) and a version. It never holds ``None``: ``seed`` and ``max_tokens`` are left out
    when they are ``None`` (as they are from the request), so an identity survives a round
    trip through TOML, which has no null. Timeouts, retries, concurrency and the API key do
    not belong there. The cache key is ``identity_hash({"judge": identity, "request":
    body})`` with the exact request body, so changing either template, even the system
    one, changes every key, and a setting left out gives another key than any value of it.

    The raw reply text is the verdict kept in reports, for failures too (lone surrogates
    replaced by U+FFFD, and cut after 1,000,000 characters with a marker: see the module
    docstring).

    Examples
    --------
    >>> judge = LLMJudge(
    ...     "correctness",
    ...     model="qwen2.5:7b",
    ...     base_url="http://127.0.0.1:11434/v1",
    ...     system_prompt="You grade answers strictly.",
    ...     prompt="Question: {{ item.question }}\\nReference: {{ item.reference }}\\n"
    ...     "Answer: {{ item.answer }}\\nEnd with 'Verdict: correct' or 'Verdict: incorrect'.",
    ... )
    >>> judge.identity["kind"]
    'llm'
    """

    #: :func:`evaluate_answers` runs blocking judges in its thread pool.
    blocking = True

    def __init__(
        self,
        name: str,
        *,
        model: str,
        base_url: str,
        prompt: str,
        system_prompt: str | None = None,
        api_key: str | None = None,
        scale: Scale = "binary",
        criteria: Sequence[str] = ("score",),
        score_range: tuple[float, float] | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_concurrency: int = 4,
        cache: JudgeCache | str | os.PathLike[str] | None = None,
    ) -> None:
        names, (low, high) = _check_settings(
            name=name,
            model=model,
            base_url=base_url,
            prompt=prompt,
            system_prompt=system_prompt,
            api_key=api_key,
            scale=scale,
            criteria=criteria,
            score_range=score_range,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_concurrency=max_concurrency,
        )

        environment = _environment()
        self._user_template = _compile(environment, prompt, "prompt")
        self._system_template = (
            None if system_prompt is None else _compile(environment, system_prompt, "system_prompt")
        )

        self.name = name
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._prompt = prompt
        self._system_prompt = system_prompt
        self._given_api_key = api_key
        # A key from the environment goes only to the endpoint it belongs to (issue #10):
        # OPENAI_API_KEY to OpenAI's own API, never to another server named in a judges file.
        self._official = _is_openai(self._base_url)
        from_environment = os.environ.get("OPENAI_API_KEY") if self._official else None
        self._api_key = api_key or from_environment or _NO_KEY
        self._scale: Scale = scale
        self._criteria = names
        self._score_range: tuple[float, float] = (low, high)
        self._explicit_range = score_range is not None
        self._temperature = float(temperature)
        self._seed = seed
        self._max_tokens = max_tokens
        self._timeout = float(timeout)
        self._max_retries = max_retries
        self._backoff = float(backoff)
        self._max_concurrency = max_concurrency
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._client: OpenAI | None = None
        self._close_client: weakref.finalize[..., LLMJudge] | None = None
        self._client_lock = threading.Lock()
        if cache is None or isinstance(cache, JudgeCache):
            self._cache, self._owns_cache = cache, False
        else:
            self._cache, self._owns_cache = JudgeCache(cache), True
        self._identity = self._make_identity()

    # -- description ----------------------------------------------------------------

    def _make_identity(self) -> dict[str, Any]:
        identity: dict[str, Any] = {
            "kind": "llm",
            "model": self._model,
            "base_url": self._base_url,
            "prompt_sha256": identity_hash({"system": self._system_prompt, "user": self._prompt}),
            "temperature": self._temperature,
            "scale": self._scale,
            "criteria": list(self._criteria),
            "version": _VERSION,
        }
        # No None values (TOML has no null): an unset setting is left out, as from the
        # request, and "left out" hashes differently from every value.
        if self._seed is not None:
            identity["seed"] = self._seed
        if self._max_tokens is not None:
            identity["max_tokens"] = self._max_tokens
        if self._scale == "json":
            identity["score_range"] = list(self._score_range)
        return identity

    @property
    def criteria(self) -> tuple[str, ...]:
        """The score names (one, except for JSON verdicts with several keys)."""
        return self._criteria

    @property
    def identity(self) -> dict[str, Any]:
        """What determines the verdicts (a fresh JSON-compatible copy)."""
        return json.loads(json.dumps(self._identity))  # type: ignore[no-any-return]

    @property
    def cache(self) -> JudgeCache | None:
        """The response cache, if any."""
        return self._cache

    def _settings(self) -> dict[str, Any]:
        return {
            "model": self._model,
            "base_url": self._base_url,
            "prompt": self._prompt,
            "system_prompt": self._system_prompt,
            "api_key": self._given_api_key,
            "scale": self._scale,
            "criteria": self._criteria,
            "score_range": self._score_range if self._explicit_range else None,
            "temperature": self._temperature,
            "seed": self._seed,
            "max_tokens": self._max_tokens,
            "timeout": self._timeout,
            "max_retries": self._max_retries,
            "backoff": self._backoff,
            "max_concurrency": self._max_concurrency,
            "cache": self._cache,
        }

    def with_cache(self, cache: JudgeCache | str | os.PathLike[str] | None) -> LLMJudge:
        """A copy of this judge that uses ``cache`` (``None``: no cache); this one is unchanged.

        Raises
        ------
        KagreportError
            If ``cache`` is a path that cannot be opened as a judge cache.
        """
        return LLMJudge(self.name, **{**self._settings(), "cache": cache})

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any]]]:
        # Rebuilt from its settings: the client, locks and connection are per process.
        return (_restore, (self.name, self._settings()))

    def __repr__(self) -> str:
        return (
            f"LLMJudge({self.name!r}, model={self._model!r}, base_url={self._base_url!r}, "
            f"scale={self._scale!r})"
        )

    # -- requests -------------------------------------------------------------------

    def _render(self, template: Template, item: AnswerItem, which: str) -> str:
        with optional("jinja2"):
            from jinja2 import TemplateError

        parts: list[str] = []
        size = 0
        try:
            # Streamed, so a prompt growing past the limit stops there.
            for part in template.generate(item=item, context=item.metadata.get("context")):
                size += len(part)
                if size > MAX_PROMPT_CHARS:
                    raise _PromptTooLong(
                        f"it renders more than {MAX_PROMPT_CHARS:,} characters, the most a "
                        "prompt message may have"
                    )
                parts.append(part)
        except Exception as exc:  # any failure of the template fails this item, clearly
            detail = _describe(exc, (TemplateError, _NoneInPrompt, _PromptTooLong))
            raise JudgeFailure(
                f"judge {self.name!r}: the {which} template failed for item "
                f"{item.identifier!r}: {detail}"
            ) from exc
        return _valid_text("".join(parts))

    def request_body(self, item: AnswerItem) -> dict[str, Any]:
        """The exact chat-completions request body this judge sends for ``item``.

        Raises
        ------
        JudgeFailure
            If a template fails for this item, or renders more than 1,000,000 characters
            (the message names the judge and the template, and says why).
        """
        messages = []
        if self._system_template is not None:
            system = self._render(self._system_template, item, "system prompt")
            messages.append({"role": "system", "content": system})
        user = self._render(self._user_template, item, "prompt")
        messages.append({"role": "user", "content": user})
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "temperature": self._temperature,
        }
        if self._seed is not None:
            body["seed"] = self._seed
        if self._max_tokens is not None:
            body["max_tokens"] = self._max_tokens
        return body

    def cache_key(self, item: AnswerItem) -> str:
        """The cache key of ``item``'s request: a SHA-256 of identity and request body.

        Raises
        ------
        JudgeFailure
            If a template cannot be rendered for this item.
        """
        return self._key(self.request_body(item))

    def _key(self, body: Mapping[str, Any]) -> str:
        key = identity_hash({"judge": self._identity, "request": body})
        logger.debug(
            "judge %r: cache key %s of identity %s and request %s",
            *(self.name, key, self._identity, body),
        )
        return key

    def _get_client(self) -> OpenAI:
        with self._client_lock:
            if self._client is None:
                with optional("openai"):
                    import openai

                # The SDK's own retries are off (max_retries=0): ours count attempts and
                # responses, honour Retry-After and release the concurrency slot while waiting.
                self._client = openai.OpenAI(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    max_retries=0,
                    timeout=self._timeout,
                    http_client=self._http_client(openai),
                )
                # Copies made by with_cache() are often dropped without close(): their
                # sockets are closed when they are collected, not left to warn.
                self._close_client = weakref.finalize(self, self._client.close)
            return self._client

    def _http_client(self, openai: Any) -> Any:
        """The SDK's HTTP client; for a server other than OpenAI's, one that sends it only
        the headers a chat request needs.

        The SDK also reads ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``, ``OPENAI_ADMIN_KEY`` and
        ``OPENAI_CUSTOM_HEADERS`` (which may hold an ``Authorization``) from the environment;
        what it takes from there belongs to OpenAI, so another server gets none of it: every
        request there carries this judge's own key (the one given, or the placeholder) and,
        past a redirect to another origin, no key at all.
        """
        if self._official:
            return None  # the SDK's own client: the environment is OpenAI's
        origin = _origin(self._base_url)
        authorization = f"Bearer {self._api_key}"

        def scrub(request: Any) -> None:
            headers = request.headers
            for name in list(headers.keys()):
                lower = name.lower()
                if lower not in _PLAIN_HEADERS and not lower.startswith("x-stainless-"):
                    del headers[name]
            if _origin(str(request.url)) == origin:
                headers["Authorization"] = authorization

        return openai.DefaultHttpxClient(event_hooks={"request": [scrub]})

    def _complete(self, item: AnswerItem, body: dict[str, Any]) -> _Reply:
        """Send the request, retrying transient failures; one model response or a failure."""
        with optional("openai"):
            import openai

        client = self._get_client()
        attempts = self._max_retries + 1
        problem = ""
        stop = current_stop()
        for attempt in range(attempts):
            wait: float | None = None
            try:
                with self._slots:
                    if stop is not None and stop.is_set():  # checked once the slot is ours
                        raise self._stopped(item)
                    raw = client.chat.completions.with_raw_response.create(**body)
                    status, text = raw.status_code, raw.text
            except openai.APITimeoutError:
                problem = f"no reply within the {self._timeout:g} s timeout"
            except openai.APIConnectionError as exc:
                problem = f"cannot connect to {self._base_url}: {exc.__cause__ or exc}"
            except openai.APIStatusError as exc:
                problem = f"HTTP {exc.status_code}: {_shorten(str(exc))}"
                if exc.status_code != 429 and exc.status_code < 500:
                    raise JudgeFailure(
                        f"judge {self.name!r}: {self._base_url} answered {problem} for item "
                        f"{item.identifier!r}"
                    ) from exc
                wait = _retry_after(exc.response.headers)
            except openai.OpenAIError as exc:  # anything else the SDK raises: not transient
                raise JudgeFailure(
                    f"judge {self.name!r}: request for item {item.identifier!r} failed: {exc}"
                ) from exc
            else:
                return self._read_reply(item, status, text)
            if attempt + 1 == attempts:
                break
            delay = self._backoff * 2**attempt
            if wait is not None:
                if wait > _MAX_RETRY_AFTER:
                    raise JudgeFailure(
                        f"judge {self.name!r}: {self._base_url} asks to wait {wait:g} s "
                        f"(more than {_MAX_RETRY_AFTER:g} s) after {problem} for item "
                        f"{item.identifier!r}"
                    )
                delay = max(delay, wait)
            logger.info(
                "judge %r, item %r: %s; retrying in %.2f s (attempt %d of %d)",
                *(self.name, item.identifier, problem, delay, attempt + 2, attempts),
            )
            if stop is None:
                time.sleep(delay)
            elif stop.wait(delay):
                raise self._stopped(item)
        raise JudgeFailure(
            f"judge {self.name!r}: no answer from {self._base_url} for item {item.identifier!r} "
            f"after {attempts} attempt(s); last: {problem}"
        )

    def _stopped(self, item: AnswerItem) -> JudgeFailure:
        return JudgeFailure(
            f"judge {self.name!r}: the evaluation was stopped before the request for item "
            f"{item.identifier!r}"
        )

    def _read_reply(self, item: AnswerItem, status: int, text: str) -> _Reply:
        where = (
            f"judge {self.name!r}: HTTP {status} from {self._base_url} for item {item.identifier!r}"
        )
        try:
            data = json.loads(text)
        except ValueError:
            raise JudgeFailure(f"{where} is not JSON: {_shorten(text)!r}") from None
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            # e.g. {"error": {"message": "rate limit exceeded"}}: not a model response.
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, Mapping) and isinstance(error.get("message"), str):
                error = error["message"]
            detail = f"an error: {_shorten(repr(error))}" if error is not None else _shorten(text)
            raise JudgeFailure(f"{where} has no choices, {detail}")
        usage, input_tokens, output_tokens = _read_usage(data.get("usage"))
        choices = data["choices"]
        choice = choices[0] if choices and isinstance(choices[0], Mapping) else None
        if choice is None:
            raise JudgeFailure(f"{where} has an empty choices list", usage=usage)
        message = choice.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        return _Reply(
            # Valid UTF-8 from here on: reports and the cache must be able to store it.
            text=_valid_text(content) if isinstance(content, str) else None,
            finish_reason=choice.get("finish_reason"),
            usage=usage,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    def _judgement(self, item: AnswerItem, text: str, usage: Usage, truncated: bool) -> Judgement:
        """Scores from a reply's text; a reply over MAX_REPLY_CHARS is read as cut off."""
        readable, kept = _cut(text)
        verdict = text if kept is None else kept
        try:
            scores = parse_verdict(
                readable,
                self._scale,
                self._criteria,
                score_range=self._score_range,
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
                f"judge {self.name!r}: no {self._scale} verdict in the reply for item "
                f"{item.identifier!r}{cut}: {_describe(exc, (ValueError,))}",
                verdict=verdict,
                usage=usage,
            ) from None
        return Judgement(scores=scores, verdict=verdict, usage=usage)

    def _usable_cache(self) -> JudgeCache | None:
        cache = self._cache
        return cache if cache is not None and cache.disabled is None else None

    def _cache_failed(self, cache: JudgeCache, what: str, exc: Exception) -> None:
        """Log a failed cache read or write, and stop using the cache (one ERROR line)."""
        reason = _describe(exc, (KagreportError,))
        logger.warning("judge %r: %s: %s", self.name, what, reason)
        if cache.disable(reason):
            logger.error(
                "judge cache %s: caching is disabled for this run because of this error: %s "
                "(the run goes on without it; verdicts and usage are not affected)",
                *(cache.path, reason),
            )

    def judge(self, item: AnswerItem) -> Judgement:
        """Score one item: from the cache, or by asking the model.

        Parameters
        ----------
        item : AnswerItem
            The item; it needs an answer.

        Returns
        -------
        Judgement
            Scores in [0, 1] per criterion, the raw reply as ``verdict``, and ``usage``:
            one response (cached or not) and its tokens if not cached.

        Raises
        ------
        JudgeFailure
            If the item has no answer, a template fails to render, the server fails after
            the retries (or at once on a 4xx other than 429), the reply is not a model
            response, or no verdict can be read from it (then ``verdict`` holds the raw
            text and ``usage`` what the response cost). Failures are never cached; a
            failing cache never fails the item (see the module docstring).
        """
        if item.answer is None:
            raise JudgeFailure(f"judge {self.name!r}: item {item.identifier!r} has no answer")
        body = self.request_body(item)
        cache = self._usable_cache()
        key = None
        if cache is not None:
            # Whatever goes wrong with the cache costs a request, never the item.
            try:
                key = self._key(body)
                hit = cache.get(key)
            except Exception as exc:
                self._cache_failed(cache, "cannot read the cache, asking the model", exc)
                hit = None
            if hit is not None:
                return self._judgement(
                    item, _valid_text(hit.text), Usage(responses=1, cached_responses=1), False
                )
        reply = self._complete(item, body)
        truncated = reply.finish_reason == "length"
        if reply.text is None:
            raise JudgeFailure(
                f"judge {self.name!r}: the reply for item {item.identifier!r} has no text "
                f"content (finish_reason {reply.finish_reason!r})",
                usage=reply.usage,
            )
        judgement = self._judgement(item, reply.text, reply.usage, truncated)
        # A reply too long to keep whole is not cached: a hit would read the same cut text.
        if (
            cache is not None
            and key is not None
            and cache.disabled is None  # a failed read above disabled it
            and len(reply.text) <= MAX_REPLY_CHARS
        ):
            try:
                cache.put(key, reply.text, reply.input_tokens, reply.output_tokens)
            except Exception as exc:  # the verdict stands; only the reuse is lost
                self._cache_failed(cache, "response not cached", exc)
        return judgement

    # -- resources ------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP client, and the cache if this judge opened it from a path."""
        with self._client_lock:
            close, self._client, self._close_client = self._close_client, None, None
        if close is not None:
            close()
        if self._owns_cache and self._cache is not None:
            self._cache.close()

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _is_real(value: object) -> bool:
    """A finite int or float (not a bool), one that converts to a finite float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int beyond float range
        return False


def _check_text(parameter: str, value: str) -> None:
    if _SURROGATE.search(value) is not None:
        raise ValueError(
            f"`{parameter}` holds a lone UTF-16 surrogate, which cannot be encoded as UTF-8; "
            f"got {_shorten(repr(value))}"
        )


def _check_settings(
    *,
    name: object,
    model: object,
    base_url: object,
    prompt: object,
    system_prompt: object,
    api_key: object,
    scale: object,
    criteria: object,
    score_range: object,
    temperature: object,
    seed: object,
    max_tokens: object,
    timeout: object,
    max_retries: object,
    backoff: object,
    max_concurrency: object,
) -> tuple[tuple[str, ...], tuple[float, float]]:
    """Validate the constructor's arguments; the criteria and score range to use."""
    for parameter, value in (("name", name), ("model", model), ("base_url", base_url)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`{parameter}` must be a non-empty string, not {value!r}")
        _check_text(parameter, value)
    if "@" in urllib.parse.urlsplit(str(base_url).strip()).netloc:
        # The base URL is in the identity, hence in every report: no key may ride in it.
        # (The value is not repeated: it holds a secret.)
        raise ValueError(
            "`base_url` must not hold credentials (user:password@host); give the key as "
            "`api_key` (`api_key_env` in a judges file)"
        )
    if not isinstance(prompt, str):
        raise ValueError(f"`prompt` must be a non-empty Jinja2 template string, not {prompt!r}")
    _check_text("prompt", prompt)
    if system_prompt is not None:
        if not isinstance(system_prompt, str):
            raise ValueError(
                f"`system_prompt` must be a template string or None, not {system_prompt!r}"
            )
        _check_text("system_prompt", system_prompt)
    if api_key is not None and not isinstance(api_key, str):
        raise ValueError(f"`api_key` must be a string or None, not {type(api_key).__name__}")
    if not isinstance(scale, str) or scale not in _SCALES:
        raise ValueError(f"`scale` must be one of {', '.join(_SCALES)}; got {scale!r}")
    if isinstance(criteria, str | bytes):
        raise ValueError(f"`criteria` must be a sequence of names, not the string {criteria!r}")
    if isinstance(criteria, Mapping) or not isinstance(criteria, Sequence):
        raise ValueError(
            f"`criteria` must be a sequence of names (a list or tuple of strings), not "
            f"{type(criteria).__name__} {criteria!r}"
        )
    names = tuple(criteria)
    if not names or any(not isinstance(c, str) or not c.strip() for c in names):
        raise ValueError(f"`criteria` must be non-empty strings, not {criteria!r}")
    for criterion in names:
        _check_text("criteria", criterion)
    if len(set(names)) != len(names):
        raise ValueError(f"`criteria` must not repeat: {criteria!r}")
    if scale != "json" and len(names) != 1:
        raise ValueError(
            f"`criteria` must have one name for scale {scale!r} (several need scale 'json'); "
            f"got {criteria!r}"
        )
    if score_range is not None and scale != "json":
        raise ValueError(f"`score_range` applies to scale 'json' only, not {scale!r}")
    pair = (0.0, 1.0) if score_range is None else score_range
    if (
        isinstance(pair, str | bytes | Mapping)
        or not isinstance(pair, Sequence)
        or len(pair) != 2
        or not all(_is_real(v) for v in pair)
        or not float(pair[0]) < float(pair[1])
        or not math.isfinite(float(pair[1]) - float(pair[0]))
    ):
        raise ValueError(
            "`score_range` must be two finite numbers (low, high) with low < high, not "
            f"{score_range!r}"
        )
    low, high = float(pair[0]), float(pair[1])
    if not _is_real(temperature) or temperature < 0:  # type: ignore[operator]
        raise ValueError(f"`temperature` must be a finite number >= 0, not {temperature!r}")
    if seed is not None and (not _is_int(seed) or not -_MAX_INT64 - 1 <= seed <= _MAX_INT64):
        raise ValueError(f"`seed` must be an integer (64-bit) or None, not {seed!r}")
    if max_tokens is not None and (not _is_int(max_tokens) or not 1 <= max_tokens <= _MAX_INT64):
        raise ValueError(
            f"`max_tokens` must be a positive integer (below 2**63) or None, not {max_tokens!r}"
        )
    for parameter, value in (("timeout", timeout), ("backoff", backoff)):
        if not _is_real(value) or not 0 < value <= _MAX_SECONDS:  # type: ignore[operator]
            raise ValueError(
                f"`{parameter}` must be a number of seconds, more than 0 and at most "
                f"{_MAX_SECONDS:g}, not {value!r}"
            )
    if not _is_int(max_retries) or not 0 <= max_retries <= _MAX_RETRIES:
        raise ValueError(
            f"`max_retries` must be an integer from 0 to {_MAX_RETRIES}, not {max_retries!r}"
        )
    if not _is_int(max_concurrency) or max_concurrency < 1:
        raise ValueError(f"`max_concurrency` must be an integer >= 1, not {max_concurrency!r}")
    return names, (low, high)

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

The ``openai`` package (about a second to import) is imported on the first request.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import re
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from kagreport._errors import KagreportError
from kagreport.evaluation._cache import JudgeCache
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._judge import JudgeFailure, Judgement, Usage, identity_hash

if TYPE_CHECKING:
    from jinja2 import Environment, Template
    from openai import OpenAI

__all__ = ["LLMJudge", "Scale", "parse_verdict"]

logger = logging.getLogger(__name__)

#: The verdict scales a judge can read.
Scale = Literal["binary", "1-5", "1-10", "json"]
_SCALES: tuple[str, ...] = get_args(Scale)

# Bump when anything that changes a verdict for the same response changes (parsing rules,
# request shape): it is part of the identity, hence of every cache key.
_VERSION = 1

# A server asking to wait longer than this (seconds) is not waited for: the item fails.
_MAX_RETRY_AFTER = 120.0

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


def _first_json_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _parse_json(
    text: str, criteria: Sequence[str], score_range: tuple[float, float]
) -> dict[str, float]:
    data = _first_json_object(text)
    if data is None:
        raise ValueError("no complete JSON object in the reply")
    missing = [name for name in criteria if name not in data]
    if missing:
        raise ValueError(f"the JSON object has no {', '.join(map(repr, missing))}")
    low, high = score_range
    scores: dict[str, float] = {}
    for name in criteria:
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name!r} is {value!r}, not a number")
        if not math.isfinite(value) or not low <= value <= high:
            raise ValueError(f"{name!r} is {value!r}, outside [{low:g}, {high:g}]")
        scores[name] = (float(value) - low) / (high - low)
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
    ``(x - low) / (high - low)``.
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


def _refuse_none(value: Any) -> Any:
    # A prompt reading "Reference: None" is a bug to report, not a prompt to send.
    if value is None:
        raise _NoneInPrompt(
            "it prints a value that is None (an item without a reference, or without "
            "metadata['context']?); guard it with {% if ... %}"
        )
    return value


def _environment() -> Environment:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    # Sandboxed and immutable: a template may read the item, not call into or change it.
    # No autoescape: prompts are plain text, and "&amp;" would change what the model reads.
    return ImmutableSandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=_refuse_none,
    )


def _compile(environment: Environment, source: object, parameter: str) -> Template:
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


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


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
    return text if len(text) <= limit else text[:limit] + "..."


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
        Default: the ``OPENAI_API_KEY`` environment variable, else ``"not-needed"`` (local
        servers ignore it). Not part of the identity.
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
        Cap on the reply's length, in tokens.
    timeout : float
        Seconds allowed for each attempt's connect, send and each read (httpx timeouts
        apply per operation, so a server trickling bytes can take longer in total).
    max_retries : int
        Extra attempts after a 429, a 5xx, a timeout or a connection error (default 3).
        Other 4xx replies fail at once.
    backoff : float
        Seconds before the first retry, doubling at each one (0.5, 1, 2, ...); a longer
        ``retry-after-ms`` or ``Retry-After`` header wins. A server asking for more than
        120 s fails the item instead.
    max_concurrency : int
        Requests this judge keeps in flight at most, across threads (default 4). A request
        waiting to be retried gives its slot up meanwhile.
    cache : JudgeCache or path, optional
        A response cache, or the path of one to open (and close with :meth:`close`).

    Raises
    ------
    ValueError
        If an argument is out of its domain (the message names it and what is allowed),
        or a template does not compile or uses a variable other than ``item`` and
        ``context``.
    KagreportError
        If ``cache`` is a path that cannot be opened as a judge cache.

    Notes
    -----
    ``identity`` holds what determines a verdict: kind, model, base URL, the SHA-256 of
    both templates, temperature, seed, scale, criteria, max_tokens (and score_range for
    JSON) and a version. Timeouts, retries, concurrency and the API key do not belong there.
    The cache key is ``identity_hash({"judge": identity, "request": body})`` with the exact
    request body, so changing either template, even the system one, changes every key.

    The raw reply text is the verdict kept in reports, for failures too.

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
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name` must be a non-empty string, not {name!r}")
        for parameter, value in (("model", model), ("base_url", base_url)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"`{parameter}` must be a non-empty string, not {value!r}")
        if scale not in _SCALES:
            raise ValueError(f"`scale` must be one of {', '.join(_SCALES)}; got {scale!r}")
        if isinstance(criteria, str):
            raise ValueError(f"`criteria` must be a sequence of names, not the string {criteria!r}")
        names = tuple(criteria)
        if not names or any(not isinstance(c, str) or not c for c in names):
            raise ValueError(f"`criteria` must be non-empty strings, not {criteria!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"`criteria` must not repeat: {criteria!r}")
        if scale != "json" and len(names) != 1:
            raise ValueError(
                f"`criteria` must have one name for scale {scale!r} (several need scale 'json'); "
                f"got {criteria!r}"
            )
        if score_range is not None and scale != "json":
            raise ValueError(f"`score_range` applies to scale 'json' only, not {scale!r}")
        low, high = (0.0, 1.0) if score_range is None else score_range
        if not all(_is_real(v) for v in (low, high)) or not low < high:
            raise ValueError(
                f"`score_range` must be two finite numbers (low < high), not {score_range!r}"
            )
        if not _is_real(temperature) or temperature < 0:
            raise ValueError(f"`temperature` must be a finite number >= 0, not {temperature!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"`seed` must be an integer or None, not {seed!r}")
        if max_tokens is not None and (not _is_count(max_tokens) or max_tokens == 0):
            raise ValueError(f"`max_tokens` must be a positive integer or None, not {max_tokens!r}")
        if not _is_real(timeout) or timeout <= 0:
            raise ValueError(f"`timeout` must be a positive number of seconds, not {timeout!r}")
        if not _is_count(max_retries):
            raise ValueError(f"`max_retries` must be an integer >= 0, not {max_retries!r}")
        if not _is_real(backoff) or backoff < 0:
            raise ValueError(f"`backoff` must be a number of seconds >= 0, not {backoff!r}")
        if not _is_count(max_concurrency) or max_concurrency < 1:
            raise ValueError(f"`max_concurrency` must be an integer >= 1, not {max_concurrency!r}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise ValueError(
                f"`system_prompt` must be a template string or None, not {system_prompt!r}"
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
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._scale: Scale = scale
        self._criteria = names
        self._score_range: tuple[float, float] = (float(low), float(high))
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
            "seed": self._seed,
            "scale": self._scale,
            "criteria": list(self._criteria),
            "max_tokens": self._max_tokens,
            "version": _VERSION,
        }
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
        from jinja2 import TemplateError

        try:
            return template.render(item=item, context=item.metadata.get("context"))
        except (TemplateError, _NoneInPrompt) as exc:
            raise JudgeFailure(
                f"judge {self.name!r}: cannot render the {which} template for item "
                f"{item.identifier!r}: {exc}"
            ) from exc

    def request_body(self, item: AnswerItem) -> dict[str, Any]:
        """The exact chat-completions request body this judge sends for ``item``.

        Raises
        ------
        JudgeFailure
            If a template cannot be rendered for this item (the message says why).
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
                import openai

                # The SDK's own retries are off (max_retries=0): ours count attempts and
                # responses, honour Retry-After and release the concurrency slot while waiting.
                self._client = openai.OpenAI(
                    api_key=self._api_key,
                    base_url=self._base_url,
                    max_retries=0,
                    timeout=self._timeout,
                )
                # Copies made by with_cache() are often dropped without close(): their
                # sockets are closed when they are collected, not left to warn.
                self._close_client = weakref.finalize(self, self._client.close)
            return self._client

    def _complete(self, item: AnswerItem, body: dict[str, Any]) -> _Reply:
        """Send the request, retrying transient failures; one model response or a failure."""
        import openai

        client = self._get_client()
        attempts = self._max_retries + 1
        problem = ""
        for attempt in range(attempts):
            wait: float | None = None
            try:
                with self._slots:
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
            time.sleep(delay)
        raise JudgeFailure(
            f"judge {self.name!r}: no answer from {self._base_url} for item {item.identifier!r} "
            f"after {attempts} attempt(s); last: {problem}"
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
            detail = f"an error: {error!r}" if error is not None else _shorten(text)
            raise JudgeFailure(f"{where} has no choices, {detail}")
        usage, input_tokens, output_tokens = _read_usage(data.get("usage"))
        choices = data["choices"]
        choice = choices[0] if choices and isinstance(choices[0], Mapping) else None
        if choice is None:
            raise JudgeFailure(f"{where} has an empty choices list", usage=usage)
        message = choice.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        return _Reply(
            text=content if isinstance(content, str) else None,
            finish_reason=choice.get("finish_reason"),
            usage=usage,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )

    def _judgement(self, item: AnswerItem, text: str, usage: Usage, truncated: bool) -> Judgement:
        try:
            scores = parse_verdict(
                text,
                self._scale,
                self._criteria,
                score_range=self._score_range,
                truncated=truncated,
            )
        except ValueError as exc:
            cut = " (the reply was cut off: finish_reason 'length')" if truncated else ""
            raise JudgeFailure(
                f"judge {self.name!r}: no {self._scale} verdict in the reply for item "
                f"{item.identifier!r}{cut}: {exc}",
                verdict=text,
                usage=usage,
            ) from None
        return Judgement(scores=scores, verdict=text, usage=usage)

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
            text and ``usage`` what the response cost). Failures are never cached.
        """
        if item.answer is None:
            raise JudgeFailure(f"judge {self.name!r}: item {item.identifier!r} has no answer")
        body = self.request_body(item)
        cache = self._cache
        key = None
        if cache is not None:
            key = self._key(body)
            try:
                hit = cache.get(key)
            except KagreportError as exc:  # an unreadable cache costs a request, not the item
                logger.warning("judge %r: %s; asking the model", self.name, exc)
                hit = None
            if hit is not None:
                return self._judgement(
                    item, hit.text, Usage(responses=1, cached_responses=1), False
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
        if cache is not None and key is not None:
            try:
                cache.put(key, reply.text, reply.input_tokens, reply.output_tokens)
            except KagreportError as exc:  # the verdict stands; only the reuse is lost
                logger.warning("judge %r: response not cached: %s", self.name, exc)
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
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)

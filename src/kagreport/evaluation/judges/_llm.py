"""An LLM judge over any OpenAI-compatible chat-completions endpoint.

OpenAI, vLLM, Ollama, llama.cpp's server and the like all take the same request. The judge
renders a Jinja2 prompt for an item, sends it (temperature 0 and a seed by default), reads a
score from the reply and reports what the call cost. It retries 429s, 5xx replies, timeouts
and connection errors itself, with back-off, and keeps at most ``max_concurrency`` requests
in flight. An attempt takes at most ``timeout`` seconds in all, an item at most ``deadline``
with its retries, and a response body is read as a stream, at most ``max_response_bytes``
of it on the wire and once inflated (:mod:`~kagreport.evaluation.judges._http`): a hostile
server costs neither memory nor time. Every failure names the judge, the endpoint and its
cause (``JudgeFailure.cause``: a status, a limit, what was malformed). With a
:class:`~kagreport.evaluation.judges._cache.JudgeCache`, a response already seen for the same
judge identity and the same request is read from disk and costs nothing.

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
:class:`~kagreport.evaluation.judges._protocol.JudgeFailure` without being retried (a 2xx is not a
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
<kagreport.evaluation.judges._cache.JudgeCache.disable>`, with one ERROR line per cache) and goes
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

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from kagreport._errors import KagreportError
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation.judges._cache import JudgeCache
from kagreport.evaluation.judges._client import (
    _NO_KEY,
    DEFAULT_RESPONSE_BYTES,
    _ChatClient,
    _default_deadline,
    _is_openai,
)
from kagreport.evaluation.judges._protocol import (
    BINARY_SCALE,
    JudgeFailure,
    Judgement,
    Usage,
    identity_hash,
    range_scale,
    rating_scale,
)
from kagreport.evaluation.judges._sandbox import _compile, _environment, _render
from kagreport.evaluation.judges._settings import _check_settings
from kagreport.evaluation.judges._verdict import (
    MAX_REPLY_CHARS,
    Scale,
    _describe,
    _read_judgement,
    _valid_text,
)

__all__ = ["LLMJudge"]

logger = logging.getLogger(__name__)

# Bump when anything that changes a verdict for the same response changes (parsing rules,
# request shape): it is part of the identity, hence of every cache key.
# 2: lone surrogates replaced, replies and prompts capped, bounded JSON search, identity
#    without None values.
_VERSION = 2


def _restore(name: str, settings: dict[str, Any]) -> LLMJudge:
    return LLMJudge(name, **settings)


class LLMJudge(_ChatClient):
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
        :class:`~kagreport.evaluation.AnswerItem`: ``item.question``,
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
        How the model writes its verdict; see ``parse_verdict`` for the exact rules.
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
        Seconds one attempt may take in all: connecting, sending the request and receiving
        the whole reply (default 60; more than 0 and at most 3600). A server that drips its
        reply a byte at a time is cut off there, whatever the pace of its bytes. (Resolving
        the host name is left to the system's resolver.)
    deadline : float, optional
        Seconds one item may take in all, from its first request on: every attempt, the
        back-off and ``Retry-After`` waits between them, and waiting for a slot to retry.
        No attempt starts that would wait past it; one under way is cut off there. Default
        (None): enough for every attempt to time out, with a second to spare for each,
        ``(max_retries + 1) * (timeout + 1) + backoff * (2**max_retries - 1)`` (247.5 s
        with the defaults), so that it only bounds ``Retry-After`` waits; any number of
        seconds more than 0 otherwise.
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
    max_response_bytes : int
        The most bytes of one response body read, both as they arrive and once inflated
        (``gzip`` or ``deflate``, the only encodings asked for); default 4 MiB (4,194,304),
        from 1024 to 1 GiB. The body is read as a stream and dropped at the first byte over:
        the longest reply kept (``MAX_REPLY_CHARS``, one million characters) takes at
        most 4,000,000 bytes of UTF-8, so 4 MiB reads any reply the judge would keep (unless
        its server escapes every character as ``\\uXXXX``), and a 2 GiB body, an endless
        one or a gzip bomb costs at most 4 MiB. A body over the
        limit (or a ``Content-Length`` over it) fails the item at once, not retried, not
        cached, with a message naming the judge, the endpoint and the limit.
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
        deadline: float | None = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_concurrency: int = 4,
        max_response_bytes: int = DEFAULT_RESPONSE_BYTES,
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
            deadline=deadline,
            max_retries=max_retries,
            backoff=backoff,
            max_concurrency=max_concurrency,
            max_response_bytes=max_response_bytes,
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
        self._given_deadline = deadline
        self._deadline = (
            _default_deadline(self._timeout, max_retries, self._backoff)
            if deadline is None
            else float(deadline)
        )
        self._max_concurrency = max_concurrency
        self._max_response_bytes = max_response_bytes
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._client = None
        self._close_client = None
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
    def scales(self) -> dict[str, str]:
        """Criterion -> the scale the model is asked to score it on: ``"nominal 0/1"``
        (binary), ``"ordinal 1-5"``, ``"ordinal 1-10"``, or ``"interval <low>..<high>"`` (JSON,
        its ``score_range``), whatever the [0, 1] number it is stored as. Judges are compared
        by Krippendorff's alpha only on the same criterion and scale."""
        if self._scale == "binary":
            scale = BINARY_SCALE
        elif self._scale == "json":
            scale = range_scale(*self._score_range)
        else:
            scale = rating_scale(int(self._scale.split("-")[1]))
        return dict.fromkeys(self._criteria, scale)

    @property
    def identity(self) -> dict[str, Any]:
        """What determines the verdicts (a fresh JSON-compatible copy)."""
        return json.loads(json.dumps(self._identity))  # type: ignore[no-any-return]

    @property
    def cache(self) -> JudgeCache | None:
        """The response cache, if any."""
        return self._cache

    @property
    def deadline(self) -> float:
        """Seconds one item may take in all (the one given, or the default from ``timeout``,
        ``max_retries`` and ``backoff``)."""
        return self._deadline

    @property
    def max_response_bytes(self) -> int:
        """The most bytes of one response body read, on the wire and inflated."""
        return self._max_response_bytes

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
            "deadline": self._given_deadline,
            "max_retries": self._max_retries,
            "backoff": self._backoff,
            "max_concurrency": self._max_concurrency,
            "max_response_bytes": self._max_response_bytes,
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
            system = _render(self._system_template, item, "system prompt", self.name)
            messages.append({"role": "system", "content": system})
        user = _render(self._user_template, item, "prompt", self.name)
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

    def _judgement(self, item: AnswerItem, text: str, usage: Usage, truncated: bool) -> Judgement:
        return _read_judgement(
            self.name,
            self._base_url,
            item,
            text,
            usage,
            truncated,
            self._scale,
            self._criteria,
            self._score_range,
        )

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
            raise JudgeFailure(
                f"judge {self.name!r}: item {item.identifier!r} has no answer",
                cause="the item has no answer",
            )
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
            content = f"has no text content (finish_reason {reply.finish_reason!r})"
            raise JudgeFailure(
                f"judge {self.name!r}: the reply from {self._base_url} for item "
                f"{item.identifier!r} {content}",
                usage=reply.usage,
                cause=f"the reply {content}",
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

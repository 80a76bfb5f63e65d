"""The chat client: one chat-completions request per item over the ``openai`` SDK, with
the judge's own retries (429, 5xx, timeouts, connection errors), back-off, ``Retry-After``,
a deadline per attempt (``timeout``) and per item (``deadline``), a bounded response body
(``max_response_bytes``, see :mod:`~kagreport.evaluation.judges._http`), a bound on requests
in flight, and only the headers a chat request needs for a server other than OpenAI's.
:class:`~kagreport.evaluation.judges._llm.LLMJudge` is one."""

from __future__ import annotations

import email.utils
import http
import json
import logging
import math
import threading
import time
import urllib.parse
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

# The module, not the function: _evaluate imports this package (for the protocol) while
# it initialises, so current_stop is looked up when a request is made.
from kagreport._format import plural
from kagreport._optional import optional
from kagreport.evaluation import _evaluate
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation.judges import _http
from kagreport.evaluation.judges._protocol import JudgeFailure, Usage
from kagreport.evaluation.judges._verdict import _shorten, _valid_text

if TYPE_CHECKING:
    from openai import OpenAI

__all__: list[str] = []

# The judge's logger: the retries are logged as they were before this module was split off.
logger = logging.getLogger("kagreport.evaluation.judges._llm")

# A server asking to wait longer than this (seconds) is not waited for: the item fails.
_MAX_RETRY_AFTER = 120.0

#: The default ``max_response_bytes``: 4 MiB, more than the longest reply kept takes with the
#: JSON around it (MAX_REPLY_CHARS characters, at most 4 bytes each in UTF-8: 4,000,000).
DEFAULT_RESPONSE_BYTES = 4 * 1024 * 1024

_MAX_INT64 = 2**63 - 1


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


#: The placeholder key sent where there is no key to send (local servers ignore it).
_NO_KEY = "not-needed"
# What a request to a server other than OpenAI's may carry (besides the SDK's
# x-stainless-* description of itself, and the judge's own Authorization).
_PLAIN_HEADERS = frozenset(
    {"host", "accept", "accept-encoding", "connection", "content-type", "content-length",
     "user-agent"}
)  # fmt: skip


def _status(code: int) -> str:
    """``HTTP 429 (Too Many Requests)``: a status and its reason phrase, when it has one."""
    try:
        return f"HTTP {code} ({http.HTTPStatus(code).phrase})"
    except ValueError:
        return f"HTTP {code}"


def _default_deadline(timeout: float, max_retries: int, backoff: float) -> float:
    """Seconds an item takes when every attempt times out: the attempts, a second each for
    what happens around them (a slot, a connection), and the back-off between them,
    ``(max_retries + 1) * (timeout + 1) + backoff * (2**max_retries - 1)``."""
    return (max_retries + 1) * (timeout + 1) + backoff * (2.0**max_retries - 1)


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


class _ChatClient:
    """The requests of an :class:`~kagreport.evaluation.judges._llm.LLMJudge`, which sets
    these attributes (a base class, so the judge keeps one set of settings)."""

    name: str
    _base_url: str
    _api_key: str
    _official: bool
    _timeout: float
    _deadline: float
    _max_retries: int
    _backoff: float
    _max_response_bytes: int
    _slots: threading.BoundedSemaphore
    _client: OpenAI | None
    _close_client: weakref.finalize[..., _ChatClient] | None
    _client_lock: threading.Lock

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
        """The SDK's HTTP client, with the judge's bounds (:mod:`._http`); for a server other
        than OpenAI's, one that sends it only the headers a chat request needs.

        The SDK also reads ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``, ``OPENAI_ADMIN_KEY`` and
        ``OPENAI_CUSTOM_HEADERS`` (which may hold an ``Authorization``) from the environment;
        what it takes from there belongs to OpenAI, so another server gets none of it: every
        request there carries this judge's own key (the one given, or the placeholder) and,
        past a redirect to another origin, no key at all.
        """
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

        # OpenAI's own API gets what the SDK took from the environment: no scrubbing.
        requests = [_http.request_hook] if self._official else [scrub, _http.request_hook]
        hooks = {"request": requests, "response": [_http.response_hook(self._max_response_bytes)]}
        client = openai.DefaultHttpxClient(event_hooks=hooks)
        if not _http.bound_network(client):
            logger.warning(
                "judge %r: this httpx keeps its network layer to itself: each read is bounded "
                "by the %g s timeout, not the whole attempt",
                *(self.name, self._timeout),
            )
        return client

    def _failure(self, what: str, cause: str, usage: Usage | None = None) -> JudgeFailure:
        """``judge '<name>': <what>`` (which names the endpoint and the item), with its
        ``cause``: the same for every item that fails this way."""
        return JudgeFailure(f"judge {self.name!r}: {what}", usage=usage, cause=cause)

    def _send(self, client: OpenAI, body: dict[str, Any]) -> tuple[int, str]:
        """One request: status and text of a 2xx reply; the SDK's errors, or the bounds'
        own (``_http.Expired``, ``_http.Refused``) however the SDK passed them on."""
        with optional("openai"):
            import openai

        try:
            raw = client.chat.completions.with_raw_response.create(**body)
            return raw.status_code, raw.text
        except openai.OpenAIError as exc:
            bound = _http.bound_error(exc)
            if bound is not None:
                raise bound from None
            raise

    def _refused(self, item: AnswerItem, exc: _http.Refused) -> JudgeFailure:
        where = f"the response from {self._base_url} for item {item.identifier!r}"
        if not exc.limit:
            return self._failure(
                f"{where} cannot be read: {exc.detail}",
                f"the response cannot be read: {exc.detail}",
            )
        limit = f"the limit of {self._max_response_bytes:,} bytes (max_response_bytes)"
        return self._failure(
            f"{where} is over {limit}: {exc.detail}", f"the response is over {limit}"
        )

    # Long (about 90 lines): one loop over the attempts, each outcome handled where it
    # happens (retried, failed at once, or waited for), with the stop and both deadlines.
    def _complete(self, item: AnswerItem, body: dict[str, Any]) -> _Reply:
        """Send the request, retrying transient failures; one model response or a failure."""
        with optional("openai"):
            import openai

        client = self._get_client()
        attempts = self._max_retries + 1
        made = 0
        problem = cause = ""
        stop = _evaluate.current_stop()
        for_item = f"for item {item.identifier!r}"
        deadline = math.inf  # the item's: set when its first attempt starts
        for attempt in range(attempts):
            wait: float | None = None
            try:
                with self._slots:
                    if stop is not None and stop.is_set():  # checked once the slot is ours
                        raise self._stopped(item)
                    now = time.monotonic()
                    if attempt == 0:
                        deadline = now + self._deadline
                    elif now >= deadline:  # waiting for the slot took the time left
                        break
                    end = min(now + self._timeout, deadline)
                    by_timeout = now + self._timeout <= deadline  # else the deadline cuts it
                    made += 1
                    with _http.attempt_deadline(end):
                        status, text = self._send(client, body)
            except (openai.APITimeoutError, _http.Expired):
                if by_timeout:
                    problem = f"no complete reply within the {self._timeout:g} s timeout"
                else:
                    problem = f"no complete reply before the {self._deadline:g} s deadline"
                cause = problem
            except _http.Refused as exc:
                raise self._refused(item, exc) from None
            except openai.APIConnectionError as exc:
                detail = exc.__cause__ or exc
                problem = f"cannot connect to {self._base_url}: {detail}"
                cause = f"cannot connect: {detail}"
            except openai.APIStatusError as exc:
                cause = _status(exc.status_code)
                problem = f"{cause}: {_shorten(str(exc))}"
                if exc.status_code != 429 and exc.status_code < 500:
                    what = f"{self._base_url} answered {problem} {for_item}"
                    raise self._failure(what, cause) from exc
                wait = _retry_after(exc.response.headers)
            except openai.OpenAIError as exc:  # anything else the SDK raises: not transient
                cause = f"{type(exc).__name__}: {_shorten(str(exc))}"
                what = f"the request to {self._base_url} {for_item} failed: {exc}"
                raise self._failure(what, cause) from exc
            else:
                return self._read_reply(item, status, text)
            if attempt + 1 == attempts:
                break
            delay = self._backoff * 2**attempt
            if wait is not None:
                if wait > _MAX_RETRY_AFTER:
                    what = (
                        f"{self._base_url} asks to wait {wait:g} s (more than "
                        f"{_MAX_RETRY_AFTER:g} s) after {problem} {for_item}"
                    )
                    raise self._failure(what, cause)
                delay = max(delay, wait)
            if time.monotonic() + delay >= deadline:
                break  # the next attempt would start past the item's deadline
            logger.info(
                "judge %r, item %r: %s; retrying in %.2f s (attempt %d of %d)",
                *(self.name, item.identifier, problem, delay, attempt + 2, attempts),
            )
            if stop is None:
                time.sleep(delay)
            elif stop.wait(delay):
                raise self._stopped(item)
        within = (
            f"after {plural(made, 'attempt')}"
            if made == attempts
            else f"within its {self._deadline:g} s deadline ({plural(made, 'attempt')})"
        )
        what = f"no answer from {self._base_url} {for_item} {within}; last: {problem}"
        raise self._failure(what, cause)

    def _stopped(self, item: AnswerItem) -> JudgeFailure:
        return self._failure(
            f"the evaluation was stopped before the request to {self._base_url} for item "
            f"{item.identifier!r}",
            "the evaluation was stopped",
        )

    def _read_reply(self, item: AnswerItem, status: int, text: str) -> _Reply:
        where = f"HTTP {status} from {self._base_url} for item {item.identifier!r}"
        try:
            data = json.loads(text)
        except ValueError:
            raise self._failure(
                f"{where} is not JSON: {_shorten(text)!r}", "the response is not JSON"
            ) from None
        except RecursionError:  # the reader's depth is the interpreter's recursion limit
            raise self._failure(
                f"{where} is JSON nested too deeply to be read (more levels than Python's "
                "JSON reader allows)",
                "the response is JSON nested too deeply to be read",
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            # e.g. {"error": {"message": "rate limit exceeded"}}: not a model response.
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, Mapping) and isinstance(error.get("message"), str):
                error = error["message"]
            detail = f"an error: {_shorten(repr(error))}" if error is not None else _shorten(text)
            cause = "the response has no choices" + (" (an error)" if error is not None else "")
            raise self._failure(f"{where} has no choices, {detail}", cause)
        usage, input_tokens, output_tokens = _read_usage(data.get("usage"))
        choices = data["choices"]
        if not choices:
            raise self._failure(
                f"{where} has an empty choices list",
                "the response has an empty choices list",
                usage=usage,
            )
        choice = choices[0]
        if not isinstance(choice, Mapping):
            malformed = f"malformed: choices[0] is {_json_kind(choice)}, not an object"
            raise self._failure(f"{where} is {malformed}", f"the response is {malformed}", usage)
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


def _json_kind(value: object) -> str:
    """A JSON value as a message names it: a scalar as written, a list by its kind."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return json.dumps(_shorten(value, 40), ensure_ascii=False)
    return json.dumps(value)  # null, true, false, a number

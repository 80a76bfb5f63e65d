"""The chat client: one chat-completions request per item over the ``openai`` SDK, with
the judge's own retries (429, 5xx, timeouts, connection errors), back-off, ``Retry-After``,
a bound on requests in flight, and only the headers a chat request needs for a server other
than OpenAI's. :class:`~kagreport.evaluation.judges._llm.LLMJudge` is one."""

from __future__ import annotations

import email.utils
import json
import logging
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
from kagreport.evaluation.judges._protocol import JudgeFailure, Usage
from kagreport.evaluation.judges._verdict import _shorten, _valid_text

if TYPE_CHECKING:
    from openai import OpenAI

__all__: list[str] = []

# The judge's logger: the retries are logged as they were before this module was split off.
logger = logging.getLogger("kagreport.evaluation.judges._llm")

# A server asking to wait longer than this (seconds) is not waited for: the item fails.
_MAX_RETRY_AFTER = 120.0

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
    _max_retries: int
    _backoff: float
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
        stop = _evaluate.current_stop()
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
            f"after {plural(attempts, 'attempt')}; last: {problem}"
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

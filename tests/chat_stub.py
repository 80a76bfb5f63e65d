"""A scripted OpenAI-compatible chat-completions server for tests (PITFALLS.md's "stub endpoint").

A real HTTP server on 127.0.0.1 (``ThreadingHTTPServer``, port 0) answering
``POST /v1/chat/completions``. Requests are routed by a marker in the messages,
``[item <id>]`` (the tests' prompt templates start with ``[item {{ item.identifier }}]``):
the n-th request for an item gets the n-th :class:`Reply` scripted for it (the last one
repeats), other requests the default reply. Each reply can be a fault: an HTTP status with
headers (429 with ``Retry-After``/``retry-after-ms``, 500, 503), a sleep past the client's
timeout, a malformed or error body, missing or null ``usage``, ``prompt_tokens_details:
null``, ``finish_reason: "length"``, or a whole response the reply writes itself
(``Reply.raw``: the misbehaving servers of tests/hostile.py). The server logs every request
(thread-safe) and the most requests it ever had in flight.

Usage::

    with ChatStub() as stub:
        stub.script("q2", error_body("rate limit exceeded"), ok("Verdict: yes"))
        judge = LLMJudge("j", model="m", base_url=stub.url, prompt="[item {{ item.identifier }}] ...")
        ...
        assert stub.requests("q2") == 1
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, BinaryIO

__all__ = [
    "ChatStub",
    "Logged",
    "Reply",
    "error_body",
    "malformed",
    "no_usage",
    "null_usage",
    "ok",
    "sleep",
    "status",
    "truncated",
]

_MARKER = re.compile(r"\[item ([^\]\s]+)\]")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: ``Reply.usage`` value that leaves the ``usage`` key out of the body.
MISSING: Any = _Missing()


@dataclass(frozen=True)
class Reply:
    """One scripted answer to one request.

    Attributes
    ----------
    content : str or None
        The assistant message's content.
    finish_reason : str or None
        ``"stop"``, ``"length"``...
    usage : mapping, None or MISSING
        The ``usage`` object as sent (``None`` sends ``"usage": null``; MISSING omits it).
    status : int
        HTTP status.
    headers : mapping
        Extra response headers (``Retry-After``, ``retry-after-ms``...).
    body : bytes, optional
        A raw body sent as is, instead of a chat completion.
    delay : float
        Seconds to wait before answering (past the client's timeout, it sees none).
    raw : callable, optional
        ``raw(stream, stopping)`` writes the whole response itself (status line, headers,
        body) to the connection's ``stream``, for as long as it likes, until ``stopping`` (an
        Event) is set; the connection is closed afterwards. ``status`` is only logged.
    """

    content: str | None = "Verdict: yes"
    finish_reason: str | None = "stop"
    usage: Any = field(
        default_factory=lambda: {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    )
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0
    raw: Callable[[BinaryIO, threading.Event], None] | None = None


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def ok(
    content: str = "Verdict: yes",
    *,
    prompt_tokens: int = 12,
    completion_tokens: int = 3,
    details_null: bool = False,
    delay: float = 0.0,
) -> Reply:
    """A normal completion; ``details_null`` adds ``prompt_tokens_details: null`` (vLLM)."""
    usage = _usage(prompt_tokens, completion_tokens)
    if details_null:
        usage |= {"prompt_tokens_details": None, "completion_tokens_details": None}
    return Reply(content=content, usage=usage, delay=delay)


def no_usage(content: str = "Verdict: yes") -> Reply:
    """A completion without a ``usage`` key."""
    return Reply(content=content, usage=MISSING)


def null_usage(content: str = "Verdict: yes") -> Reply:
    """A completion with ``"usage": null``."""
    return Reply(content=content, usage=None)


def truncated(content: str, *, prompt_tokens: int = 12, completion_tokens: int = 8) -> Reply:
    """A completion cut off by ``max_tokens`` (``finish_reason: "length"``)."""
    return Reply(
        content=content, finish_reason="length", usage=_usage(prompt_tokens, completion_tokens)
    )


def status(code: int, message: str = "stub error", **headers: str) -> Reply:
    """An HTTP error with an OpenAI-style error body; headers as keywords
    (``retry_after_ms="200"`` sends ``retry-after-ms: 200``)."""
    body = json.dumps({"error": {"message": message, "type": "stub", "code": code}}).encode()
    sent = {name.replace("_", "-"): value for name, value in headers.items()}
    return Reply(status=code, headers=sent, body=body)


def error_body(message: str = "rate limit exceeded") -> Reply:
    """HTTP 200 whose body is an error object with no ``choices`` (PITFALLS.md B9)."""
    return Reply(body=json.dumps({"error": {"message": message}}).encode())


def malformed() -> Reply:
    """HTTP 200 with a body that is not valid JSON."""
    return Reply(body=b'{"id": "x", "choices": [')


def sleep(seconds: float) -> Reply:
    """A normal completion sent only after ``seconds`` (a timeout, if that is long enough)."""
    return Reply(delay=seconds)


@dataclass(frozen=True)
class Logged:
    """One request the stub received.

    Attributes
    ----------
    item : str or None
        The ``[item <id>]`` marker found in the messages.
    attempt : int
        0 for the item's first request, 1 for the second...
    body : dict
        The JSON request body.
    started, answered : float
        ``time.monotonic()`` when the request arrived and just before the reply was sent
        (the client may have gone: a timeout).
    status : int
        The status sent.
    headers : dict
        The request headers, names in lower case.
    """

    item: str | None
    attempt: int
    body: dict[str, Any]
    started: float
    answered: float
    status: int
    headers: dict[str, str]


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (a killed process, a closed keep-alive connection) is
        # what interruption tests do, not an error to print.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ChatStub:
    """The server; a context manager that starts and stops it.

    Parameters
    ----------
    default : Reply or callable
        The reply to unscripted requests, or ``f(item, body) -> Reply``.
    latency : float
        Seconds every reply waits (besides its own ``delay``), to make requests overlap.
    """

    def __init__(
        self,
        default: Reply | Callable[[str | None, dict[str, Any]], Reply] = Reply(),
        *,
        latency: float = 0.0,
    ) -> None:
        self.default = default
        self.latency = latency
        self._scripts: dict[str, list[Reply]] = {}
        self._attempts: dict[str | None, int] = {}  # drives the scripts; never reset
        self._arrived: dict[str | None, int] = {}  # what requests() reports; reset() clears it
        self._log: list[Logged] = []
        self._arrivals: list[tuple[float, dict[str, str]]] = []  # (monotonic time, headers)
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting and inspection ---------------------------------------------------

    def script(self, item: str, *replies: Reply) -> None:
        """Reply to ``item``'s n-th request with ``replies[n]`` (the last one repeats)."""
        with self._lock:
            self._scripts[item] = list(replies)

    def requests(self, item: str | None = None) -> int:
        """Requests received (answered or not yet) for ``item``, or in all when ``item`` is None."""
        with self._lock:
            if item is None:
                return sum(self._arrived.values())
            return self._arrived.get(item, 0)

    def arrivals(self) -> list[tuple[float, dict[str, str]]]:
        """Every request received, answered or not: ``(time.monotonic(), headers)``, headers
        with lower-case names. The clock is the system's, so other processes can compare."""
        with self._lock:
            return list(self._arrivals)

    @property
    def log(self) -> list[Logged]:
        """A copy of the log of answered requests, in the order of their replies."""
        with self._lock:
            return list(self._log)

    @property
    def url(self) -> str:
        """The base URL to give the client (``http://127.0.0.1:<port>/v1``)."""
        assert self._server is not None, "the stub is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def reset(self) -> None:
        """Forget the log, the request counts and the in-flight maximum.

        The scripts go on where they were: an item's next request gets its next reply.
        """
        with self._lock:
            self._log.clear()
            self._arrivals.clear()
            self._arrived.clear()
            self.max_in_flight = 0

    # -- serving --------------------------------------------------------------------

    def _choose(
        self, item: str | None, body: dict[str, Any], headers: dict[str, str], started: float
    ) -> tuple[int, Reply]:
        with self._lock:
            self._arrivals.append((started, headers))
            attempt = self._attempts.get(item, 0)
            self._attempts[item] = attempt + 1
            self._arrived[item] = self._arrived.get(item, 0) + 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            script = self._scripts.get(item) if item is not None else None
        if script:
            return attempt, script[min(attempt, len(script) - 1)]
        default = self.default
        return attempt, default(item, body) if callable(default) else default

    def _record(self, entry: Logged) -> None:
        with self._lock:
            self._in_flight -= 1
            self._log.append(entry)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's
            # algorithm and delayed ACKs add ~40 ms to every reply.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def _send(self, code: int, payload: bytes, headers: Mapping[str, str]) -> bool:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return False  # the client gave up (timed out) first
                return True

            def do_POST(self) -> None:
                started = time.monotonic()
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}', {})
                    return
                try:
                    body = json.loads(raw)
                    text = "\n".join(str(m.get("content")) for m in body["messages"])
                except (ValueError, KeyError, TypeError, AttributeError):
                    self._send(400, b'{"error": {"message": "bad request"}}', {})
                    return
                marker = _MARKER.search(text)
                item = marker.group(1) if marker else None
                headers = {name.lower(): value for name, value in self.headers.items()}
                attempt, reply = stub._choose(item, body, headers, started)
                wait = reply.delay + stub.latency
                if wait > 0:
                    stub._stopping.wait(wait)
                if reply.raw is not None:
                    answered = time.monotonic()
                    stub._record(
                        Logged(item, attempt, body, started, answered, reply.status, headers)
                    )
                    self.close_connection = True
                    try:
                        reply.raw(self.wfile, stub._stopping)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client gave up first: what a bounded client does
                    return
                if reply.body is not None:
                    payload = reply.body
                else:
                    completion: dict[str, Any] = {
                        "id": f"chatcmpl-stub-{item}-{attempt}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.content},
                                "finish_reason": reply.finish_reason,
                            }
                        ],
                    }
                    if reply.usage is not MISSING:
                        completion["usage"] = reply.usage
                    payload = json.dumps(completion).encode()
                # Logged before the reply goes out: once the client has it, it is in the log
                # and no longer in flight.
                answered = time.monotonic()
                stub._record(Logged(item, attempt, body, started, answered, reply.status, headers))
                self._send(reply.status, payload, reply.headers)

        return Handler

    def start(self) -> ChatStub:
        """Start serving on a free port of 127.0.0.1."""
        server = _Server(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True  # a sleeping handler must not hold up the test run
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping handlers wake up and drop their replies."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ChatStub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

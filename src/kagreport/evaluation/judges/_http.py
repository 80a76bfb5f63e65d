"""The bounds an LLM judge puts on the HTTP client under the ``openai`` package: a
response body read as a stream and cut at ``max_response_bytes`` (on the wire and inflated),
and a deadline on every network operation of an attempt (connect, TLS, send, each read).

httpx bounds each operation by its timeout, not the request: a server dripping a byte a
second within the read timeout holds a request for ever, and a response body is read whole
into memory, decompressed without limit. Here:

- a response hook refuses a ``Content-Length`` over the limit before reading anything, then
  replaces the body stream by one that counts the bytes that arrive and inflates ``gzip`` and
  ``deflate`` itself, a chunk at a time and never past the limit (``zlib``'s ``max_length``),
  so that a gzip bomb costs at most the limit; other encodings, which the judge does not ask
  for (``Accept-Encoding: gzip, deflate``), are refused;
- every body is read as UTF-8 (with U+FFFD for what is not), the charset JSON has, not
  as its ``Content-Type`` says (a ``utf-32`` one raised ``UnicodeError`` on any body);
- the connection pool's network backend is wrapped so that every connect, TLS handshake,
  write and read waits at most until the deadline of the attempt under way in the calling
  thread (:func:`attempt_deadline`), and one that would start after it raises
  :class:`Expired`.

Both raise exceptions of this module through the ``openai`` package, which passes them on
(or wraps them: :func:`bound_error` finds them in either case).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from kagreport._errors import KagreportError

__all__: list[str] = []

#: What the judge accepts as ``Content-Encoding``, besides ``identity``.
ENCODINGS = ("gzip", "deflate")

_attempt = threading.local()


class Expired(KagreportError):
    """The deadline of the attempt under way passed (raised from the network layer; the
    judge turns it into a ``JudgeFailure`` or a retry)."""


class Refused(KagreportError):
    """A response the judge will not read: ``detail`` says why; ``limit`` is True when it is
    over ``max_response_bytes``, False for an encoding the judge cannot bound."""

    def __init__(self, detail: str, *, limit: bool) -> None:
        super().__init__(detail)
        self.detail = detail
        self.limit = limit


def bound_error(exc: BaseException) -> Expired | Refused | None:
    """The :class:`Expired` or :class:`Refused` behind ``exc`` (itself, or its cause or
    context, however deep), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Expired | Refused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def attempt_deadline(deadline: float) -> Iterator[None]:
    """Bound every network operation of this thread by ``deadline`` (``time.monotonic()``)."""
    _attempt.deadline = deadline
    try:
        yield
    finally:
        _attempt.deadline = None


def _left(timeout: float | None) -> float | None:
    """The timeout of one operation: at most the time left in this thread's attempt."""
    deadline: float | None = getattr(_attempt, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise Expired("the deadline of the attempt passed")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """A network stream whose every operation ends by the attempt's deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))  # type: ignore[no-any-return]

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _Stream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    """A network backend whose streams end by the attempt's deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        inner = self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return _Stream(inner)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> _Stream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_network(client: Any) -> bool:
    """Wrap the network backend of every connection pool of an httpx client (its transport
    and the proxies it mounts); False if its default transport has no pool to wrap (another
    httpx than this was written for: each read is then bounded, not the attempt)."""
    # httpx builds its httpcore pools without a way to pass a backend: the attributes are
    # httpx's and httpcore's own (the same in httpx2/httpcore2), checked rather than assumed.
    transports = [getattr(client, "_transport", None)]
    transports += list(getattr(client, "_mounts", {}).values())
    wrapped = []
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None:
            wrapped.append(False)
            continue
        if not isinstance(backend, _Backend):
            pool._network_backend = _Backend(backend)  # type: ignore[union-attr]
        wrapped.append(True)
    return wrapped[0]


class _Inflater:
    """One ``Content-Encoding`` undone, its output bounded by ``limit`` bytes in all."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.encoding = encoding
        self._limit = limit
        self._total = 0
        gzip = encoding in ("gzip", "x-gzip")
        # "deflate" is the zlib format (RFC 9110 8.4.1.2); some servers send raw deflate.
        self._fallback = not gzip
        self._head = b""  # what was fed while the zlib header may still prove wrong
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS)

    def _count(self, data: bytes) -> bytes:
        self._total += len(data)
        if self._total > self._limit:
            raise Refused(
                f"it inflates (Content-Encoding {self.encoding}) to more than "
                f"{self._limit:,} bytes",
                limit=True,
            )
        return data

    def feed(self, data: bytes) -> bytes:
        # At most one byte past the limit comes out (max_length), whatever the ratio.
        room = self._limit - self._total + 1
        if self._fallback:
            self._head += data
        try:
            out = self._zlib.decompress(data, room)
        except zlib.error as exc:
            if not self._fallback:
                raise Refused(
                    f"its {self.encoding} encoding is broken ({exc})", limit=False
                ) from None
            self._fallback = False
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.feed(self._head)
        # The zlib header is two bytes (RFC 1950 2.2): one byte alone proves nothing.
        if len(self._head) >= 2:
            self._fallback = False
            self._head = b""
        return self._count(out)

    def flush(self) -> bytes:
        return self._count(self._zlib.flush())


def _bounded_stream(base: type[Any]) -> type[Any]:
    """A subclass of the client's ``SyncByteStream`` (httpx's or httpx2's) that reads the
    body it wraps under the limit."""

    class Bounded(base):  # type: ignore[misc]
        def __init__(self, inner: Any, encodings: list[str], limit: int) -> None:
            self._inner = inner
            self._limit = limit
            # Undone in the reverse order of their application (RFC 9110 8.4).
            self._inflaters = [_Inflater(e, limit) for e in reversed(encodings)]

        def _through(self, data: bytes, start: int = 0) -> bytes:
            for inflater in self._inflaters[start:]:
                if not data:
                    break
                data = inflater.feed(data)
            return data

        def __iter__(self) -> Iterator[bytes]:
            arrived = 0
            for chunk in self._inner:
                arrived += len(chunk)
                if arrived > self._limit:
                    raise Refused(f"more than {self._limit:,} bytes arrived", limit=True)
                data = self._through(chunk)
                if data:
                    yield data
            for index, inflater in enumerate(self._inflaters):
                data = self._through(inflater.flush(), index + 1)
                if data:
                    yield data

        def close(self) -> None:
            self._inner.close()

    return Bounded


_STREAMS: dict[type[Any], type[Any]] = {}
_STREAMS_LOCK = threading.Lock()


def response_hook(limit: int) -> Callable[[Any], None]:
    """An httpx response hook that bounds the body of every response by ``limit`` bytes."""

    def bound(response: Any) -> None:
        headers = response.headers
        declared = headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > limit:
            raise Refused(f"Content-Length {int(declared):,}", limit=True)
        encodings = [
            value.strip().lower()
            for value in headers.get_list("content-encoding", split_commas=True)
            if value.strip().lower() not in ("", "identity")
        ]
        for encoding in encodings:
            if encoding not in (*ENCODINGS, "x-gzip"):
                raise Refused(
                    f"Content-Encoding {encoding!r}, which the judge does not ask for (it "
                    f"accepts {', '.join(ENCODINGS)})",
                    limit=False,
                )
        # httpx's or httpx2's own SyncByteStream, which its Response insists on.
        package = sys.modules[type(response).__module__.partition(".")[0]]
        base = package.SyncByteStream
        with _STREAMS_LOCK:
            stream = _STREAMS.get(base) or _STREAMS.setdefault(base, _bounded_stream(base))
        response.stream = stream(response.stream, encodings, limit)
        # JSON is UTF-8 (RFC 8259 8.1), whatever charset is declared: a decoder chosen by
        # the server (utf-16 or utf-32 without a byte order mark) raises instead of reading.
        response.encoding = "utf-8"
        if encodings:  # undone here: httpx must not inflate it a second time, unbounded
            del headers["content-encoding"]

    return bound


def request_hook(request: Any) -> None:
    """An httpx request hook: ask only for the encodings the judge can bound."""
    request.headers["Accept-Encoding"] = ", ".join(ENCODINGS)

"""A persistent response cache for LLM judges: one SQLite file shared by threads and processes.

Keys are computed by the judge (``identity_hash({"judge": identity, "request": body})``),
so the cache itself knows nothing about models or prompts: it maps a key to the text the
model returned and the tokens that response cost. Only successful, parsable responses are
ever stored; failures never are.

Concurrency
-----------
Several threads of one process share one connection behind a lock (SQLite work is tiny
next to an HTTP round trip). Several processes share the file through SQLite's WAL
journal: readers never block the writer, and a writer that meets another one waits
(``busy_timeout``) and, should SQLite still answer "database is locked", retries with
back-off until ``timeout`` seconds have passed. Every statement is its own short
transaction. A process forked with an open cache opens its own connection on first use.

WAL needs shared memory between the processes, so the file must be on a local disk,
not a network file system.

Opening checks the file
-----------------------
A cache refuses, with one :class:`~kagreport._errors.KagreportError` naming the file, a
path that is not a regular file (a folder, ``/dev/null``), a file that is not SQLite, an
SQLite database of another program (tables other than ``responses``, or a ``responses``
table of another shape: such a file is never written to, not even its journal mode), an
unknown schema version, a file SQLite's ``quick_check`` finds damaged, and a file it cannot
open for writing (a read-only file system or folder). The ``quick_check`` reads the whole
file once, on the first opening of each ``JudgeCache`` object (about 0.1 s per 50 MB).

Disabling
---------
A judge that meets a failing cache (a read or write error after opening) calls
:meth:`JudgeCache.disable`: judges stop using it until it is closed, and the judge logs
one line at ERROR level saying so (each failure itself is a WARNING).
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kagreport._errors import JudgeCacheError
from kagreport.evaluation.judges._cachefile import _connect, _hint, _is_busy

__all__ = ["CachedResponse", "JudgeCache"]

# SQLite integers are signed 64-bit.
_MAX_TOKENS = 2**63 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")

# Connections inherited through fork(): a child must neither use nor close them
# (closing could checkpoint or unlink the parent's WAL), so they are parked here.
_INHERITED: list[sqlite3.Connection] = []

_T = TypeVar("_T")


@dataclass(frozen=True)
class CachedResponse:
    """One stored model response.

    Attributes
    ----------
    text : str
        The model's message content (the raw verdict).
    input_tokens, output_tokens : int or None
        What the original response cost, ``None`` where the server reported no usage.
        A cache hit adds none of it to a judge's usage.
    created : float
        When it was stored, in seconds since the Unix epoch.
    """

    text: str
    input_tokens: int | None
    output_tokens: int | None
    created: float


def _check_tokens(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_TOKENS:
        raise ValueError(
            f"`{name}` must be a non-negative integer below 2**63 or None, not {value!r}"
        )


def _is_token_count(value: object) -> bool:
    return value is None or (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_TOKENS
    )


def _close(connection: sqlite3.Connection, pid: int) -> None:
    if pid == os.getpid():
        connection.close()
    else:
        _INHERITED.append(connection)


def _reopen(path: str, timeout: float) -> JudgeCache:
    return JudgeCache(path, timeout=timeout)


class JudgeCache:
    """A persistent SQLite cache of judge responses, safe across threads and processes.

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file; created (with its folder) when missing. ``":memory:"`` gives a
        private in-memory cache (not shared, not persistent).
    timeout : float
        Seconds an operation may wait for another writer before it fails (default 30).

    Raises
    ------
    KagreportError
        If the file cannot be created or opened, is not an SQLite database, or holds
        something other than a kagreport judge cache (``.path`` names it).
    ValueError
        If ``path`` is empty or ``timeout`` is not a positive number of seconds.

    Notes
    -----
    :meth:`close` releases the connection; using the cache again reopens it. The cache
    pickles as its path, so a process started with ``spawn`` reopens the same file.

    Examples
    --------
    >>> with JudgeCache(":memory:") as cache:
    ...     cache.put("k", "Verdict: yes", 12, 3)
    ...     cache.get("k").text
    'Verdict: yes'
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        location = os.fspath(path)
        if not isinstance(location, str) or not location or "\0" in location:
            raise ValueError(f"`path` must name a file, not {path!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"`timeout` must be a positive number of seconds, not {timeout!r}")
        self._path = location
        self._timeout = float(timeout)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._close_connection: weakref.finalize[..., JudgeCache] | None = None
        self._pid = os.getpid()
        self._disabled: str | None = None
        self._checked = False
        if location != ":memory:":
            if os.path.exists(location) and not os.path.isfile(location):
                raise JudgeCacheError(
                    f"cannot open the judge cache {location}: it is not a regular file "
                    "(a folder, or a device such as /dev/null); give the cache a file path",
                    path=location,
                )
            try:
                Path(location).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise JudgeCacheError(
                    f"cannot create the folder of the judge cache {location}: {exc}", path=location
                ) from exc
        # Open now, so a bad path fails here and not in the middle of an evaluation.
        self._run(lambda connection: None, "open")

    @property
    def path(self) -> str:
        """The SQLite file (or ``":memory:"``)."""
        return self._path

    @property
    def disabled(self) -> str | None:
        """Why judges stopped using this cache (see :meth:`disable`), or ``None``."""
        return self._disabled

    def disable(self, reason: str) -> bool:
        """Tell the judges sharing this cache to stop using it until it is closed.

        A judge calls it when a read or write fails after the cache opened (a damaged
        page, a full disk, a lock held past ``timeout``): the rest of the run goes on
        without the cache instead of failing, or waiting, at every item. The cache
        itself still answers :meth:`get` and :meth:`put`; :meth:`close` clears the flag.

        Parameters
        ----------
        reason : str
            Why, for :attr:`disabled` and the log.

        Returns
        -------
        bool
            ``True`` if this call disabled it, ``False`` if it already was (so exactly
            one caller reports it).
        """
        with self._lock:
            if self._disabled is not None:
                return False
            self._disabled = str(reason) or "an unknown error"
            return True

    # -- connection -----------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        connection = _connect(self._path, self._timeout, check_pages=not self._checked)
        self._checked = True  # quick_check passed (or, in memory, was not needed)
        return connection

    def _get_connection(self) -> sqlite3.Connection:
        # Called with self._lock held.
        if self._connection is not None and self._pid != os.getpid():
            _INHERITED.append(self._connection)
            self._connection = None
        if self._connection is None:
            self._connection = self._open()
            self._pid = os.getpid()
            # A cache dropped without close() (with_cache copies) closes when collected.
            self._close_connection = weakref.finalize(self, _close, self._connection, self._pid)
        return self._connection

    def _run(self, operation: Callable[[sqlite3.Connection], _T], what: str) -> _T:
        """Run one short operation, retrying while another process holds the lock."""
        deadline = time.monotonic() + self._timeout
        pause = 0.01
        while True:
            try:
                with self._lock:
                    return operation(self._get_connection())
            except sqlite3.Error as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    waited = f" after waiting {self._timeout:g} s" if _is_busy(exc) else ""
                    hint = _hint(exc) if what == "open" else ""
                    raise JudgeCacheError(
                        f"cannot {what} the judge cache {self._path}{waited}: {exc}{hint}",
                        path=self._path,
                    ) from exc
            except (OSError, MemoryError, OverflowError, ValueError) as exc:
                # Not SQLite's own errors, but the file's or the value's: still one clear
                # error naming the file, never a traceback.
                raise JudgeCacheError(
                    f"cannot {what} the judge cache {self._path}: {type(exc).__name__}: {exc}",
                    path=self._path,
                ) from exc
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.25)

    # -- public operations ----------------------------------------------------------

    def get(self, key: str) -> CachedResponse | None:
        """The response stored under ``key``, or ``None``.

        Raises
        ------
        KagreportError
            If the file cannot be read (or stays locked for ``timeout`` seconds), or the
            entry is not one this cache writes (a text that is not a string, a token
            count that is not a non-negative integer).
        """

        def read(connection: sqlite3.Connection) -> Any:
            return connection.execute(
                "SELECT text, input_tokens, output_tokens, created FROM responses WHERE key = ?",
                (key,),
            ).fetchone()

        row = self._run(read, "read")
        if row is None:
            return None
        text, input_tokens, output_tokens, created = row
        if (
            not isinstance(text, str)
            or not _is_token_count(input_tokens)
            or not _is_token_count(output_tokens)
            or isinstance(created, bool)
            or not isinstance(created, int | float)
            or not math.isfinite(created)
        ):
            raise JudgeCacheError(
                f"the judge cache {self._path} holds a malformed entry under {key!r} "
                f"(text {type(text).__name__}, tokens {input_tokens!r}/{output_tokens!r}, "
                f"created {created!r})",
                path=self._path,
            )
        return CachedResponse(
            text=text, input_tokens=input_tokens, output_tokens=output_tokens, created=created
        )

    def put(self, key: str, text: str, input_tokens: int | None, output_tokens: int | None) -> None:
        """Store a successful response under ``key`` (replacing any earlier one).

        Parameters
        ----------
        key : str
            The judge's cache key (a SHA-256 hex digest).
        text : str
            The model's message content; valid Unicode (SQLite stores UTF-8, which has no
            lone surrogates such as ``"\\ud83d"``: judges replace them first).
        input_tokens, output_tokens : int or None
            The tokens the response cost, ``None`` where the server did not say.

        Raises
        ------
        ValueError
            If ``key`` is empty, ``text`` not a string or holds a lone surrogate, or a
            token count is negative or not below 2**63 (SQLite's integers are 64-bit).
        KagreportError
            If the file cannot be written (or stays locked for ``timeout`` seconds).
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"`key` must be a non-empty string, not {key!r}")
        if not isinstance(text, str):
            raise ValueError(f"`text` must be a string, not {type(text).__name__}")
        if not text.isascii():
            surrogate = _SURROGATE.search(text)
            if surrogate is not None:
                raise ValueError(
                    f"`text` holds a lone surrogate {surrogate.group()!r} at index "
                    f"{surrogate.start()}, which UTF-8 cannot store"
                )
        _check_tokens("input_tokens", input_tokens)
        _check_tokens("output_tokens", output_tokens)
        row = (key, text, input_tokens, output_tokens, time.time())

        def write(connection: sqlite3.Connection) -> None:
            connection.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", row)

        self._run(write, "write")

    def __len__(self) -> int:
        """Number of stored responses."""
        count: int = self._run(
            lambda c: c.execute("SELECT COUNT(*) FROM responses").fetchone()[0], "read"
        )
        return count

    def clear(self) -> None:
        """Delete every stored response (the file stays)."""
        self._run(lambda c: c.execute("DELETE FROM responses"), "clear")

    def close(self) -> None:
        """Release the connection (the cache reopens it if used again) and clear
        :attr:`disabled`."""
        with self._lock:
            close, self._connection, self._close_connection = self._close_connection, None, None
            self._disabled = None
            if close is not None:
                close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __reduce__(self) -> tuple[Callable[[str, float], JudgeCache], tuple[str, float]]:
        # Pickles as its path: a spawned process opens its own connection to the same file.
        return (_reopen, (self._path, self._timeout))

    def __repr__(self) -> str:
        return f"JudgeCache({self._path!r})"

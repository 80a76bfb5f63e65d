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
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kagreport._errors import KagreportError

__all__ = ["CachedResponse", "JudgeCache"]

#: Stored in ``PRAGMA user_version``; bump it when the table changes.
_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    created REAL NOT NULL
) WITHOUT ROWID
"""

# SQLite's own wait for a lock, per statement; our retry loop goes on up to `timeout`.
_BUSY_TIMEOUT = 5.0
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6

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


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return True
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _check_tokens(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"`{name}` must be a non-negative integer or None, not {value!r}")


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
        if not isinstance(location, str) or not location:
            raise ValueError(f"`path` must name a file, not {path!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"`timeout` must be a positive number of seconds, not {timeout!r}")
        self._path = location
        self._timeout = float(timeout)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._close_connection: weakref.finalize[..., JudgeCache] | None = None
        self._pid = os.getpid()
        if location != ":memory:":
            try:
                Path(location).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise KagreportError(
                    f"cannot create the folder of the judge cache {location}: {exc}", path=location
                ) from exc
        # Open now, so a bad path fails here and not in the middle of an evaluation.
        self._run(lambda connection: None, "open")

    @property
    def path(self) -> str:
        """The SQLite file (or ``":memory:"``)."""
        return self._path

    # -- connection -----------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        busy = min(self._timeout, _BUSY_TIMEOUT)
        # isolation_level=None: autocommit, so every statement is one short transaction.
        connection = sqlite3.connect(
            self._path, timeout=busy, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
            if self._path != ":memory:":
                connection.execute("PRAGMA journal_mode = WAL")
                # In WAL mode NORMAL loses at most the last commits on power loss: fine for a cache.
                connection.execute("PRAGMA synchronous = NORMAL")
            self._check_schema(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _check_schema(self, connection: sqlite3.Connection) -> None:
        # IMMEDIATE: two processes creating the table at once serialise here.
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                row[0]
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if version == 0 and tables - {"responses"}:
                raise KagreportError(
                    f"{self._path} is an SQLite database but not a kagreport judge cache "
                    f"(it has the tables {', '.join(sorted(tables))}); give the cache its own file",
                    path=self._path,
                )
            if version not in (0, _SCHEMA_VERSION):
                raise KagreportError(
                    f"the judge cache {self._path} has schema version {version}; this kagreport "
                    f"reads version {_SCHEMA_VERSION} (use another file, or delete this one)",
                    path=self._path,
                )
            if version == 0:
                connection.execute(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

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
                    raise KagreportError(
                        f"cannot {what} the judge cache {self._path}{waited}: {exc}",
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
            If the file cannot be read (or stays locked for ``timeout`` seconds).
        """

        def read(connection: sqlite3.Connection) -> Any:
            return connection.execute(
                "SELECT text, input_tokens, output_tokens, created FROM responses WHERE key = ?",
                (key,),
            ).fetchone()

        row = self._run(read, "read")
        if row is None:
            return None
        return CachedResponse(
            text=row[0], input_tokens=row[1], output_tokens=row[2], created=row[3]
        )

    def put(self, key: str, text: str, input_tokens: int | None, output_tokens: int | None) -> None:
        """Store a successful response under ``key`` (replacing any earlier one).

        Parameters
        ----------
        key : str
            The judge's cache key (a SHA-256 hex digest).
        text : str
            The model's message content.
        input_tokens, output_tokens : int or None
            The tokens the response cost, ``None`` where the server did not say.

        Raises
        ------
        ValueError
            If ``key`` is empty, ``text`` not a string, or a token count negative.
        KagreportError
            If the file cannot be written (or stays locked for ``timeout`` seconds).
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"`key` must be a non-empty string, not {key!r}")
        if not isinstance(text, str):
            raise ValueError(f"`text` must be a string, not {type(text).__name__}")
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
        """Release the connection (the cache reopens it if used again)."""
        with self._lock:
            close, self._connection, self._close_connection = self._close_connection, None, None
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

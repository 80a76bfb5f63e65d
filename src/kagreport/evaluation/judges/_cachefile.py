"""The file of a judge cache: its SQLite schema, and opening a connection that checks it.

Opening refuses another program's database before anything in it is changed (not even its
journal mode), an unknown schema version and a file SQLite's ``quick_check`` finds damaged,
each with one :class:`~kagreport._errors.JudgeCacheError` naming the file; then it sets the
WAL journal. :class:`~kagreport.evaluation.judges._cache.JudgeCache` opens through it.
"""

from __future__ import annotations

import contextlib
import sqlite3

from kagreport._errors import JudgeCacheError

#: Stored in ``PRAGMA user_version``; bump it when the table changes.
_SCHEMA_VERSION = 1

#: The ``responses`` table, column by column: (name, declared type, part of the primary key).
_COLUMNS = (
    ("key", "TEXT", 1),
    ("text", "TEXT", 0),
    ("input_tokens", "INTEGER", 0),
    ("output_tokens", "INTEGER", 0),
    ("created", "REAL", 0),
)

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


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return True
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _hint(exc: sqlite3.Error) -> str:
    """Advice for an error met while opening the file, or ``""``."""
    text = str(exc).lower()
    if "malformed" in text or "not a database" in text:
        return (
            " (if it is a kagreport judge cache, it is only a cache: delete it, or give "
            "the cache another file)"
        )
    if "unable to open" in text or "readonly" in text or "read-only" in text:
        return (
            " (the cache writes the file and its -wal and -shm companions: is the "
            "folder on a writable file system, and writable by you?)"
        )
    return ""


def _connect(path: str, timeout: float, check_pages: bool) -> sqlite3.Connection:
    """A connection to the cache file, its schema checked (created when new), in WAL mode;
    ``check_pages``: run ``quick_check`` too. Raises what SQLite raises, or JudgeCacheError."""
    busy = min(timeout, _BUSY_TIMEOUT)
    # isolation_level=None: autocommit, so every statement is one short transaction.
    connection = sqlite3.connect(path, timeout=busy, isolation_level=None, check_same_thread=False)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
        # The schema first: another program's database is refused before anything,
        # not even its journal mode, is changed.
        _check_schema(connection, path)
        if path != ":memory:":
            connection.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL loses at most the last commits on power loss: fine for a cache.
            connection.execute("PRAGMA synchronous = NORMAL")
            if check_pages:
                _check_pages(connection, path)
    except BaseException:
        connection.close()
        raise
    return connection


def _check_pages(connection: sqlite3.Connection, path: str) -> None:
    # A damaged page would otherwise surface in the middle of a run, at one item.
    problems = [row[0] for row in connection.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        found = "; ".join(" ".join(str(problem).replace("*", "").split()) for problem in problems)
        raise JudgeCacheError(
            f"the judge cache {path} is damaged (SQLite's quick_check: "
            f"{found[:300]}); it is only a cache: delete it, or give the cache another file",
            path=path,
        )


def _shape_is_ours(connection: sqlite3.Connection) -> bool:
    columns = tuple(
        (row[1], str(row[2]).upper(), row[5])
        for row in connection.execute("PRAGMA table_info(responses)")
    )
    return columns == _COLUMNS


def _check_schema(connection: sqlite3.Connection, path: str) -> None:
    # IMMEDIATE: two processes creating the table at once serialise here.
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(row[0]).startswith("sqlite_")  # SQLite's own (sqlite_stat1...)
        }
        foreign = tables - {"responses"}
        if version == 0 and foreign:
            raise JudgeCacheError(
                f"{path} is an SQLite database but not a kagreport judge cache "
                f"(it has the tables {', '.join(sorted(tables))}); give the cache its own file",
                path=path,
            )
        if version not in (0, _SCHEMA_VERSION):
            raise JudgeCacheError(
                f"the judge cache {path} has schema version {version}; this kagreport "
                f"reads version {_SCHEMA_VERSION} (use another file, or delete this one)",
                path=path,
            )
        has_table = "responses" in tables
        if (has_table and not _shape_is_ours(connection)) or (
            version == _SCHEMA_VERSION and not has_table
        ):
            raise JudgeCacheError(
                f"{path} is an SQLite database but not a kagreport judge cache (its "
                "`responses` table is missing or has other columns); give the cache its "
                "own file",
                path=path,
            )
        if version == 0:
            connection.execute(_SCHEMA)
            connection.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the original error says more
                connection.execute("ROLLBACK")
        raise

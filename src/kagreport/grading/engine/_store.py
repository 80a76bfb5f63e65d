"""A grade store: the graded result files of one tree, kept between runs as Parquet shards.

A rerun lists the tree as before, but reads and decodes only the files that are new
or whose identity changed (size, times and inode of a local file; size and ETag of
an object): the others' rows come from the store. The report is the same, byte for
byte, as grading everything again.

A store is a folder::

    manifest.json            schema, version, the results and prefix it is for, shards
    shard-000001.parquet     one row per result file graded by one run
    ...
    .lock                    held while a grade updates the store

Each run appends one shard with the files it read. On loading, the newest row of each
(dataset, question, setup) wins; a stored row is used only where the file is still
listed with the same identity and its question still has the same answer. When stale
rows outnumber live ones, or there are more than :data:`MAX_SHARDS` shards, the live
rows are rewritten as one shard. Every file is written atomically (a temporary file,
fsync, rename) and the manifest last, so a run stopped at any moment leaves the store
as it was, or with an unlisted shard that the next write removes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kagreport._atomic import write_atomic
from kagreport._errors import StoreError
from kagreport._version import __version__

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kagreport.grading.engine._rows import NewRows, StoredRows

__all__ = ["GRADER_VERSION", "MAX_SHARDS", "GradeStore", "StoreError"]


class _StoreInUseError(StoreError):
    """Another process holds the store's lock (a wait can end it; nothing is wrong)."""


logger = logging.getLogger("kagreport.grading")

SCHEMA = "kagreport.grade-store"
SCHEMA_VERSION = 1
#: Bumped whenever grading a file could give another row: stored rows of another
#: version are not used (everything is read again).
GRADER_VERSION = 1
#: More shards than this and the live rows are rewritten as one.
MAX_SHARDS = 16
_SHARD = re.compile(r"shard-(\d{6})\.parquet")
#: How to recover from a damaged store, said with each refusal (a store only saves work).
_AFRESH = "; delete the folder to grade afresh"


def _count(value: object) -> bool:
    """Whether ``value`` is a non-negative int (not a bool) of a sane size."""
    return type(value) is int and 0 <= value < 2**62


class GradeStore:
    """Where graded result files are kept between runs, so a rerun reads only what changed.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A local folder (made if missing). None keeps the store in memory, for a
        process that grades the same tree again and again (``watch``, a notebook
        following a run).

    Notes
    -----
    A store is for one results location and one prefix; it refuses another. Stored
    rows are used only where the file's identity is unchanged and its question has
    the same answer in the datasets file; everything else is read again. Needs
    pyarrow (``pip install 'kagreport[store]'``) for a folder.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else os.fspath(path)
        self._memory: StoredRows | None = None
        self._memory_key: tuple[str, str, bool | int] | None = None

    def __repr__(self) -> str:
        return f"GradeStore({self.path!r})" if self.path else "GradeStore(in memory)"

    def __eq__(self, other: object) -> bool:
        # Two stores of one folder are one store; each store in memory is its own.
        if not isinstance(other, GradeStore):
            return NotImplemented
        return self is other or (self.path is not None and self.path == other.path)

    def __hash__(self) -> int:
        return hash(self.path) if self.path is not None else id(self)

    # -- reading -------------------------------------------------------------------

    def load(self, results: str, prefix: str, keep_text: bool | int) -> StoredRows | None:
        """The live rows for ``results`` and ``prefix``; None for an empty or stale store.

        Raises
        ------
        StoreError
            If the store is for another results location or prefix, or is damaged.
        """
        key = (results, prefix, keep_text)
        if self.path is None:
            return self._memory if self._memory_key == key else None
        manifest = self._manifest()
        if manifest is None:
            return None
        if (manifest["results"], manifest["prefix"]) != (results, prefix):
            raise StoreError(
                f"the grade store {self.path} holds {manifest['results']} "
                f"(prefix {manifest['prefix']!r}), not {results} (prefix {prefix!r}); "
                "use another folder",
                path=self.path,
            )
        if manifest["grader"] != GRADER_VERSION or manifest["keep_text"] != keep_text:
            logger.info("the grade store %s is from another grader or text setting", self.path)
            return None
        return self._read_shards(manifest["shards"], keep_text)

    def _manifest(self) -> dict[str, Any] | None:
        assert self.path is not None
        name = os.path.join(self.path, "manifest.json")
        try:
            with open(name, "rb") as file:
                manifest = json.loads(file.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise StoreError(
                f"cannot read the grade store manifest {name}: {reason}{_AFRESH}", path=name
            ) from None
        ok = (
            isinstance(manifest, dict)
            and manifest.get("schema") == SCHEMA
            and isinstance(manifest.get("shards"), list)
            and all(isinstance(s, str) and _SHARD.fullmatch(s) for s in manifest["shards"])
            and isinstance(manifest.get("results"), str)
            and isinstance(manifest.get("prefix"), str)
            and _count(manifest.get("grader"))
            and (manifest.get("keep_text") is False or _count(manifest.get("keep_text")))
            and _count(manifest.get("stored_rows", 0))
        )
        if not ok:
            raise StoreError(f"{name} is not a kagreport grade store manifest{_AFRESH}", path=name)
        if manifest.get("schema_version") != SCHEMA_VERSION:
            raise StoreError(
                f"{name} is grade store version {manifest.get('schema_version')!r}; "
                f"this kagreport reads version {SCHEMA_VERSION}",
                path=name,
            )
        checked: dict[str, Any] = manifest
        return checked

    def _read_shards(self, shards: Sequence[str], keep_text: bool | int) -> StoredRows | None:
        from kagreport._optional import optional

        with optional("pyarrow"):
            import pyarrow as pa
            import pyarrow.parquet as pq
        assert self.path is not None
        tables = []
        for order, shard in enumerate(shards):
            name = os.path.join(self.path, shard)
            try:
                table = pq.read_table(name)
            except (OSError, pa.ArrowException) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise StoreError(
                    f"cannot read the grade store shard {name}: {reason}{_AFRESH}", path=name
                ) from None
            tables.append(table.append_column("shard", pa.array([order] * len(table), pa.int32())))
        if not tables:
            return None
        from kagreport.grading.engine._shards import _DamagedShardError, live_rows

        try:
            table = pa.concat_tables(tables, promote_options="permissive")
            return live_rows(table, keep_text)
        except _DamagedShardError as exc:
            raise StoreError(
                f"the grade store {self.path} is damaged ({exc}){_AFRESH}", path=self.path
            ) from None
        except (KeyError, IndexError, TypeError, ValueError, pa.ArrowException) as exc:
            raise StoreError(
                f"the grade store {self.path} is damaged ({type(exc).__name__}: {exc}){_AFRESH}",
                path=self.path,
            ) from None

    # -- writing -------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store for one grade; another process holding it is an error, not a wait.

        Raises
        ------
        StoreError
            If the folder cannot be made, or another process holds the store.
        """
        if self.path is None:
            yield
            return
        import fcntl

        try:
            os.makedirs(self.path, exist_ok=True)
            fd = os.open(os.path.join(self.path, ".lock"), os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StoreError(
                f"cannot open the grade store {self.path}: {exc.strerror or exc}", path=self.path
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise _StoreInUseError(
                    f"the grade store {self.path} is in use by another grade", path=self.path
                ) from None
            yield
        finally:
            os.close(fd)

    def save(
        self,
        results: str,
        prefix: str,
        keep_text: bool | int,
        stored: StoredRows | None,
        kept: npt.NDArray[np.int64],
        new: NewRows,
    ) -> None:
        """Record a grade: the stored rows still live (``kept``) and the rows read now.

        Raises
        ------
        StoreError
            If the store cannot be written (nothing is lost: the old manifest stays).
        """
        from kagreport.grading.engine._shards import merged, table_of_new, table_of_rows

        if self.path is None:
            self._memory = merged(stored, kept, new, keep_text)
            self._memory_key = (results, prefix, keep_text)
            return
        from kagreport._optional import optional

        with optional("pyarrow"):
            import pyarrow as pa  # noqa: F401
        manifest = self._manifest()
        fresh = manifest is None or (
            manifest["grader"] != GRADER_VERSION or manifest["keep_text"] != keep_text
        )
        shards: list[str] = [] if fresh or manifest is None else list(manifest["shards"])
        stored_rows = int(manifest.get("stored_rows", 0)) if manifest and not fresh else 0
        live = len(kept) + len(new)
        rewrite = len(shards) >= MAX_SHARDS or stored_rows + len(new) > 2 * live
        try:
            if rewrite:
                rows = merged(stored, kept, new, keep_text)
                if rows is None:
                    shards = []
                else:
                    shards = [self._write_shard(table_of_rows(rows, keep_text), shards)]
                stored_rows = live
            elif len(new):
                shards.append(self._write_shard(table_of_new(new, keep_text), shards))
                stored_rows += len(new)
            document = {
                "schema": SCHEMA,
                "schema_version": SCHEMA_VERSION,
                "kagreport": __version__,
                "grader": GRADER_VERSION,
                "results": results,
                "prefix": prefix,
                "keep_text": keep_text,
                "shards": shards,
                "stored_rows": stored_rows,
                "live_rows": live,
            }
            write_atomic(
                os.path.join(self.path, "manifest.json"), json.dumps(document, indent=2) + "\n"
            )
        except OSError as exc:
            raise StoreError(
                f"cannot write the grade store {self.path}: {exc.strerror or exc}", path=self.path
            ) from None
        self._remove_unlisted(shards)

    def _write_shard(self, table: Any, existing: Sequence[str]) -> str:
        import pyarrow as pa
        import pyarrow.parquet as pq

        assert self.path is not None
        numbers = [int(m.group(1)) for m in map(_SHARD.fullmatch, os.listdir(self.path)) if m]
        name = f"shard-{max([0, *numbers]) + 1:06d}.parquet"
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        write_atomic(os.path.join(self.path, name), sink.getvalue().to_pybytes())
        return name

    def _remove_unlisted(self, shards: Sequence[str]) -> None:
        assert self.path is not None
        keep = set(shards)
        for name in os.listdir(self.path):
            if _SHARD.fullmatch(name) and name not in keep:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.path, name))

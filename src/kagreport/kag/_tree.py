"""Where a result tree lives: a local folder, or any fsspec location (``s3://``, ``gs://``, ...).

A local path (or a ``file://`` URL) is read with ``os.scandir`` and plain reads, the
fast path. Any other URL goes through fsspec with the same rules: levels one and two
are folders (object stores: ``/``-delimited prefixes), level three holds files, links
are not followed, and listings come back sorted by name so that every engine and
every machine walks a tree in the same order. With an asynchronous filesystem
(s3fs, gcsfs, adlfs) the folders of a chunk are listed, and its files read, many at
a time.

Whatever the backend raises (botocore's ``NoCredentialsError``, an HTTP error, ...)
is turned into :class:`~kagreport._errors.ResultTreeError` at this one boundary: one
line naming the location and what went wrong.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from kagreport._errors import InputError, NotRegularFileError, ResultTreeError
from kagreport.kag._records import ResultRecord, read_bytes, scan_file

__all__ = [
    "DIR",
    "FILE",
    "OTHER",
    "SIMULATED_MARKER",
    "LocalTree",
    "RemoteTree",
    "ResultTree",
    "TreeEntry",
    "is_simulated",
    "is_url",
    "open_tree",
]

#: Entry kinds: a folder (an object-store prefix), a regular file (an object), anything else.
DIR, FILE, OTHER = 1, 0, 2

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: Requests in flight at once on an asynchronous filesystem (per process).
CONCURRENCY = 64
#: Files read at once; a chunk's files are read in windows of this size.
READ_WINDOW = 256


#: One entry of a folder listing: ``(name, kind, identity)``. ``kind`` is :data:`DIR`,
#: :data:`FILE` or :data:`OTHER`; ``identity`` is a string that changes when the file
#: does (size, modification and change times in ns and inode for a local file; size and
#: ETag, or the backend's version or checksum, for an object), ``""`` when not asked for.
#: A plain tuple: a listing makes one per file, on the hot path.
TreeEntry = tuple[str, int, str]


def is_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a URL (``scheme://...``) rather than a local path."""
    return _URL.match(os.fspath(location)) is not None


def open_tree(
    location: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
) -> ResultTree:
    """The result tree at ``location``: a local path, a ``file://`` URL or any fsspec URL.

    Parameters
    ----------
    location : str or os.PathLike
        ``results``, ``/data/run``, ``file:///data/run``, ``s3://bucket/run``,
        ``gs://bucket/run``, ``az://container/run``, ...
    storage_options : mapping, optional
        Passed to the fsspec filesystem (``endpoint_url``, ``anon``, ``profile``, ...).
        Credentials given here go to that filesystem only and are never written.

    Raises
    ------
    MissingExtraError
        If fsspec or the protocol's package (s3fs, gcsfs, adlfs) is not installed.
    ResultTreeError
        If the protocol is unknown to fsspec.
    """
    name = os.fspath(location)
    found = _URL.match(name)
    if found is None:
        return LocalTree(name)
    protocol = found.group(1).lower()
    if protocol == "file" and not storage_options:
        return LocalTree(_file_url_path(name))
    return RemoteTree(name, dict(storage_options or {}))


#: The file ``kagreport simulate`` leaves beside ``results/``: the run is SIMULATED.
SIMULATED_MARKER = "SIMULATED.md"


def is_simulated(results: str | os.PathLike[str], tree: ResultTree | None = None) -> bool:
    """Whether the result tree at ``results`` was written by ``kagreport simulate``:
    ``SIMULATED_MARKER`` in it or in its parent folder. Its numbers are then
    synthetic, and every view of them says SIMULATED. ``tree``: the
    ``open_tree`` it is in (default: a local folder)."""
    folder = os.fspath(results)
    where: ResultTree = LocalTree(folder) if tree is None else tree
    return any(
        where.is_file(where.join(f, SIMULATED_MARKER)) for f in (folder, where.parent(folder))
    )


def _file_url_path(url: str) -> str:
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ResultTreeError(f"a file:// URL names a local path, not a host: {url}", path=url)
    return unquote(parts.path) or "/"


class LocalTree:
    """A result tree in a local folder, read with ``os.scandir`` and plain reads."""

    remote = False

    def __init__(self, root: str) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"LocalTree({self.root!r})"

    def join(self, base: str, name: str) -> str:
        """``base`` joined with one entry name (as :func:`os.path.join`; a plain
        concatenation for a name with no separator, as folder entries are: this runs
        for every result file)."""
        if not base or base[-1] == "/" or "/" in name or os.sep != "/":
            return os.path.join(base, name)
        return base + "/" + name

    def check(self) -> None:
        """Raise :class:`ResultTreeError` unless the root is a folder."""
        if not os.path.isdir(self.root):
            what = "does not exist" if not os.path.exists(self.root) else "is not a folder"
            raise ResultTreeError(f"the results folder {self.root} {what}", path=self.root)

    def list_dir(self, path: str, *, identity: bool = False) -> list[TreeEntry]:
        """The entries of one folder, sorted by name.

        Raises
        ------
        ResultTreeError
            If the folder or an entry's type cannot be read.
        """
        out = []
        try:
            entries = os.scandir(path)
        except OSError as exc:
            raise ResultTreeError(
                f"cannot read the folder {path}: {exc.strerror or exc}", path=path
            ) from None
        try:
            with entries:
                for entry in entries:
                    kind = _kind(entry)
                    ident = _local_identity(entry) if identity and kind == FILE else ""
                    out.append((entry.name, kind, ident))
        except OSError as exc:
            where = exc.filename if isinstance(exc.filename, str) else path
            verb = "read the folder" if where == path else "stat"
            raise ResultTreeError(
                f"cannot {verb} {where}: {exc.strerror or exc}", path=where
            ) from None
        out.sort()
        return out

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a regular file (False if it cannot be told)."""
        return os.path.isfile(path)

    def parent(self, path: str) -> str:
        """The folder holding ``path``."""
        return os.path.dirname(os.path.abspath(path))

    def list_dirs(self, paths: Sequence[str], *, identity: bool = False) -> list[list[TreeEntry]]:
        """:meth:`list_dir` of each path, in order; the first that fails raises."""
        return [self.list_dir(path, identity=identity) for path in paths]

    def read(self, path: str) -> bytes:
        """The bytes of one result file (see ``read_bytes``).

        Raises
        ------
        NotRegularFileError
            If the path is no longer a regular file (a FIFO put in its place).
        OSError
            As the system reports it.
        """
        return read_bytes(path)

    def iter_read(self, paths: Sequence[str]) -> Iterator[bytes | OSError]:
        """Each file's bytes, or the ``OSError`` reading it raised, one at a time."""
        for path in paths:
            try:
                yield read_bytes(path)
            except OSError as exc:
                yield exc

    def iter_records(self, paths: Sequence[str]) -> Iterator[ResultRecord | bytes | OSError]:
        """Each file's record where the compiled scanner reads it whole (kag's common
        shape), else its bytes or the ``OSError`` reading it raised, one at a time."""
        scan = scan_file
        for path in paths:
            if scan is not None and (record := scan(path)) is not None:
                yield record
                continue
            try:
                yield read_bytes(path)
            except OSError as exc:
                yield exc


def _kind(entry: os.DirEntry[str]) -> int:
    # The entry's own type (no stat on most filesystems); links are never followed. Files
    # first: a result tree's entries are mostly files.
    if entry.is_file(follow_symlinks=False):
        return FILE
    return DIR if entry.is_dir(follow_symlinks=False) else OTHER


def _local_identity(entry: os.DirEntry[str]) -> str:
    st = entry.stat(follow_symlinks=False)
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


class RemoteTree:
    """A result tree at an fsspec URL (an object store, or any other fsspec filesystem).

    Paths are URLs (``s3://bucket/run/<dataset>/<question>/<file>``), as shown in
    messages and reports. The filesystem is made on first use and not pickled (a Dask
    worker makes its own from the protocol and the storage options).
    """

    remote = True

    def __init__(self, url: str, storage_options: dict[str, Any]) -> None:
        found = _URL.match(url)
        if found is None:  # pragma: no cover - open_tree checks
            raise InputError(f"not a URL: {url}")
        self.protocol = found.group(1).lower()
        self.root = url.rstrip("/") if url.rstrip("/") != found.group(0).rstrip("/") else url
        # Fresh listings every time (a watched tree grows): no listing cache.
        self.storage_options = {"use_listings_cache": False, **storage_options}
        self._fs: Any = None

    def __repr__(self) -> str:
        return f"RemoteTree({self.root!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "root": self.root, "options": self.storage_options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.protocol = state["protocol"]
        self.root = state["root"]
        self.storage_options = state["options"]
        self._fs = None

    @property
    def fs(self) -> Any:
        """The fsspec filesystem (made once per process).

        Raises
        ------
        MissingExtraError
            If fsspec or the protocol's package is not installed.
        ResultTreeError
            If fsspec does not know the protocol or refuses the storage options.
        """
        if self._fs is None:
            self._fs = _filesystem(self.protocol, self.storage_options, self.root)
        return self._fs

    def join(self, base: str, name: str) -> str:
        """``base`` joined with one entry name, by ``/``."""
        return f"{base.rstrip('/')}/{name}"

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is an object (False if it cannot be told)."""
        try:
            return bool(self.fs.isfile(path))
        except Exception:  # a question asked in passing: no answer is "no"
            return False

    def parent(self, path: str) -> str:
        """The prefix holding ``path`` (``path`` itself at a bucket's root)."""
        head, _, tail = path.rstrip("/").rpartition("/")
        return head if tail and not head.endswith(":/") else path

    def check(self) -> None:
        """Raise :class:`ResultTreeError` unless the root is a folder (a prefix with objects)."""
        fs = self.fs
        try:
            is_dir = _call(fs.isdir, self.root)
        except FileNotFoundError:
            is_dir = False
        if not is_dir:
            exists = False
            with contextlib.suppress(FileNotFoundError):
                exists = bool(_call(fs.exists, self.root))
            what = "is not a folder" if exists else "does not exist"
            raise ResultTreeError(f"the results folder {self.root} {what}", path=self.root)

    def list_dirs(self, paths: Sequence[str], *, identity: bool = False) -> list[list[TreeEntry]]:
        """The entries of each folder, sorted by name, listed many at a time.

        Raises
        ------
        ResultTreeError
            For the first folder (in order) that cannot be listed.
        """
        fs = self.fs
        if getattr(fs, "async_impl", False):
            listed = _gather(fs, [_bind(fs._ls, path, detail=True) for path in paths])
        else:
            listed = [_capture(fs.ls, path, detail=True) for path in paths]
        out = []
        for path, found in zip(paths, listed, strict=True):
            if isinstance(found, BaseException):
                raise _tree_error(f"cannot read the folder {path}", found, path) from None
            out.append(sorted(_entry(info) for info in found))
        return out

    def list_dir(self, path: str, *, identity: bool = False) -> list[TreeEntry]:
        """The entries of one folder, sorted by name (see :meth:`list_dirs`)."""
        return self.list_dirs([path], identity=identity)[0]

    def read(self, path: str) -> bytes:
        """The bytes of one object.

        Raises
        ------
        OSError
            ``FileNotFoundError`` if it vanished since it was listed; another ``OSError``
            (its message from the backend) for any other failure.
        """
        found = next(iter(self.iter_read([path])))
        if isinstance(found, OSError):
            raise found
        return found

    def iter_read(self, paths: Sequence[str]) -> Iterator[bytes | OSError]:
        """Each object's bytes, or an ``OSError`` saying why it could not be read, in order.

        Objects are fetched ``READ_WINDOW`` at a time, concurrently where the
        filesystem is asynchronous.
        """
        fs = self.fs
        for start in range(0, len(paths), READ_WINDOW):
            window = paths[start : start + READ_WINDOW]
            if getattr(fs, "async_impl", False):
                found = _gather(fs, [_bind(fs._cat_file, path) for path in window])
            else:
                found = [_capture(fs.cat_file, path) for path in window]
            for item in found:
                yield item if isinstance(item, bytes) else _os_error(item)

    def iter_records(self, paths: Sequence[str]) -> Iterator[ResultRecord | bytes | OSError]:
        """As :meth:`LocalTree.iter_records`: objects are fetched as bytes
        (:meth:`iter_read`), never as records."""
        return self.iter_read(paths)


def _filesystem(protocol: str, options: dict[str, Any], url: str) -> Any:
    from kagreport._optional import optional

    with optional("fsspec"):
        import fsspec
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        from kagreport._errors import MissingExtraError

        raise MissingExtraError(
            f"reading {protocol}:// locations needs {exc.name or 'its fsspec package'}; "
            "install it with: pip install 'kagreport[cloud]'"
        ) from None
    except ValueError:
        raise ResultTreeError(
            f"no filesystem is known for {protocol}:// (in {url})", path=url
        ) from None
    try:
        fs = cls(**with_timeouts(protocol, options))
    except Exception as exc:  # the backend's own error: one line at this boundary
        raise _tree_error(f"cannot open {url}", exc, url) from None
    if protocol in ("s3", "s3a") and "config_kwargs" not in options:
        fs.retries = S3_TRIES  # s3fs's own tries of a request (its class default is 5)
    return fs


#: Seconds an object store has to accept a connection, and to send each part of an answer,
#: before a try fails (each storage option named here, when given, wins).
CONNECT_TIMEOUT = 5
READ_TIMEOUT = 15
#: Tries of one S3 request (s3fs's), each bounded by the timeouts above, so an endpoint
#: that accepts connections and never answers fails in about a minute, not many minutes.
S3_TRIES = 3


def with_timeouts(protocol: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with bounded connect and read timeouts for the object stores' packages.

    The packages' own defaults wait minutes for an endpoint that never answers (botocore:
    60 s per read, up to 5 tries, inside s3fs's own 5; adlfs and gcsfs: none or minutes).
    Defaults here: connect within ``CONNECT_TIMEOUT`` seconds and receive within
    ``READ_TIMEOUT`` seconds. To change them, pass the package's own option: for s3fs
    ``config_kwargs`` (``{"connect_timeout": 10, "read_timeout": 60, "retries": {...}}``, as
    botocore's ``Config`` takes them; given, it replaces these defaults and s3fs's tries),
    for gcsfs ``requests_timeout``, for adlfs ``connection_timeout`` and ``read_timeout``.
    """
    made = dict(options)
    if protocol in ("s3", "s3a"):
        made.setdefault(
            "config_kwargs",
            {
                "connect_timeout": CONNECT_TIMEOUT,
                "read_timeout": READ_TIMEOUT,
                # One try in botocore: s3fs tries again itself (S3_TRIES).
                "retries": {"total_max_attempts": 1},
            },
        )
    elif protocol in ("gs", "gcs"):
        made.setdefault("requests_timeout", CONNECT_TIMEOUT + READ_TIMEOUT)
    elif protocol in ("az", "abfs", "abfss"):
        made.setdefault("connection_timeout", CONNECT_TIMEOUT)
        made.setdefault("read_timeout", READ_TIMEOUT)
    return made


def _call(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise _tree_error(f"cannot read {args[0]}", exc, str(args[0])) from None


def _bind(function: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
    return lambda: function(*args, **kwargs)


def _capture(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except Exception as exc:
        return exc


def _gather(fs: Any, calls: Sequence[Callable[[], Awaitable[Any]]]) -> list[Any]:
    """Run the coroutine factories on the filesystem's event loop, :data:`CONCURRENCY` at a
    time; each result is its value or the exception it raised."""
    import asyncio  # here: only a remote tree needs it (20 ms of every command's start)

    from fsspec.asyn import sync

    async def run() -> list[Any]:
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(call: Callable[[], Awaitable[Any]]) -> Any:
            async with gate:
                try:
                    return await call()
                except Exception as exc:
                    return exc

        return await asyncio.gather(*(one(call) for call in calls))

    if not calls:
        return []
    result: list[Any] = sync(fs.loop, run)
    return result


_IDENTITY_KEYS = ("ETag", "etag", "md5Hash", "generation", "version_id", "mtime", "LastModified")


def _entry(info: Mapping[str, Any]) -> TreeEntry:
    name = str(info.get("name", "")).rstrip("/").rsplit("/", 1)[-1]
    kind = info.get("type")
    if info.get("islink"):
        return (name, OTHER, "")
    if kind == "directory":
        return (name, DIR, "")
    if kind != "file":
        return (name, OTHER, "")
    tag = next((str(info[key]) for key in _IDENTITY_KEYS if info.get(key) is not None), "")
    return (name, FILE, f"{info.get('size', '')}:{tag}")


def _os_error(exc: BaseException) -> OSError:
    if isinstance(exc, OSError):
        if not exc.strerror and isinstance(exc, FileNotFoundError):
            return FileNotFoundError(2, "No such file or directory")
        return exc
    return OSError(0, _one_line(exc))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    name = type(exc).__name__
    if name == "NoCredentialsError" or "credentials" in text.lower():
        return (
            f"{text} (set credentials in the environment or a profile, or pass "
            "storage options, e.g. --storage-option anon=true)"
        )
    if isinstance(exc, TypeError) and "keyword argument" in text:
        text += " (a storage option this filesystem does not take)"
    return text if name in text else f"{name}: {text}"


def _tree_error(what: str, exc: BaseException, path: str) -> ResultTreeError:
    if isinstance(exc, NotRegularFileError):
        reason = "not a regular file"
    elif isinstance(exc, FileNotFoundError):
        reason = "No such file or directory"
    elif isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror
    else:
        reason = _one_line(exc)
    return ResultTreeError(f"{what}: {reason}", path=path)


ResultTree = LocalTree | RemoteTree

"""``kag stats find``: search the responses of a result tree with a regular expression.

Source: kag ``src/subcommand/stats/subcommand/find/mod.rs`` and ``KAG_STATS_SPEC.md`` section 3.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from kagreport._errors import InputError, NotRegularFileError, UsageError
from kagreport.grading._chunk import CHUNK_QUESTIONS
from kagreport.grading._collect import ProgressCallback
from kagreport.grading._rule import WHITE_SPACE
from kagreport.grading.engine._options import EngineOptions
from kagreport.grading.engine._pool import PARALLEL_AFTER, ChunkRunner
from kagreport.kag._jsonfmt import dumps_pretty
from kagreport.kag._records import ResultRecord, decode_result, read_bytes, scan_file
from kagreport.kag._tree import ResultTree, open_tree
from kagreport.kag._walk import iter_find_candidates, iter_find_files

__all__ = ["FindMatch", "FindReport", "Pattern", "compile_pattern", "find"]

logger = logging.getLogger("kagreport.grading")


@dataclass(frozen=True, slots=True)
class FindMatch:
    """One result file whose response matched: its path and the full, untrimmed response."""

    path: str
    response: str

    @property
    def display_path(self) -> str:
        """The path as text; bytes that are not UTF-8 (in folder names) become U+FFFD."""
        return self.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    @property
    def line(self) -> str:
        """``<path>\\t<response>`` with each newline shown as `` ⏎ `` (kag's fzf line)."""
        return f"{self.display_path}\t{self.response.replace(chr(10), ' ⏎ ')}"


@dataclass(frozen=True, slots=True)
class FindReport:
    """The matches of a search, sorted by path, and how many files were searched.

    Attributes
    ----------
    matches : tuple of FindMatch
        Sorted by path (spec decision; kag keeps the file system's order).
    total : int
        Qualifying files (``<prefix>*.json`` at any depth), readable or not.
    skipped : tuple of str
        Qualifying files that could not be read or parsed (warned about; kag too
        skips them).
    """

    matches: tuple[FindMatch, ...]
    total: int
    skipped: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.matches)

    def __iter__(self) -> Iterator[FindMatch]:
        return iter(self.matches)

    def to_dict(self) -> dict[str, Any]:
        """kag's JSON document: ``{"matches", "total", "paths"}``."""
        return {
            "matches": len(self.matches),
            "total": self.total,
            "paths": [m.display_path for m in self.matches],
        }

    def to_json(self) -> str:
        """``kag stats find --format json`` output (with its trailing newline)."""
        return dumps_pretty(self.to_dict()) + "\n"

    @property
    def summary(self) -> str:
        """The closing line kag prints on stderr in text mode."""
        if not self.matches:
            return "No result matched the pattern."
        return (
            f"{len(self.matches)} occurrence(s) out of {self.total} result file(s) "
            "matched the pattern."
        )


class Pattern:
    """A compiled ``stats find`` pattern: Rust's ``regex`` crate, as kag compiles it.

    Attributes
    ----------
    pattern : str
        The pattern as given.
    search : callable
        ``search(text) -> bool``: whether the pattern matches anywhere in ``text``
        (``Regex::is_match``).
    """

    __slots__ = ("pattern", "search")

    def __init__(self, pattern: str, search: Any) -> None:
        self.pattern = pattern
        self.search = search

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


_RY_PREFIX = "Invalid regex: "  # what the binding puts before the crate's own message


def compile_pattern(pattern: str | Any) -> Any:
    """Compile a search pattern with Rust's ``regex`` crate, as kag does.

    kag parses its ``REGEX`` argument with ``regex::Regex::new`` (clap's value
    parser), so the syntax, Unicode classes (``\\d`` matches U+0663), the 10 MiB
    compiled size limit and what is invalid are the crate's: the same crate, through
    the ``ry`` binding (regex 1.13.1, regex-syntax 0.8.11, kag's ``Cargo.lock``),
    built with the crate's defaults. Matching is linear in the text, so no pattern
    can hang a search. Anything else (an object with a ``search(text)`` method
    whose result is true on a match) is returned unchanged.

    Returns
    -------
    Pattern

    Raises
    ------
    UsageError
        If the crate refuses the pattern (exit code 2); the message names the
        pattern and gives the crate's error, as kag prints it.
    """
    if not isinstance(pattern, str):
        return pattern
    from ry import Regex

    try:
        regex = Regex(pattern)
    except ValueError as exc:
        reason = str(exc)
        reason = reason.removeprefix(_RY_PREFIX)
        raise UsageError(f"invalid regular expression {pattern!r}: {reason}") from None
    return Pattern(pattern, regex.is_match)


#: Result files per chunk handed to a worker process.
FIND_CHUNK_FILES = 4 * CHUNK_QUESTIONS
#: The pool starts after as many chunks as grading's does (:data:`PARALLEL_AFTER`).
FIND_PARALLEL_AFTER = PARALLEL_AFTER // CHUNK_QUESTIONS * FIND_CHUNK_FILES


class FindChunk(NamedTuple):
    """Result files to search, in walk order; ``regular[i]`` is 1 when the folder entry
    already says "regular file" (no ``stat`` needed)."""

    paths: list[str]
    regular: bytearray


class FoundChunk(NamedTuple):
    """A searched chunk: ``matches`` (path, full response); ``skipped`` (path, "read" or
    "parse", reason), in walk order."""

    matches: list[tuple[str, str]]
    skipped: list[tuple[str, str, str]]


#: Patterns compiled in this process, by pattern string (a worker started by a spawn
#: rather than a fork would compile each once).
_compiled: dict[str, Any] = {}


def _read_local(chunk: FindChunk) -> Iterator[ResultRecord | bytes | OSError]:
    scan = scan_file
    for path, regular in zip(chunk.paths, chunk.regular, strict=True):
        # The compiled scanner opens as read_bytes does (a symlink followed, a file that is
        # not regular refused) and leaves to it anything unusual.
        if scan is not None and (record := scan(path)) is not None:
            yield record
            continue
        try:
            # The folder entry's type says "regular file" without a stat; a
            # symlink is followed. A FIFO or device: kag would block on it, or
            # read without end.
            if not regular and not stat.S_ISREG(os.stat(path).st_mode):
                raise NotRegularFileError(0, "not a regular file", path)
            yield read_bytes(path)
        except OSError as exc:
            yield exc


def _candidates(tree: ResultTree, prefix: str) -> Iterator[tuple[str, bool]]:
    """Each file ``find`` searches and whether its folder entry says "regular file"."""
    if tree.remote:
        for path in iter_find_candidates(tree, prefix):
            yield path, True
        return
    yield from iter_find_files(tree.root, prefix)


def search_chunk(
    pattern: str | Any, chunk: FindChunk, tree: ResultTree | None = None
) -> FoundChunk:
    """Read, decode and search each file of ``chunk`` (in a worker process, or not).

    ``pattern`` is the pattern string (the compiled ``ry`` regex does not pickle:
    it is compiled here, once per process) or an already compiled pattern object.
    ``tree``: a remote tree the files are read from (many at a time); default local.
    """
    if isinstance(pattern, str):
        search = _compiled.get(pattern)
        if search is None:
            search = _compiled[pattern] = compile_pattern(pattern).search
    else:
        search = pattern.search
    matches: list[tuple[str, str]] = []
    skipped: list[tuple[str, str, str]] = []
    datas = _read_local(chunk) if tree is None or not tree.remote else tree.iter_read(chunk.paths)
    for path, data in zip(chunk.paths, datas, strict=True):
        if isinstance(data, OSError):
            skipped.append((path, "read", str(data.strerror or data)))
            continue
        if isinstance(data, ResultRecord):
            result = data.result
        else:
            try:
                result = decode_result(data).result
            except ValueError as exc:
                skipped.append((path, "parse", str(exc)))
                continue
        if result is not None and search(result.strip(WHITE_SPACE)):
            matches.append((path, result))
    return FoundChunk(matches, skipped)


# Over 80 lines only with its docstring (a public function's parameters, errors, sources).
def find(
    pattern: str | Any,
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    engine: str | None = None,
    client: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    options: EngineOptions | None = None,
) -> FindReport:
    """Find the result files whose response matches ``pattern``.

    Parameters
    ----------
    pattern : str or Pattern
        Searched anywhere (Rust ``regex`` syntax, as kag's)
        in each response trimmed of Unicode White_Space.
    results : path, default "."
        The results root; walked to any depth.
    prefix : str, default ""
        Only files named ``<prefix>*.json`` are searched.
    progress : callable, optional
        Called with the number of files found so far, every 1,000 files.
    options : EngineOptions, optional
        As :func:`grade` (its ``store`` is not used): a large local tree is read by
        ``workers`` processes (default: the CPU count, at most 8; Linux only, forked
        or from a fork server, after ``FIND_PARALLEL_AFTER`` files; the report and
        the order of the warnings are the same whatever the number);
        ``engine="dask"`` searches in tasks of a few thousand files on a Dask cluster
        (``pattern`` must then be a string); ``results`` may be any fsspec URL, walked
        with its folders listed many at a time.
    workers, engine, client, storage_options
        Shorthands for the fields of ``options``, as :func:`grade`'s.

    Returns
    -------
    FindReport

    Raises
    ------
    UsageError
        If ``pattern`` is not a valid regular expression.
    InputError
        A ValueError too: if an option is out of range, or ``engine="dask"`` is given a
        pattern that is not a string.
    ResultTreeError
        If the root is missing or a folder cannot be read.
    WorkerDiedError
        If a worker process died.

    Notes
    -----
    Files that cannot be read or parsed, or are not regular files, are logged
    as warnings and skipped (still counted in ``total``); error records are
    skipped silently; file names that are not UTF-8 are not searched (as kag).
    Paths are ``results`` joined with each file's relative path.
    """
    compiled = compile_pattern(pattern)
    options = (options or EngineOptions()).with_keywords(
        workers=workers, engine=engine, scheduler=client, storage_options=storage_options
    )
    tree = open_tree(results, options.storage_options)
    remote = tree if tree.remote else None
    workers = options.workers
    # Workers get the pattern string (compiled there); another search object stays here.
    if isinstance(compiled, Pattern):
        # Seeded here, the cache spares the serial path a second compile, and forked
        # workers inherit it; bounded for a long-lived caller (a notebook).
        if len(_compiled) >= 32:
            _compiled.clear()
        _compiled[compiled.pattern] = compiled.search
        task = partial(search_chunk, compiled.pattern, tree=remote)
    else:
        if options.engine == "dask":
            raise InputError("engine='dask' needs the pattern as a string (it is sent to workers)")
        task = partial(search_chunk, compiled, tree=remote)
        workers = 1
    matches: list[FindMatch] = []
    skipped: list[str] = []
    total = 0

    def merge(chunk: FindChunk, found: FoundChunk) -> None:
        for path, failed, reason in found.skipped:
            if failed == "read":
                logger.warning("failed to read result file %s: %s", path, reason)
            else:
                logger.warning("failed to parse result file %s: %s", path, reason)
            skipped.append(path)
        matches.extend(FindMatch(path, result) for path, result in found.matches)

    runner: Any
    if options.engine == "dask":
        from kagreport.grading.engine._dask import DaskRunner

        runner = DaskRunner(options.scheduler, prefix, merge, task=task, workers=workers)
    else:
        runner = ChunkRunner(workers, prefix, merge, task=task, parallel_after=FIND_PARALLEL_AFTER)
    size = getattr(runner, "chunk_files", FIND_CHUNK_FILES)
    try:
        chunk = FindChunk([], bytearray())
        for path, regular in _candidates(tree, prefix):
            total += 1
            if progress is not None and total % 1000 == 0:
                progress(total)
            chunk.paths.append(path)
            chunk.regular.append(regular)
            if len(chunk.paths) >= size:
                runner.submit(chunk)
                chunk = FindChunk([], bytearray())
        if chunk.paths:
            runner.submit(chunk)
        runner.finish()
    finally:
        runner.close()
    matches.sort(key=lambda m: m.path)
    return FindReport(tuple(matches), total, tuple(skipped))

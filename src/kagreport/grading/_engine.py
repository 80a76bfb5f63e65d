"""Listing, reading, decoding and grading question folders in chunks, in one process or a few.

Reading and decoding dominate ``kag stats`` on a large tree (each KAG file
carries an embedding vector that must be scanned to be skipped), and both are
CPU-bound under the GIL. Chunks of question folders therefore go to a small
pool of forked worker processes; results come back in submission order, so
the report is the same, byte for byte, whatever the number of workers.

Stopping is the parent's job. Workers take the default action for SIGTERM and
ignore SIGINT (Ctrl-C reaches the whole process group: the parent stops them),
so no worker runs Python code on a signal or prints a traceback; they die
with the parent (``PR_SET_PDEATHSIG``). The parent waits with a timeout in a
loop, so its own signal handlers run at once, and it sees a worker that died
(``BrokenProcessPool``): grading then fails with one message naming the signal
that killed it, rather than waiting for a result that will never come. A dead
worker's chunk is not re-read in the parent: what killed it (the
out-of-memory killer, say) would likely kill the parent too.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from array import array
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, NamedTuple

from kagreport._errors import NotRegularFileError, WorkerDiedError
from kagreport._signals import STOP_SIGNALS
from kagreport.grading._rule import grade_response
from kagreport.grading._store import ChunkKnown, identity_hash
from kagreport.kag import decode_result
from kagreport.kag._tree import LocalTree, ResultTree
from kagreport.kag._walk import result_files

__all__ = [
    "ChunkRunner",
    "GradedChunk",
    "PendingChunk",
    "chunk_arguments",
    "grade_chunk",
]

#: Question folders per chunk (a few result files each).
CHUNK_QUESTIONS = 64
#: Below this many question folders a pool costs more than it saves (fork, pickling).
PARALLEL_AFTER = 4 * CHUNK_QUESTIONS
_INT64_MAX = 2**63 - 1


class PendingChunk:
    """Question folders waiting to be graded, with their answers and name codes.

    ``store``: a grade store takes the result: each file's identity is listed and
    returned. ``known``: what the store holds for these folders (set just before the
    chunk is submitted); a file whose identity is unchanged is not read again.
    """

    __slots__ = ("answers", "datasets", "known", "paths", "questions", "store")

    def __init__(self, store: bool = False) -> None:
        self.paths: list[str] = []
        self.answers: list[str] = []
        self.datasets: list[int] = []
        self.questions: list[int] = []
        self.store = store
        self.known: ChunkKnown | None = None

    def add(self, path: str, answer: str, dataset: int, question: int) -> None:
        self.paths.append(path)
        self.answers.append(answer)
        self.datasets.append(dataset)
        self.questions.append(question)

    @property
    def full(self) -> bool:
        return len(self.paths) >= CHUNK_QUESTIONS


#: Responses cut to the limit, their full lengths (-1: none), error messages cut.
ChunkTexts = tuple[list[str | None], "array[int]", list[str | None]]


class GradedChunk(NamedTuple):
    """What grading a chunk gives back (small and picklable).

    ``rows``: for each parsed result file, the index of its question folder in
    the chunk and the index of its setup in ``setups``. ``texts``: when asked
    for, each row's response cut to the limit, its full length (-1: none) and
    its error message cut to the limit. ``columns``: outcome,
    generation ns, retrieval ns, vertices, relationships, properties, context
    bytes, one entry per row (-1 = absent). ``sums``: per (setup index,
    dataset code), the 11 group sums of ``_grade``. ``unparsable``: (path, the
    parser's message, the reason shown to people: the message with the line and column
    of a byte offset it names). ``io_error``: (path, message) of the first folder or
    file that could not be read; grading stops there.

    With identities asked for (a grade store): ``identities`` holds each row's file
    identity (``identity_hash`` of the grade store); ``unparsable_keys`` (question
    index, setup, identity) of each unparsable file; ``kept``, per folder with known
    files, a byte per known setup, 1 where the file is still there with the same
    identity (it was not read); ``exact``, the exact six measurements of a row (by
    index) where one is beyond int64 (clamped in ``columns``).
    """

    rows: tuple[array[int], array[int]]
    setups: list[str]
    columns: tuple[array[int], ...]
    sums: dict[tuple[int, int], list[int]]
    unparsable: list[tuple[str, str, str]]
    io_error: tuple[str, str] | None
    texts: ChunkTexts | None = None
    identities: array[int] | None = None
    unparsable_keys: list[tuple[int, str, int]] | None = None
    kept: list[bytes | None] | None = None
    exact: dict[int, tuple[int, ...]] | None = None


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)$")
# A lone-surrogate escape makes the decoder retry on a rewritten text: its offsets are not
# the file's then.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_reason(data: bytes, message: str) -> str:
    """``message`` (a decoder's, about ``data``) with the line and column (1-based, the
    column in bytes) of the byte offset it ends with, e.g. ``JSON is malformed: invalid
    character (byte 10)`` -> ``... (byte 10, line 2, column 9)``; unchanged otherwise."""
    found = _BYTE_OFFSET.search(message)
    if found is None or _SURROGATE.search(data):
        return message
    offset = int(found.group(1))
    if offset > len(data):
        return message
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"{message[: found.start()]}(byte {offset}, line {line}, column {column})"


def _cut(text: str | None, limit: int | None) -> str | None:
    return text if text is None or limit is None else text[:limit]


def _listed(
    tree: ResultTree,
    paths: list[str],
    prefix: str,
    identities: bool,
) -> tuple[list[list[tuple[str, str, str]]], tuple[str, str] | None]:
    """Each folder's result files, up to the first folder that cannot be listed (and that
    folder's error). A remote tree lists the chunk's folders at once."""
    from kagreport._errors import ResultTreeError

    try:
        if tree.remote:
            listings = tree.list_dirs(paths, identity=identities)
            return [
                result_files(e, p, prefix, tree) for e, p in zip(listings, paths, strict=True)
            ], None
    except ResultTreeError:
        pass  # one at a time below, to find the first folder that fails
    out: list[list[tuple[str, str, str]]] = []
    for folder in paths:
        try:
            entries = tree.list_dir(folder, identity=identities)
        except ResultTreeError as exc:
            return out, (exc.path or folder, exc.message)
        out.append(result_files(entries, folder, prefix, tree))
    return out, None


def _unchanged(
    files: list[tuple[str, str, int]], known: ChunkKnown, folder: int, codes: dict[str, int]
) -> tuple[list[tuple[str, str, int]], bytes]:
    """The files of folder ``folder`` to read (new or changed) and, per stored entry of
    the folder, 1 if its file is still there with the same identity."""
    start, end = int(known.bounds[folder]), int(known.bounds[folder + 1])
    stored = dict(
        zip(known.setups[start:end].tolist(), known.identities[start:end].tolist(), strict=True)
    )
    position = {int(code): k for k, code in enumerate(known.setups[start:end].tolist())}
    kept = bytearray(end - start)
    fresh = []
    for result_file in files:
        code = codes.get(result_file[0], -1)
        if stored.get(code) == result_file[2]:
            kept[position[code]] = 1
        else:
            fresh.append(result_file)
    return fresh, bytes(kept)


# Long (over 80 lines): the per-file loop is the hot path of `kagreport stats`, kept
# inline (no function call per result file).
def grade_chunk(
    paths: list[str],
    answers: list[str],
    datasets: list[int],
    prefix: str,
    keep_text: bool | int = False,
    tree: ResultTree | None = None,
    known: ChunkKnown | None = None,
    with_identity: bool = False,
) -> GradedChunk:
    """List each question folder's result files, read, decode and grade them.

    ``keep_text``: False keeps no text; True keeps each response and error message
    whole; a positive int keeps that many characters of each. ``tree``: where the
    folders are (default: local paths). ``with_identity``: list and return each
    file's identity (for a grade store); ``known``: what the store holds for these
    folders: unchanged files are not read.
    """
    tree = _LOCAL if tree is None else tree
    question_index, setup_index = rows = (array("I"), array("I"))
    outcome, gen, ret, vertices, relationships, properties, context = columns = (
        array("B"),
        *(array("q") for _ in range(6)),
    )
    setups: list[str] = []
    setup_codes: dict[str, int] = {}
    sums: dict[tuple[int, int], list[int]] = {}
    unparsable: list[tuple[str, str, str]] = []
    texts: ChunkTexts | None = None
    if keep_text is not False:
        texts = ([], array("q"), [])
    limit = None if keep_text is True else int(keep_text)
    identities: array[int] | None = array("q") if with_identity else None
    unparsable_keys: list[tuple[int, str, int]] | None = [] if with_identity else None
    kept: list[bytes | None] | None = [] if with_identity else None
    exact: dict[int, tuple[int, ...]] | None = {} if with_identity else None

    listed, list_error = _listed(tree, paths, prefix, with_identity)
    jobs: list[tuple[int, tuple[str, str, Any]]] = []
    codes = {name: code for code, name in enumerate(known.setup_names)} if known else {}
    for index, listing in enumerate(listed):
        files: list[tuple[str, str, Any]] = listing
        if with_identity:
            files = [(setup, path, identity_hash(ident)) for setup, path, ident in listing]
        if known is not None:
            files, mask = _unchanged(files, known, index, codes)
            kept.append(mask)  # type: ignore[union-attr]
        elif kept is not None:
            kept.append(None)
        jobs.extend((index, result_file) for result_file in files)

    def done(error: tuple[str, str] | None = None) -> GradedChunk:
        return GradedChunk(
            rows, setups, columns, sums, unparsable, error, texts,
            identities, unparsable_keys, kept, exact,
        )  # fmt: skip

    datas = tree.iter_read([path for _, (_, path, _) in jobs])
    for (index, (setup_name, path, identity)), data in zip(jobs, datas, strict=True):
        if isinstance(data, OSError):
            if isinstance(data, NotRegularFileError):  # swapped for a FIFO since the walk
                continue  # skipped, as the walk skips what is not a regular file
            reason = data.strerror or str(data)
            if isinstance(data, FileNotFoundError):  # listed a moment ago
                reason += " (it vanished after its folder was listed)"
            return done((path, f"cannot read the result file {path}: {reason}"))
        try:
            record = decode_result(data)
        except ValueError as exc:
            unparsable.append((path, str(exc), parse_reason(data, str(exc))))
            if unparsable_keys is not None:
                unparsable_keys.append((index, setup_name, identity))
            continue
        setup = setup_codes.get(setup_name)
        if setup is None:
            setup = setup_codes[setup_name] = len(setups)
            setups.append(setup_name)
        key = (setup, datasets[index])
        total = sums.get(key)
        if total is None:
            total = sums[key] = [0] * 11
        question_index.append(index)
        setup_index.append(setup)
        if identities is not None:
            identities.append(identity)
        if texts is not None:
            texts[0].append(_cut(record.result, limit))
            texts[1].append(-1 if record.result is None else len(record.result))
            texts[2].append(_cut(record.error, limit))
        if record.result is None:
            total[2] += 1
            outcome.append(2)
            for column in (gen, ret, vertices, relationships, properties, context):
                column.append(-1)
            continue
        if grade_response(record.result, answers[index]):
            total[0] += 1
            outcome.append(0)
        else:
            total[1] += 1
            outcome.append(1)
        gen_ns = record.generation_ns or 0
        size = record.context_bytes or 0
        total[3] += gen_ns
        total[4] += 1
        total[5] += size
        gen.append(min(gen_ns, _INT64_MAX))
        context.append(min(size, _INT64_MAX))
        sample = record.retrieval
        if sample is None:
            for column in (ret, vertices, relationships, properties):
                column.append(-1)
            measured: tuple[int, ...] = (gen_ns, -1, -1, -1, -1, size)
        else:
            total[6] += sample.time_ns
            total[7] += sample.vertices
            total[8] += sample.relationships
            total[9] += sample.properties
            total[10] += 1
            # Values beyond int64 cannot be real; clamp in the table, keep exact sums.
            ret.append(min(sample.time_ns, _INT64_MAX))
            vertices.append(min(sample.vertices, _INT64_MAX))
            relationships.append(min(sample.relationships, _INT64_MAX))
            properties.append(min(sample.properties, _INT64_MAX))
            measured = (
                gen_ns, sample.time_ns, sample.vertices, sample.relationships,
                sample.properties, size,
            )  # fmt: skip
        if exact is not None and max(measured) > _INT64_MAX:
            exact[len(outcome) - 1] = measured
    return done(list_error)


_LOCAL = LocalTree("")


def chunk_arguments(
    chunk: PendingChunk, prefix: str, keep_text: bool | int, tree: ResultTree | None
) -> tuple[Any, ...]:
    """The arguments of :func:`grade_chunk` for ``chunk``."""
    return (
        chunk.paths, chunk.answers, chunk.datasets, prefix, keep_text, tree, chunk.known,
        chunk.store,
    )  # fmt: skip


def _default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


#: The name prefix of the grading workers a fork server starts (see ``_forkserver``).
WORKER_NAME = "kagreport-grader"


class _GraderProcess(multiprocessing.context.ForkServerProcess):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{WORKER_NAME}-{self.name}"


class _GraderContext(multiprocessing.context.ForkServerContext):
    """The fork server's context, its processes named as grading workers."""

    Process = _GraderProcess


def _pool_context() -> multiprocessing.context.BaseContext | None:
    """How worker processes start: forked from this process when it has one thread;
    else (a Jupyter kernel, a Dask client, a view following a run) forked from a fork
    server, a fresh single-threaded process (fork() copies one thread only: a lock held
    by another thread here could deadlock a child forked from here). None off Linux:
    grading stays in this process."""
    if not sys.platform.startswith("linux"):
        return None
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    context = _GraderContext()
    # The server's preload: its workers ignore Ctrl-C from the start, and do not import the
    # caller's main module again (a script without a __main__ guard would run again).
    context.set_forkserver_preload(["kagreport.grading._forkserver"])
    from multiprocessing import forkserver

    # Started here, with the stop signals not blocked (it and its workers inherit the
    # mask); it ends when this process does.
    forkserver.ensure_running()
    return context


#: How long the parent waits for a result before it checks again (its signal handlers
#: run at once anyway; this bounds any missed wake-up).
_POLL_SECS = 0.25
#: Bound on waiting for the workers to go after they were killed.
_JOIN_SECS = 5.0
_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, loaded in the parent (ctypes costs each worker 10 ms otherwise)."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):  # pragma: no cover - not glibc
            pass
    return _prctl


_prctl: Callable[..., int] | None = None


def _worker_start(parent: int, forked: bool = True) -> None:
    """Pool initializer, run first in each worker (its stop signals still blocked).

    ``parent``: the grading process. A worker forked from it dies with it (the kernel's
    parent-death signal); one of a fork server (``forked`` False), whose parent is the
    server, watches the grading process and ends when it ends (else the server, kept
    alive by the workers' copies of its pipe, and they, would outlive it for good).
    """
    # The command line's Python handlers were inherited: a SIGTERM must kill at once (a
    # Python handler only sets a flag that a blocking wait never looks at), and Ctrl-C,
    # which reaches the whole group, is the parent's to act on (no worker traceback).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not forked:
        _watch_parent(parent)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        return
    if _prctl is not None:  # die with the parent, even if it is SIGKILLed
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


def _watch_parent(parent: int) -> None:
    """End this process as soon as process ``parent`` has ended (a daemon thread waiting
    on a pidfd; Linux 5.3)."""
    try:
        pidfd = os.pidfd_open(parent)
    except ProcessLookupError:  # it has ended already
        os._exit(1)

    def wait() -> None:
        import select

        select.select([pidfd], [], [])
        os._exit(1)

    threading.Thread(target=wait, name="kagreport-parent-watch", daemon=True).start()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "for an unknown reason"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown"
        oom = ", e.g. out of memory" if -code == signal.SIGKILL else ""
        return f"killed by signal {-code}: {name}{oom}"
    return f"exit status {code}"


class ChunkRunner:
    """Grades submitted chunks in order and hands each result to ``merge``.

    Starts in-process; once :data:`PARALLEL_AFTER` question folders have been
    submitted, moves (on Linux) to a pool of workers forked from this process, or from
    a fork server when this process has other threads, with a bounded number of chunks
    in flight (memory stays bounded on any tree size).

    With ``task``, each chunk (any picklable object with a ``paths`` list) is
    handed to ``task(chunk)`` instead of :func:`grade_chunk`, and the pool starts
    once ``parallel_after`` paths have been submitted; ``task`` must be a
    module-level function (or a :func:`functools.partial` of one) so that it
    pickles.

    Raises
    ------
    WorkerDiedError
        From :meth:`submit` or :meth:`finish`, if a worker process died.
    """

    def __init__(
        self,
        workers: int | None,
        prefix: str,
        merge: Callable[[Any, Any], None],
        keep_text: bool | int = False,
        *,
        task: Callable[[Any], Any] | None = None,
        parallel_after: int = PARALLEL_AFTER,
        tree: ResultTree | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self._workers = _default_workers() if workers is None else workers
        self._prefix = prefix
        self._keep_text = keep_text
        self._merge = merge
        self._task = task
        self._tree = tree
        #: Question folders per chunk.
        self.chunk_folders = CHUNK_QUESTIONS
        self._parallel_after = parallel_after
        self._submitted = 0
        self._pool: ProcessPoolExecutor | None = None
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._pending: deque[tuple[Any, Future[Any]]] = deque()
        self._in_process = False

    def _call(self, chunk: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if self._task is not None:
            return self._task, (chunk,)
        return grade_chunk, chunk_arguments(chunk, self._prefix, self._keep_text, self._tree)

    def submit(self, chunk: Any) -> None:
        self._submitted += len(chunk.paths)
        function, args = self._call(chunk)
        if (
            self._pool is None
            and self._workers > 1
            and self._submitted > self._parallel_after
            and not self._in_process
        ):
            context = _pool_context()
            if context is None:
                self._in_process = True
            else:
                logging.getLogger("kagreport.grading").debug(
                    "large tree: reading with %d worker processes (%s)",
                    self._workers, context.get_start_method(),
                )  # fmt: skip
                self._start_pool(chunk, function, args, context)
                return
        if self._pool is None:
            self._merge(chunk, function(*args))
            return
        while len(self._pending) >= 4 * self._workers:
            self._merge_oldest()
        try:
            future = self._pool.submit(function, *args)
        except BrokenProcessPool:
            raise self._died() from None
        self._pending.append((chunk, future))
        self._track()

    def _track(self) -> None:
        # All workers start at the first submit with fork; with a fork server, one more
        # at each submit until there are enough: close() and _died() need every one.
        known = {id(p) for p in self._processes}
        for process in (getattr(self._pool, "_processes", None) or {}).values():
            if id(process) not in known:
                self._processes.append(process)

    def _start_pool(
        self,
        chunk: Any,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        context: multiprocessing.context.BaseContext,
    ) -> None:
        # The first submit forks the workers and starts the executor's threads. With the
        # stop signals blocked meanwhile, the workers start with them blocked (until their
        # initializer has set their dispositions), and so do those threads, for good:
        # a SIGTERM or Ctrl-C is always delivered to this (the main) thread.
        _load_prctl()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            self._pool = ProcessPoolExecutor(
                self._workers,
                mp_context=context,
                initializer=_worker_start,
                initargs=(os.getpid(), context.get_start_method() == "fork"),
            )
            self._pending.append((chunk, self._pool.submit(function, *args)))
            self._track()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def _merge_oldest(self) -> None:
        chunk, future = self._pending[0]
        while True:
            try:
                # A timeout, in a loop: the wait stays interruptible whatever thread a
                # signal lands on.
                graded = future.result(timeout=_POLL_SECS)
                break
            except TimeoutError:
                continue
            except BrokenProcessPool:
                raise self._died() from None
        self._pending.popleft()
        self._merge(chunk, graded)

    def _died(self) -> WorkerDiedError:
        dead = None
        deadline = time.monotonic() + _JOIN_SECS
        while dead is None and time.monotonic() < deadline:
            # The executor kills the survivors itself (SIGTERM): the one that died of
            # something else is the one. One reading of all codes per pass (another
            # thread may be reaping them meanwhile).
            codes = [process.exitcode for process in self._processes]
            other = [code for code in codes if code is not None and code != -signal.SIGTERM]
            if other:
                dead = other[0]
            elif None not in codes:
                dead = -signal.SIGTERM
            else:
                time.sleep(0.01)
        # A stop signal sent to the whole group kills the workers too: let the parent's own
        # handler, which runs during the sleep, report the stop instead of a death.
        if dead is not None and -dead in STOP_SIGNALS:
            time.sleep(0.2)
        return WorkerDiedError(
            f"a grading worker process died ({_describe_exit(dead)}); no report was written"
        )

    def finish(self) -> None:
        """Merge every chunk still in flight."""
        while self._pending:
            self._merge_oldest()

    def close(self) -> None:
        """Stop the workers (also after an error or a signal), within a bounded time."""
        pool, self._pool = self._pool, None
        self._pending.clear()
        if pool is None:
            return
        # A second signal must not cut this short and leave workers behind: hold the stop
        # signals until the workers are gone (a pending one is raised right after).
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        # Taken before shutdown(), which forgets it. Joined below: a manager thread still
        # closing its wake-up pipe at exit races the interpreter's own wake-up of it
        # (CPython writes to the pipe's closed descriptor and prints a traceback).
        manager = getattr(pool, "_executor_manager_thread", None)
        try:
            pool.shutdown(wait=False, cancel_futures=True)
            for process in self._processes:
                if process.exitcode is None:
                    process.kill()
            deadline = time.monotonic() + _JOIN_SECS
            for process in self._processes:
                process.join(max(0.0, deadline - time.monotonic()))
            if isinstance(manager, threading.Thread):
                manager.join(max(0.0, deadline - time.monotonic()))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

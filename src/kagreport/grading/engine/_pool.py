"""The local engine: chunks of question folders graded in this process, or in a few worker
processes forked from it (or from a fork server).

Reading and decoding dominate ``kag stats`` on a large tree (each KAG file
carries an embedding vector that must be scanned to be skipped), and both are
CPU-bound under the GIL. Chunks of question folders therefore go to a small
pool of forked worker processes, each running
:func:`~kagreport.grading._chunk.grade_chunk`; results come back in submission
order, so the report is the same, byte for byte, whatever the number of workers.

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

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from kagreport._errors import InputError, WorkerDiedError
from kagreport._signals import STOP_SIGNALS, stops_blocked, stops_deferred
from kagreport.grading._chunk import CHUNK_QUESTIONS, chunk_arguments, grade_chunk
from kagreport.kag._tree import ResultTree

__all__ = [
    "PARALLEL_AFTER",
    "WORKER_NAME",
    "ChunkRunner",
    "default_workers",
    "start_resource_tracker",
]

#: Below this many question folders a pool costs more than it saves (fork, pickling).
PARALLEL_AFTER = 4 * CHUNK_QUESTIONS
#: The largest chunk, in question folders: chunks grow to it while much is left, to spare
#: this process a result to take in (unpickle, merge) per 64 folders.
LARGEST_CHUNK = 4 * CHUNK_QUESTIONS


def default_workers() -> int:
    """Worker processes when none are asked for: the CPU count, at most 8."""
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


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, quiet: after a stop it frees what the
    killed workers' queues held and would warn about each on the terminal."""
    from multiprocessing import resource_tracker

    if getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None) is not None:
        resource_tracker.ensure_running()  # started (the environment is left alone)
        return
    saved = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = "ignore::UserWarning"
    try:
        resource_tracker.ensure_running()
    finally:
        if saved is None:
            os.environ.pop("PYTHONWARNINGS", None)
        else:
            os.environ["PYTHONWARNINGS"] = saved


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
    context.set_forkserver_preload(["kagreport.grading.engine._forkserver"])
    from multiprocessing import forkserver

    # Started here; it ends when this process does. A Ctrl-C reaches the whole group (a
    # kernel interrupt too): the server starts with SIGINT blocked (its preload ignores
    # it, then unblocks it), else one landing while it imports would kill it with a
    # traceback. Here the stop is held until the server is known (one half-started is
    # never left behind). The resource tracker first: starting it unblocks SIGINT.
    with stops_deferred():
        start_resource_tracker()
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            forkserver.ensure_running()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
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
    submitted or announced (:meth:`expect`), moves (on Linux) to a pool of workers forked
    from this process, or from a fork server when this process has other threads, with a
    bounded number of chunks in flight (memory stays bounded on any tree size).

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
            raise InputError(f"`workers` must be >= 1, not {workers}")
        self._workers = default_workers() if workers is None else workers
        self._prefix = prefix
        self._keep_text = keep_text
        self._merge = merge
        self._task = task
        self._tree = tree
        self._parallel_after = parallel_after
        self._submitted = 0
        self._expected = 0
        self._pool: ProcessPoolExecutor | None = None
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._pending: deque[tuple[Any, Future[Any]]] = deque()
        self._in_process = False

    def expect(self, folders: int) -> None:
        """Announce ``folders`` more question folders listed, to be submitted: enough of
        them start the pool at the first chunk, and they size the chunks."""
        self._expected += folders

    @property
    def chunk_folders(self) -> int:
        """Question folders for the next chunk: :data:`CHUNK_QUESTIONS`, more (up to
        :data:`LARGEST_CHUNK`) while at least four such chunks per worker are announced and
        not yet submitted, so that the last chunks, which the end waits for, stay small."""
        left = (self._expected - self._submitted) // (4 * self._workers)
        return max(CHUNK_QUESTIONS, min(LARGEST_CHUNK, left))

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
            and max(self._submitted, self._expected) > self._parallel_after
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
        # With a fork server a submit may start a worker: a stop held until it is started
        # and tracked (see _start_pool).
        with stops_deferred():
            try:
                future = self._pool.submit(function, *args)
            except BrokenProcessPool:
                raise self._died() from None
            self._pending.append((chunk, future))
            self._track()

    def _track(self) -> None:
        self._track_from(self._pool)

    def _track_from(self, pool: ProcessPoolExecutor | None) -> None:
        # All workers start at the first submit with fork; with a fork server, one more
        # at each submit until there are enough: close() and _died() need every one.
        known = {id(p) for p in self._processes}
        for process in (getattr(pool, "_processes", None) or {}).values():
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
        # The mask alone does not hold a stop when this process has other threads (a
        # kernel's): one of them takes the signal and Python raises it here, in the middle
        # of a worker's start, which leaves a fork server that dies of the half-finished
        # request (and fails the next grade) or a worker close() does not know of. So the
        # stop is held until the workers are started and tracked, then acted on.
        _load_prctl()
        with stops_blocked():
            self._pool = ProcessPoolExecutor(
                self._workers,
                mp_context=context,
                initializer=_worker_start,
                initargs=(os.getpid(), context.get_start_method() == "fork"),
            )
            self._pending.append((chunk, self._pool.submit(function, *args)))
            self._track()

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
        # A second signal must not cut this short and leave workers behind, nor land in
        # the multiprocessing finalizers that run as the pool goes (Python drops an
        # exception raised there: the stop would be lost): the stops are held until the
        # workers and the pool are gone, then acted on.
        with stops_blocked():
            pool, self._pool = self._pool, None
            self._pending.clear()
            if pool is not None:
                self._track_from(pool)  # one started as a stop came is stopped too
                self._stop(pool)
                # The last references to the pool and the workers' process objects: their
                # finalizers (queues joining their threads, descriptors closed) run now,
                # while stops are held.
                self._processes = []
                del pool

    def _stop(self, pool: ProcessPoolExecutor) -> None:
        # Taken before shutdown(), which forgets them. Joined below: a manager thread still
        # closing its wake-up pipe at exit races the interpreter's own wake-up of it
        # (CPython writes to the pipe's closed descriptor and prints a traceback).
        manager = getattr(pool, "_executor_manager_thread", None)
        results = getattr(pool, "_result_queue", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in self._processes:
            if process.exitcode is None:
                process.kill()
        deadline = time.monotonic() + _JOIN_SECS
        for process in self._processes:
            process.join(max(0.0, deadline - time.monotonic()))
        # A worker killed while it wrote a result leaves the manager thread reading
        # the rest for good: with every worker gone, this process holds the result
        # pipe's last write end; closed, the read ends (end of file) and the thread
        # with it, at once rather than at the deadline.
        if all(process.exitcode is not None for process in self._processes):
            writer = getattr(results, "_writer", None)
            if writer is not None:
                with contextlib.suppress(OSError):
                    writer.close()
        if isinstance(manager, threading.Thread):
            manager.join(max(0.0, deadline - time.monotonic()))

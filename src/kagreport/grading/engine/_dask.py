"""Grading on a Dask cluster: tasks of over a thousand result files, merged here in order.

Each task lists a batch of question folders and reads and grades their files where it runs
(:func:`~kagreport.grading._chunk.grade_chunk`, the local engine's own function), and sends
back compact columns (:class:`~kagreport.grading._chunk.GradedChunk`); the client merges
the results in submission order, so the report is the local engine's, byte for byte.
Batches are sized from the files per folder seen so far, so that a task holds about
:data:`TARGET_FILES` files (one task per file would make graphs that take minutes to build);
a bounded number are in flight, so the client's memory stays bounded on any tree.

A worker that dies mid-task is the scheduler's to handle: its tasks run again elsewhere
(Dask's ``allowed-failures``, 3 by default); a task that kills its worker that often fails
with ``KilledWorker``, which becomes :class:`~kagreport._errors.WorkerDiedError`. A cluster
left without any worker for :data:`NO_WORKER_SECS` is an error too, never a wait.

With no client given, a ``LocalCluster`` of this machine's cores (or of ``workers``
processes) is started and closed
afterwards. Its worker processes ignore Ctrl-C (it reaches the whole process group: the
client stops them) and die of SIGTERM at once; on a stop they are killed before the
cluster is closed, and they exit by themselves if this process dies (Dask's nanny watches
its parent).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from kagreport._errors import KagreportError, WorkerDiedError
from kagreport._signals import stops_blocked, stops_deferred
from kagreport.grading._chunk import GradedChunk, chunk_arguments, grade_chunk
from kagreport.grading.engine._options import scheduler_address
from kagreport.grading.engine._pool import default_workers, start_resource_tracker
from kagreport.kag._tree import ResultTree

__all__ = ["NO_WORKER_SECS", "TARGET_FILES", "DaskRunner", "dask_client"]

logger = logging.getLogger("kagreport.grading")

#: Result files a task is sized to read (at least a thousand).
TARGET_FILES = 2000
#: Question folders of the first task, before a files-per-folder rate is known.
FIRST_FOLDERS = 256
#: How long a cluster may have no worker at all before grading fails.
NO_WORKER_SECS = 30.0
#: How long the client waits for a result before it checks again (signals, lost workers).
_POLL_SECS = 0.25


def dask_client(
    client: Any = None, workers: int | None = None
) -> tuple[Any, Callable[[], None] | None]:
    """A Dask client and, when this function made the cluster, the function that closes it.

    ``client`` is a ``distributed.Client`` (used as it is), a scheduler address (a client
    is made, and closed afterwards) or None (a ``LocalCluster`` of ``workers``
    single-threaded worker processes, default one per core, up to 8).

    Raises
    ------
    MissingExtraError
        Without ``dask.distributed`` (``pip install 'kagreport[dask]'``).
    InputError
        If ``client`` is a string that is not a ``tcp://HOST:PORT`` address.
    KagreportError
        If the scheduler at an address cannot be reached.
    """
    from kagreport._optional import optional

    with optional("distributed", "dask"):
        import dask
        import distributed
    if isinstance(client, distributed.Client):
        return client, None
    if client is not None:
        address = scheduler_address(str(client))
        # Dask's own setting (30 s unless set: DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s).
        seconds = float(
            dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))
        )
        _handshake(address, seconds)
        # Made in two steps, so that a client that fails to start is closed here, briefly:
        # left to its __del__, it waited twice the connect timeout at exit.
        made = distributed.Client.__new__(distributed.Client)
        try:
            distributed.Client.__init__(  # type: ignore[no-untyped-call]
                made, address, timeout=seconds, set_as_default=False
            )
        except Exception as exc:
            # A peer that answers the handshake but is no scheduler (an echo server) fails
            # Dask's own assertions: that is not a traceback for the user either.
            _quietly(made.close, 1)
            reason = (
                str(exc)
                if isinstance(exc, OSError | TimeoutError)
                else f"it does not speak Dask's protocol ({type(exc).__name__})"
            )
            raise KagreportError(
                f"cannot reach the Dask scheduler at {address}: {reason}", path=None
            ) from None
        return made, lambda: _quietly(made.close, 5)
    workers = default_workers() if workers is None else workers
    # The cluster's processes (its nannies, which start the workers) must not act on a
    # Ctrl-C sent to the whole group: they start with SIGINT blocked, from this thread's
    # mask (the threads the cluster starts here inherit it, and so do the processes they
    # spawn; a worker's preload then ignores it). This process's stops are held meanwhile
    # and acted on once the cluster is up and can be closed: held, not ignored, since a
    # thread of a library (NumPy's BLAS) takes a signal this thread blocks. Starting
    # multiprocessing's resource tracker unblocks the stops: it is started first.
    start_resource_tracker()
    cluster: Any = None
    local: Any = None  # the client of the cluster

    def close() -> None:
        if cluster is not None:
            _kill_workers(cluster)
        if local is not None:
            _quietly(local.close, 2)
        if cluster is not None:
            _quietly(cluster.close, 2)

    try:
        with stops_deferred():
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0",
                    silence_logs=logging.CRITICAL,
                    preload=["kagreport.grading.engine._dask_worker"],
                )
                local = distributed.Client(cluster, set_as_default=False)  # type: ignore[no-untyped-call]
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    except BaseException:  # a stop held while the cluster started, or its failure
        close()
        raise
    logger.debug("grading on a LocalCluster of %d worker processes", workers)
    return local, close


def _handshake(address: str, seconds: float) -> None:
    """Raise unless a Dask scheduler at ``address`` answers the handshake within ``seconds``.

    ``distributed.Client`` bounds the TCP connect, but then waits for the other side's
    handshake without a bound: any listener that is not a scheduler (a web server, a
    database, a port held open) would hang the command. The probe runs on its own event
    loop in a daemon thread (this thread may be a Jupyter kernel's, with a loop running),
    so a stop signal ends the wait at once.
    """
    import asyncio
    import threading

    from distributed.comm.core import connect

    outcome: list[BaseException | None] = []
    done = threading.Event()

    async def probe() -> None:
        comm = await asyncio.wait_for(
            connect(address, timeout=seconds),  # type: ignore[no-untyped-call]
            seconds,
        )
        await comm.close()

    def run() -> None:
        try:
            asyncio.run(probe())
            outcome.append(None)
        except BaseException as exc:  # handed to the caller below
            outcome.append(exc)
        done.set()

    threading.Thread(target=run, name="kagreport-dask-probe", daemon=True).start()
    if not done.wait(seconds + 1.0) or outcome[0] is not None:
        cause = outcome[0] if outcome else None
        if cause is None or isinstance(cause, (TimeoutError, asyncio.TimeoutError)):
            reason = f"no Dask handshake within {seconds:g} s (is it a Dask scheduler?)"
        elif isinstance(cause, OSError):
            reason = cause.strerror or str(cause).splitlines()[0]
        else:
            reason = f"it does not speak Dask's protocol ({type(cause).__name__})"
        raise KagreportError(f"cannot reach the Dask scheduler at {address}: {reason}")


def _quietly(close: Callable[..., Any], timeout: float) -> None:
    with contextlib.suppress(Exception):
        close(timeout=timeout)


def _kill_workers(cluster: Any) -> None:
    """Kill the LocalCluster's worker processes at once (closing it politely waits for the
    tasks they run), after telling their nannies not to start new ones (a worker started
    then would not ignore Ctrl-C: it inherits this process's handler)."""
    nannies = list(getattr(cluster, "workers", {}).values())

    async def no_restarts() -> None:
        for nanny in nannies:
            with contextlib.suppress(AttributeError):
                nanny.close_gracefully(reason="kagreport-stop")

    with contextlib.suppress(Exception):
        cluster.sync(no_restarts, callback_timeout=2)
    for nanny in nannies:
        process = getattr(getattr(nanny, "process", None), "process", None)
        pid = getattr(process, "pid", None)
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class DaskRunner:
    """Grades submitted chunks on a Dask cluster, in order, and hands each result to ``merge``.

    The same interface as :class:`~kagreport.grading.engine._pool.ChunkRunner` (``submit``,
    ``finish``, ``close``, ``chunk_folders``, ``expect``), so :func:`~kagreport.grading.grade` and
    :func:`~kagreport.grading.find` drive either.

    Raises
    ------
    WorkerDiedError
        From :meth:`submit` or :meth:`finish`, if a task killed its worker too often, or
        the cluster has had no worker for :data:`NO_WORKER_SECS`.
    KagreportError
        If the scheduler went away.
    """

    def __init__(
        self,
        client: Any,
        prefix: str,
        merge: Callable[[Any, Any], None],
        keep_text: bool | int = False,
        *,
        tree: ResultTree | None = None,
        task: Callable[[Any], Any] | None = None,
        target_files: int = TARGET_FILES,
        workers: int | None = None,
    ) -> None:
        self._client, self._close = dask_client(client, workers)
        self._prefix = prefix
        self._merge = merge
        self._keep_text = keep_text
        self._tree = tree
        self._task = task
        self._target = target_files
        self._pending: deque[tuple[Any, Any]] = deque()
        self._folders = 0
        self._files = 0
        self._count = 0
        self._token = os.urandom(6).hex()
        self._no_worker_since: float | None = None
        threads = sum(self._client.nthreads().values()) or 1
        self._window = 2 * threads + 1
        #: Question folders (or, for find, files) in the next chunk.
        self.chunk_folders = FIRST_FOLDERS
        self.chunk_files = target_files

    def expect(self, folders: int) -> None:
        """Folders listed ahead (``ChunkRunner.expect``): unused, the chunks here are sized
        from the files per folder seen."""

    def _call(self, chunk: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if self._task is not None:
            return self._task, (chunk,)
        return grade_chunk, chunk_arguments(chunk, self._prefix, self._keep_text, self._tree)

    def submit(self, chunk: Any) -> None:
        while len(self._pending) >= self._window:
            self._merge_oldest()
        function, args = self._call(chunk)
        self._count += 1
        key = f"kagreport-{self._token}-{self._count}"
        future = self._client.submit(function, *args, key=key, pure=False)
        self._pending.append((chunk, future))

    def _merge_oldest(self) -> None:
        import distributed

        chunk, future = self._pending[0]
        while True:
            try:
                result = future.result(timeout=_POLL_SECS)
                break
            except TimeoutError:
                self._check_workers()
            except distributed.client.FutureCancelledError:
                raise KagreportError("the Dask scheduler cancelled a grading task") from None
            except Exception as exc:
                raise _translate(exc) from None
        self._pending.popleft()
        self._learn(chunk, result)
        self._merge(chunk, result)

    def _learn(self, chunk: Any, result: Any) -> None:
        """Size the next chunks from the files per folder seen so far."""
        if not isinstance(result, GradedChunk):
            return
        self._folders += len(chunk.paths)
        self._files += len(result.rows[0]) + len(result.unparsable)
        self._files += sum(len(mask) for mask in result.kept or () if mask is not None)
        rate = max(self._files / max(self._folders, 1), 0.5)
        self.chunk_folders = max(16, min(8192, math.ceil(self._target / rate)))

    def _check_workers(self) -> None:
        try:
            workers = len(self._client.scheduler_info(n_workers=-1).get("workers", {}))
        except TypeError:  # older distributed: no n_workers
            workers = len(self._client.scheduler_info().get("workers", {}))
        except Exception as exc:
            raise _translate(exc) from None
        if workers:
            self._no_worker_since = None
            return
        now = time.monotonic()
        if self._no_worker_since is None:
            self._no_worker_since = now
        elif now - self._no_worker_since > NO_WORKER_SECS:
            raise WorkerDiedError(
                f"the Dask cluster has had no worker for {NO_WORKER_SECS:.0f} s; "
                "no report was written"
            )

    def finish(self) -> None:
        """Merge every chunk still in flight."""
        while self._pending:
            self._merge_oldest()

    def close(self) -> None:
        """Cancel what is in flight and, for a cluster made here, stop it (bounded time)."""
        pending = [future for _, future in self._pending]
        self._pending.clear()
        # A second stop signal must not cut the clean-up short (workers left behind): the
        # mask holds it in a command line, whose other threads all block it; a caller's own
        # threads (a kernel's) may take it, so the stop is also held in Python until the end.
        with stops_blocked():
            if self._close is not None:
                self._close()
            elif pending:
                with contextlib.suppress(Exception):
                    self._client.cancel(pending)


def _translate(exc: BaseException) -> KagreportError:
    """A Dask error as one line (a task's own KagreportError passes through)."""
    if isinstance(exc, KagreportError):
        return exc
    name = type(exc).__name__
    if name == "KilledWorker":
        return WorkerDiedError(
            "a grading task killed its Dask worker each time it ran (out of memory?); "
            f"no report was written ({exc})"
        )
    if isinstance(exc, OSError) or name in ("CommClosedError", "StreamClosedError"):
        return KagreportError(f"lost the Dask scheduler: {exc}")
    return KagreportError(f"a grading task failed on the Dask cluster: {name}: {exc}")

"""Following a running benchmark: grade its tree again as files arrive, reading only those.

``kag benchmark`` writes each result as ``<name>.json.tmp`` and renames it, so a listed
``.json`` is always whole; each pass lists the tree, reads the files that are new or
changed since the last pass (a :class:`~kagreport.grading.engine.GradeStore`, in memory unless
a folder is given) and yields the report when it differs from the last one.

A pass that cannot run yet is put off, not fatal: the store held by another grade (its
lock) is waited for, and a datasets file that is invalid while it is being rewritten is
read again, each said once in one line.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kagreport._errors import DatasetsError, NotUTF8Error
from kagreport.grading._grade import ProgressCallback, grade
from kagreport.grading._report import StatsReport
from kagreport.grading.engine._options import EngineOptions
from kagreport.grading.engine._store import GradeStore, _StoreInUseError
from kagreport.kag import Datasets

__all__ = ["watch"]

logger = logging.getLogger("kagreport.grading")

# Seconds between tries of a pass that was put off (at most: never longer than interval).
_RETRY = 1.0
# How long a datasets file may be invalid at the start of a watch before that is an
# error: a file that never read well is more likely wrong than being rewritten.
_SETTLE = 5.0


def watch(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    interval: float | None = None,
    store: GradeStore | str | os.PathLike[str] | None = None,
    engine: str | None = None,
    client: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    keep_text: bool | int = False,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
    sleep: Callable[[float], Any] | None = None,
    options: EngineOptions | None = None,
    notice: Callable[[str], Any] | None = None,
) -> Iterator[StatsReport]:
    """Grade a result tree again every ``interval`` seconds; yield each report that changed.

    The first report is always yielded; then one each time the kag JSON or the list of
    unparsable files differs from the last one yielded. A datasets file given as a path is
    read again on each pass (a corrected answer regrades its question's files).

    Parameters
    ----------
    datasets, results, prefix, keep_text, progress
        As :func:`grade`.
    options : EngineOptions, optional
        How the tree is graded, and the seconds between passes (``interval``: from the
        end of one pass to the start of the next). Its ``store`` is where graded files
        are kept (default: in memory, for this watch only); a folder lets the next
        ``kagreport stats --store`` start where this one stopped. With
        ``engine="dask"``, one client (the ``scheduler``'s, or a ``LocalCluster`` made
        here and closed when the iteration ends) serves every pass.
    interval, store, engine, client, storage_options, workers
        Shorthands for the fields of ``options`` (``client``: ``scheduler``); each one
        given replaces its field (:meth:`EngineOptions.with_keywords`).
    stop : threading.Event, optional
        Set it (from another thread) to end the iteration at the next pass.
    sleep : callable, optional
        What waits between passes (default ``time.sleep``, or ``stop.wait``).
    notice : callable, optional
        Called with one line when a pass is put off and tried again (every second at
        most, or every ``interval`` if shorter): the store is in use by another grade, or
        the datasets file (given as a path) is invalid, as it is while an editor or a
        script rewrites it. Said once until a pass succeeds or the cause changes.
        Default: logged as a warning on the ``kagreport.grading`` logger.

    Yields
    ------
    StatsReport

    Raises
    ------
    InputError
        A ValueError too: if an option is out of range (a non-positive ``interval``, ...).
    DatasetsError
        If the datasets file is still invalid 5 seconds after the first try (it never read
        well: more likely wrong than being rewritten).
    KagreportError
        As :func:`grade`, from the pass that failed (but for the waits above).
    """
    options = (options or EngineOptions()).with_keywords(
        interval=interval, store=store, engine=engine, scheduler=client,
        storage_options=storage_options, workers=workers,
    )  # fmt: skip
    if options.store is None:
        options = dataclasses.replace(options, store=GradeStore())
    close = None
    if options.engine == "dask":
        from kagreport.grading.engine._dask import dask_client

        client, close = dask_client(options.scheduler, options.workers)
        options = dataclasses.replace(options, scheduler=client, workers=None)
    wait = sleep or (stop.wait if stop is not None else time.sleep)
    say = notice or logger.warning
    retry = min(_RETRY, options.interval)
    path = None if isinstance(datasets, Datasets) else os.fspath(datasets)
    settle = time.monotonic() + _SETTLE
    read_well = False
    last: tuple[str, tuple[str, ...]] | None = None
    said: str | None = None
    try:
        while stop is None or not stop.is_set():
            try:
                report = grade(
                    datasets, results, prefix, keep_text=keep_text, progress=progress,
                    options=options,
                )  # fmt: skip
            except _StoreInUseError as exc:
                message = f"{exc}; waiting for it"
            except (DatasetsError, NotUTF8Error) as exc:
                ours = isinstance(exc, DatasetsError) or "datasets" in exc.what
                if path is None or not ours or not (read_well or time.monotonic() < settle):
                    raise
                message = f"{exc}; reading it again until it is valid"
            else:
                read_well, said = True, None
                key = (report.to_json(), report.unparsable_files)
                if key != last:
                    last = key
                    yield report
                if stop is not None and stop.is_set():
                    return
                wait(options.interval)
                continue
            if message != said:
                said = message
                say(message)
            wait(retry)
    finally:
        if close is not None:
            close()

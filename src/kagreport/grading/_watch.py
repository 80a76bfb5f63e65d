"""Following a running benchmark: grade its tree again as files arrive, reading only those.

``kag benchmark`` writes each result as ``<name>.json.tmp`` and renames it, so a listed
``.json`` is always whole; each pass lists the tree, reads the files that are new or
changed since the last pass (a :class:`~kagreport.grading.GradeStore`, in memory unless
a folder is given) and yields the report when it differs from the last one.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kagreport.grading._grade import ProgressCallback, StatsReport, grade
from kagreport.grading._store import GradeStore
from kagreport.kag import Datasets

__all__ = ["watch"]


def watch(
    datasets: Datasets | str | os.PathLike[str],
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    interval: float = 2.0,
    store: GradeStore | str | os.PathLike[str] | None = None,
    engine: str = "local",
    client: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    keep_text: bool | int = False,
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    stop: threading.Event | None = None,
    sleep: Callable[[float], Any] | None = None,
) -> Iterator[StatsReport]:
    """Grade a result tree again every ``interval`` seconds; yield each report that changed.

    The first report is always yielded; then one each time the kag JSON or the list of
    unparsable files differs from the last one yielded. A datasets file given as a path is
    read again on each pass (a corrected answer regrades its question's files).

    Parameters
    ----------
    datasets, results, prefix, engine, storage_options, keep_text, workers, progress
        As :func:`grade`.
    interval : float, default 2.0
        Seconds between the end of one pass and the start of the next (> 0).
    store : GradeStore or path, optional
        Where graded files are kept (default: in memory, for this watch only); a folder
        lets the next ``kagreport stats --store`` start where this one stopped.
    client : distributed.Client or str, optional
        With ``engine="dask"``: one client (or scheduler address, or a LocalCluster made
        here) serves every pass; one made here is closed when the iteration ends.
    stop : threading.Event, optional
        Set it (from another thread) to end the iteration at the next pass.
    sleep : callable, optional
        What waits between passes (default ``time.sleep``, or ``stop.wait``).

    Yields
    ------
    StatsReport

    Raises
    ------
    ValueError
        If ``interval`` is not positive.
    KagreportError
        As :func:`grade`, from the pass that failed.
    """
    if not interval > 0:
        raise ValueError(f"`interval` must be a positive number of seconds, not {interval!r}")
    if store is None:
        store = GradeStore()
    elif not isinstance(store, GradeStore):
        store = GradeStore(store)
    close = None
    if engine == "dask":
        from kagreport.grading._dask import dask_client

        client, close = dask_client(client)
    wait = sleep or (stop.wait if stop is not None else time.sleep)
    last: tuple[str, tuple[str, ...]] | None = None
    try:
        while stop is None or not stop.is_set():
            report = grade(
                datasets,
                results,
                prefix,
                store=store,
                engine=engine,
                client=client,
                storage_options=storage_options,
                keep_text=keep_text,
                workers=workers,
                progress=progress,
            )
            key = (report.to_json(), report.unparsable_files)
            if key != last:
                last = key
                yield report
            if stop is not None and stop.is_set():
                return
            wait(interval)
    finally:
        if close is not None:
            close()

"""The runs of a kag result tree while a benchmark writes it: :func:`watch_run`."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["watch_run"]


def watch_run(
    datasets: str | os.PathLike[str] | Any,
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    interval: float = 2.0,
    store: Any = None,
    engine: str = "local",
    client: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    workers: int | None = None,
    stop: threading.Event | None = None,
    on_error: Callable[[KagreportError], None] | None = None,
) -> Iterator[Run]:
    """The run of a kag result tree, again each time it changes while a benchmark writes it.

    Each pass grades the tree reading only the files that are new or changed
    (:func:`kagreport.grading.watch`, with one grade store for every pass: a folder
    ``store`` lets a later ``kagreport stats --store`` start where this stopped) and yields
    ``Run.from_stats`` of the report when it changed.

    Parameters
    ----------
    datasets, results, prefix, interval, store, engine, client, storage_options, workers
        As :func:`kagreport.grading.watch`.
    stop : threading.Event, optional
        Set it (from another thread) to end the iteration at the next pass.
    on_error : callable, optional
        Called with the error of a pass that fails after the first run was yielded (a
        folder the benchmark moves, a datasets file being rewritten); the next pass tries
        again after ``interval`` seconds with the same store. Without it, the error is
        raised. An error of the first pass is always raised.

    Yields
    ------
    Run

    Raises
    ------
    KagreportError
        As :func:`kagreport.grade`.
    """
    from kagreport.grading import GradeStore, watch
    from kagreport.runs import Run

    if store is None:
        store = GradeStore()  # kept across failed passes: nothing is read twice
    wait = stop.wait if stop is not None else time.sleep
    yielded = False
    while stop is None or not stop.is_set():
        reports = watch(
            datasets,
            results,
            prefix,
            interval=interval,
            store=store,
            engine=engine,
            client=client,
            storage_options=storage_options,
            workers=workers,
            stop=stop,
        )
        try:
            for report in reports:
                yielded = True
                yield Run.from_stats(report, storage_options=storage_options)
            return
        except KagreportError as exc:
            if on_error is None or not yielded:
                raise
            on_error(exc)
            wait(interval)

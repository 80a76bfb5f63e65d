"""The runs of a kag result tree while a benchmark writes it: ``watch_run``."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kagreport._errors import InputError, KagreportError

if TYPE_CHECKING:
    from kagreport.grading.engine import EngineOptions
    from kagreport.runs import Run

__all__ = ["watch_run"]


def watch_run(
    datasets: str | os.PathLike[str] | Any,
    results: str | os.PathLike[str] = ".",
    prefix: str = "",
    *,
    options: EngineOptions | None = None,
    stop: threading.Event | None = None,
    on_error: Callable[[KagreportError], None] | None = None,
    **shorthands: Any,
) -> Iterator[Run]:
    """The run of a kag result tree, again each time it changes while a benchmark writes it.

    Each pass grades the tree reading only the files that are new or changed
    (:func:`kagreport.grading.watch`, with one grade store for every pass: a folder
    ``store`` lets a later ``kagreport stats --store`` start where this stopped) and yields
    ``Run.from_stats`` of the report when it changed.

    Parameters
    ----------
    datasets, results, prefix
        As :func:`kagreport.grading.watch`.
    options : EngineOptions, optional
        How the tree is graded and the seconds between passes (``interval``).
    stop : threading.Event, optional
        Set it (from another thread) to end the iteration at the next pass.
    on_error : callable, optional
        Called with the error of a pass that fails after the first run was yielded (a
        folder the benchmark moves, a datasets file being rewritten); the next pass tries
        again after the interval with the same store. Without it, the error is raised. An
        error of the first pass is always raised.
    **shorthands
        ``engine``, ``workers``, ``client``, ``store``, ``storage_options``, ``interval``:
        each replaces its field of ``options``.

    Yields
    ------
    Run

    Raises
    ------
    KagreportError
        As :func:`kagreport.grade`, and for a shorthand that is not one.
    """
    from kagreport.grading import watch
    from kagreport.grading.engine import EngineOptions, GradeStore
    from kagreport.runs import Run

    known = {"engine", "workers", "client", "store", "storage_options", "interval"}
    unknown = sorted(set(shorthands) - known)
    if unknown:
        raise InputError(f"watch_run takes no option {', '.join(map(repr, unknown))}")
    fields = {k: v for k, v in shorthands.items() if k != "client"}
    if shorthands.get("client") is not None:
        fields["scheduler"] = shorthands["client"]
    options = (options or EngineOptions()).with_keywords(**fields)
    if options.store is None:  # kept across failed passes: nothing is read twice
        options = options.with_keywords(store=GradeStore())
    storage = options.storage_options
    wait = stop.wait if stop is not None else time.sleep
    yielded = False
    while stop is None or not stop.is_set():
        reports = watch(datasets, results, prefix, options=options, stop=stop)
        try:
            for report in reports:
                yielded = True
                yield Run.from_stats(report, storage_options=storage)
            return
        except KagreportError as exc:
            if on_error is None or not yielded:
                raise
            on_error(exc)
            wait(options.interval)

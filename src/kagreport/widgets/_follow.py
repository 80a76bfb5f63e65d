"""Following a running benchmark in a view: :func:`kagreport.grading.watch` on a daemon
thread, each new report handed to the view, until stopped.

A pass that fails (a folder that cannot be read while the benchmark moves files, a
datasets file being rewritten) is said in the status line and the next pass tries
again; what was graded stays in the store, so nothing is read twice.
"""

from __future__ import annotations

import dataclasses
import datetime
import html
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kagreport._errors import KagreportError
from kagreport.grading import EngineOptions, GradeStore, StatsReport, watch

__all__ = ["Follower"]

#: The keyword arguments of ``watch`` that are shorthands for its options' fields (and
#: ``client``, for their ``scheduler``).
_SHORTHANDS = ("interval", "store", "engine", "storage_options", "workers")

#: Seconds :meth:`Follower.stop` waits for the pass under way (a big tree's pass may
#: take longer: the thread then ends when it ends, and shows nothing more).
STOP_WAIT = 5.0


class Follower:
    """Grades a result tree again and again on a daemon thread and calls ``show`` with
    each report that changed (see :func:`kagreport.grading.watch`).

    Parameters
    ----------
    watch_args : mapping
        The arguments of :func:`~kagreport.grading.watch` but ``stop``: its
        ``options`` (:class:`~kagreport.EngineOptions`) and their shorthands, made into
        one options object here (the ``store`` defaults to one in memory, kept across
        failed passes).
    show : callable
        Called with each new report, on the thread.
    status : callable
        Called with one line of escaped HTML saying what the follower is doing.

    Raises
    ------
    KagreportError
        From :meth:`first`, as :func:`kagreport.grade`.
    """

    def __init__(
        self,
        watch_args: Mapping[str, Any],
        show: Callable[[StatsReport], None],
        status: Callable[[str], None],
    ) -> None:
        self._args = dict(watch_args)
        shorthands = {name: self._args.pop(name, None) for name in _SHORTHANDS}
        shorthands["scheduler"] = self._args.pop("client", None)
        options = (self._args.get("options") or EngineOptions()).with_keywords(**shorthands)
        if options.store is None:
            options = dataclasses.replace(options, store=GradeStore())
        self._args["options"] = options
        self._interval = options.interval
        self._show = show
        self._status = status
        self._stop = threading.Event()
        self._reports: Iterator[StatsReport] | None = None
        self._thread: threading.Thread | None = None
        self._where = html.escape(os.fspath(self._args.get("results", ".")))

    @property
    def running(self) -> bool:
        """Whether the thread is still following the tree."""
        return self._thread is not None and self._thread.is_alive()

    def first(self) -> StatsReport:
        """Grade the tree once, here (errors are raised, not shown)."""
        self._reports = watch(**self._args, stop=self._stop)
        report = next(self._reports)
        self._said(report)
        return report

    def start(self) -> None:
        """Go on following on a daemon thread."""
        self._thread = threading.Thread(target=self._follow, name="kagreport-follow", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = STOP_WAIT) -> None:
        """End the following after the pass under way (waits up to ``timeout`` seconds)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if not self.running:
            self._status(f"Stopped following {self._where}.")

    def _follow(self) -> None:
        interval = self._interval
        while not self._stop.is_set():
            try:
                if self._reports is None:
                    self._reports = watch(**self._args, stop=self._stop)
                for report in self._reports:
                    if self._stop.is_set():
                        return
                    self._show(report)
                    self._said(report)
                return
            except KagreportError as exc:  # the next pass may well succeed
                self._reports = None
                self._status(
                    f"Following {self._where}: the last pass failed at {_now()} "
                    f"({html.escape(str(exc))}); trying again in {interval:g} s."
                )
                self._stop.wait(interval)
            except Exception as exc:  # a fault of ours: said, never a silent dead thread
                self._status(
                    f"Stopped following {self._where} at {_now()}: "
                    f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}"
                )
                return

    def _said(self, report: StatsReport) -> None:
        files = len(report.items) + len(report.unparsable_files)
        interval = self._interval
        self._status(
            f"Following {self._where}: {files:,} result files graded, updated {_now()} "
            f"(checked every {interval:g} s; <code>view.stop()</code> ends it)."
        )


def _now() -> str:
    return datetime.datetime.now().strftime("%H:%M:%S")

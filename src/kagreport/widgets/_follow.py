"""Following a running benchmark in a view: ``kagreport.sources.watch_run`` on a
daemon thread, each new run handed to the view, until stopped.

A pass that fails (a folder that cannot be read while the benchmark moves files, a
datasets file being rewritten) is said in the status line and the next pass tries
again; what was graded stays in the store, so nothing is read twice.
"""

from __future__ import annotations

import datetime
import html
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kagreport._errors import KagreportError
from kagreport.runs import Run
from kagreport.sources import watch_run

__all__ = ["Follower"]

#: Seconds :meth:`Follower.stop` waits for the pass under way (a big tree's pass may
#: take longer: the thread then ends when it ends, and shows nothing more).
STOP_WAIT = 5.0


class Follower:
    """Grades a result tree again and again on a daemon thread and calls ``show`` with
    each run that changed (see ``kagreport.sources.watch_run``).

    Parameters
    ----------
    watch_args : mapping
        The arguments of ``watch_run`` but ``stop`` and
        ``on_error``: its ``options`` (:class:`~kagreport.EngineOptions`) and their
        shorthands (the ``store`` defaults to one in memory, kept across failed passes).
    show : callable
        Called with each new run, on the thread.
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
        show: Callable[[Run], None],
        status: Callable[[str], None],
    ) -> None:
        self._args = dict(watch_args)
        options = self._args.get("options")
        given = self._args.get("interval")
        self._interval = float(given or (options.interval if options is not None else 2.0))
        self._show = show
        self._status = status
        self._stop = threading.Event()
        self._runs: Iterator[Run] | None = None
        self._thread: threading.Thread | None = None
        self._where = html.escape(os.fspath(self._args.get("results", ".")))

    @property
    def running(self) -> bool:
        """Whether the thread is still following the tree."""
        return self._thread is not None and self._thread.is_alive()

    def first(self) -> Run:
        """Grade the tree once, here (errors are raised, not shown)."""
        self._runs = watch_run(**self._args, stop=self._stop, on_error=self._failed)
        run = next(self._runs)
        self._said(run)
        return run

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

    def _failed(self, exc: KagreportError) -> None:  # the next pass may well succeed
        interval = self._interval
        self._status(
            f"Following {self._where}: the last pass failed at {_now()} "
            f"({html.escape(str(exc))}); trying again in {interval:g} s."
        )

    def _follow(self) -> None:
        assert self._runs is not None
        try:
            for run in self._runs:
                if self._stop.is_set():
                    return
                self._show(run)
                self._said(run)
        except Exception as exc:  # a fault of ours: said, never a silent dead thread
            self._status(
                f"Stopped following {self._where} at {_now()}: "
                f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}"
            )

    def _said(self, run: Run) -> None:
        files = len(run) + len(run.metadata.get("unparsable", ()))
        interval = self._interval
        self._status(
            f"Following {self._where}: {files:,} result files graded, updated {_now()} "
            f"(checked every {interval:g} s; <code>view.stop()</code> ends it)."
        )


def _now() -> str:
    return datetime.datetime.now().strftime("%H:%M:%S")

"""The stop state of a command: the signals it stops on and the stop it was asked for.

The bottom layer with :mod:`kagreport._errors`: the grading pool, the site build
and the command line share it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Collection, Iterator
from types import FrameType
from typing import Any

__all__ = ["STOP_SIGNALS", "note_stop", "stop_requested", "stops_blocked", "stops_deferred"]

#: The signals a command stops on (Ctrl-C, and SIGTERM from a job runner).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_stop: BaseException | None = None


def note_stop(stop: BaseException) -> None:
    """Record the Ctrl-C or SIGTERM the command line was asked to stop by (before raising it).

    Libraries with their own event loop (nbclient) can swallow the exception a signal
    handler raises; code around them asks :func:`stop_requested` and stops anyway.
    """
    global _stop
    _stop = stop


def stop_requested() -> BaseException | None:
    """The stop recorded by :func:`note_stop`, if any."""
    return _stop


@contextlib.contextmanager
def stops_deferred(signals: Collection[int] = STOP_SIGNALS) -> Iterator[None]:
    """Hold a stop signal (of ``signals``) while the block runs, then act on it as the
    handler before would.

    For the few system calls that must happen together (renaming a set of finished files
    into place): a stop arriving in between would leave half of the set old. Off the main
    thread (where Python runs no signal handler) the block just runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[tuple[int, FrameType | None]] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append((signum, frame))

    previous: dict[int, Any] = {}
    try:
        for stop in signals:
            if signal.getsignal(stop) is not None:  # None: set outside Python, left alone
                previous[stop] = signal.signal(stop, hold)
        yield
    finally:
        _restore(list(previous.items()))
        # Each signal held, once, as its handler before the block would have: the default
        # actions first (they end the process, as they would have), then the handlers in
        # the order their signals came.
        first: dict[int, FrameType | None] = {}
        for number, frame in held:
            first.setdefault(number, frame)
        defaults = [number for number in first if previous.get(number) == signal.SIG_DFL]
        handlers = [number for number in first if number not in defaults]
        _act([(number, first[number], previous.get(number)) for number in defaults + handlers])


@contextlib.contextmanager
def stops_blocked() -> Iterator[None]:
    """:func:`stops_deferred`, with the stop signals also blocked in this thread's mask,
    which the processes and threads started in the block inherit (they unblock them when
    their own handlers are set). The mask alone holds nothing in a process with other
    threads (one of them takes the signal, and Python raises it here): hence both."""
    with stops_deferred():
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _restore(handlers: list[tuple[int, Any]]) -> None:
    """Put each handler back, all of them even if a stop raises in between (a handler put
    back acts at once: a hold left on the other signal would swallow its stops for good)."""
    if handlers:
        try:
            signal.signal(*handlers[0])
        finally:
            _restore(handlers[1:])


def _act(stops: list[tuple[int, FrameType | None, Any]]) -> None:
    """Act on each ``(signal, frame, handler before)`` as that handler would have, all of
    them even if one raises (the last one raised wins, the others chained to it)."""
    if stops:
        number, frame, before = stops[0]
        try:
            if callable(before):
                before(number, frame)
            elif before != signal.SIG_IGN:
                signal.raise_signal(number)  # the default action, as before the block
        finally:
            _act(stops[1:])

"""Stops (SIGINT, SIGTERM) held back while the site build does what must not be cut in half.

A stop normally raises in the main thread wherever it is. In a few places that would leave a
mess: between the two renames that swap the new site in (the site folder would be gone),
while a build folder is being removed (half of it left behind), and inside the event loop that
runs a notebook's kernel (an exception raised in the middle of asyncio's own code leaves the
kernel running and the loop in an unknown state). :func:`deferred_signals` holds the stop
back for the duration of a block, tells the block if it asks (``on_signal``: e.g. to cancel
what it waits for), then hands the first signal to the handler that was in place, as if it
had just arrived: the command line's handlers raise ``KeyboardInterrupt`` or
``SystemExit(143)``; Python's default ``SIGTERM`` action ends the process.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from kagreport._signals import STOP_SIGNALS

__all__ = ["STOP_SIGNALS", "deferred_signals"]

#: The signals a user or a job runner stops a build with.


@contextlib.contextmanager
def deferred_signals(on_signal: Callable[[int], None] | None = None) -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs; deliver the first one after it.

    Parameters
    ----------
    on_signal : callable, optional
        Called with the signal number when the first stop arrives, from the signal handler
        (in the main thread, between two bytecodes of whatever runs): it must only note the
        stop or schedule work (``loop.call_soon_threadsafe``), not raise.

    Notes
    -----
    Outside the main thread nothing is held (Python runs signal handlers in the main thread
    only, and only it may install them). A signal whose handler is ``SIG_IGN`` stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous: dict[int, Any] = {}
    holding = True

    def hold(signum: int, frame: FrameType | None) -> None:
        if not holding:  # the block is over but this handler is not yet replaced
            _deliver(signum, frame, previous[signum])
            return
        pending.append(signum)
        if len(pending) == 1 and on_signal is not None:
            on_signal(signum)

    try:
        for sig in STOP_SIGNALS:
            handler = signal.getsignal(sig)
            if handler is signal.SIG_IGN or handler is None:
                continue
            previous[sig] = handler  # before the swap: the finally puts back what it replaced
            signal.signal(sig, hold)
        yield
    finally:
        # One store ends the holding: a signal from here on goes to the previous handler,
        # even if it arrives before that handler is back in place.
        holding = False
        for number, handler in previous.items():
            signal.signal(number, handler)
        if pending:
            _deliver(pending[0], None, previous[pending[0]])


def _deliver(signum: int, frame: FrameType | None, handler: Any) -> None:
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:  # the default action (end the process), now
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

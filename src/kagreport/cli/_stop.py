"""How a command stops: SIGTERM as a cleanup like Ctrl-C, and the exit after a stop."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from kagreport._signals import note_stop, stop_requested

__all__ = ["restore_stop_handlers", "stopped", "terminate_as_interrupt"]


def stopped(code: int, *, exiting: bool) -> int:
    # A stopped command has cleaned up (its finally blocks ran); the interpreter's own exit
    # would then join every non-daemon thread, and one may never end: a process-pool thread
    # reading a result that a worker killed by the same signal left half-written. The
    # command's process exits here instead; a caller of main() gets the code back.
    if not exiting:
        return code
    end_process(code)


def end_process(code: int) -> NoReturn:
    """End this process with ``code`` once the logs and standard streams are flushed,
    without the interpreter's teardown (atexit callbacks, freeing every object)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


@dataclass(frozen=True)
class _Previous:
    handlers: dict[int, object] = field(default_factory=dict)
    unraisablehook: Callable[[Any], object] | None = None


def restore_stop_handlers(previous: _Previous, *, exiting: bool) -> None:
    # Once the work is done, a stop signal has nothing left to clean up. Raised while the
    # interpreter exits (in an atexit callback) it would print a traceback: a command
    # about to exit takes the default actions (the shell sees the signal, silently); a
    # caller of main() gets its own handlers back.
    import signal

    for signum, handler in previous.handlers.items():
        if exiting or handler is not None:  # None: a handler not set from Python
            signal.signal(signum, signal.SIG_DFL if exiting else handler)  # type: ignore[arg-type]
    if previous.unraisablehook is not None:
        sys.unraisablehook = previous.unraisablehook


def terminate_as_interrupt() -> _Previous:
    # CI runners and `timeout` stop a job with SIGTERM; by default Python dies at once and a
    # site build would leave its temporary folder behind. As SystemExit(143), the cleanup
    # runs (grading workers restore the default actions: see grading.engine._pool). Both
    # signals are also recorded (note_stop), for code that waits inside another library's
    # event loop.
    import _thread
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _Previous()

    # The first stop signal stops the command; a repeat (a shell or `timeout` passing the
    # signal on to a process group, a second Ctrl-C) would raise again inside the cleanup
    # the first one runs, leaving it half done, or replace its exception (which carries
    # what the message says, such as an evaluation's progress) with a traceback. The
    # command is already ending, within a second or two: a repeat is ignored.
    stopping = 0  # the signal being acted on, 0 before any

    def terminate(signum: int, frame: object) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = signum
        stop = SystemExit(128 + signum)
        note_stop(stop)
        raise stop

    def interrupt(signum: int, frame: object) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = signum
        stop = KeyboardInterrupt()
        note_stop(stop)
        raise stop

    # A handler runs wherever the main thread is. Inside a weakref or garbage-collector
    # callback, or a __del__, the exception it raises cannot propagate: Python prints
    # "Exception ignored in ..." with a traceback, and the command went on to the end
    # and exited 0. Such a stop is delivered again, once the thread is out of there: a
    # timer thread simulates the signal a moment later (delivered from inside this hook,
    # it would be raised in the hook and lost the same way).
    hook = sys.unraisablehook

    def unraisable(info: Any) -> object:
        nonlocal stopping
        if stopping and info.exc_value is not None and info.exc_value is stop_requested():
            again, stopping = stopping, 0
            timer = threading.Timer(0.01, _thread.interrupt_main, (again,))
            timer.daemon = True
            timer.start()
            return None
        return hook(info)

    previous = _Previous({signal.SIGTERM: signal.signal(signal.SIGTERM, terminate)}, hook)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous.handlers[signal.SIGINT] = signal.signal(signal.SIGINT, interrupt)
    sys.unraisablehook = unraisable
    return previous

"""The stop state of a command: the signals it stops on and the stop it was asked for.

The bottom layer with :mod:`kagreport._errors`: the grading pool, the site build
and the command line share it.
"""

from __future__ import annotations

import signal

__all__ = ["STOP_SIGNALS", "note_stop", "stop_requested"]

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

"""A stopped command exits even when a thread it leaves behind never ends.

A process-pool thread can block for good reading a result that a worker, killed by the
same signal, left half-written (seen once in four Ctrl-C's of ``site build`` by a trial);
the interpreter's exit would join it forever. The command's process exits at once instead.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.signals

_STUCK = r"""
import sys, threading
from kagreport.cli import _main

def stuck_then_stopped(args, level):
    threading.Thread(target=threading.Event().wait, name="stuck").start()  # never ends
    raise {stop}

_main._run_stats = stuck_then_stopped
sys.argv = ["kagreport", "stats", "-d", "d.json", "-r", "results"]
sys.exit(_main.main())
"""


@pytest.mark.parametrize(
    ("stop", "code", "line"),
    [
        ("KeyboardInterrupt()", 130, "kagreport: interrupted"),
        (f"_main._signals_stop({int(signal.SIGTERM)})", 143, "kagreport: terminated"),
    ],
)
def test_a_stopped_command_exits_despite_a_thread_that_never_ends(
    stop: str, code: int, line: str
) -> None:
    script = _STUCK.format(stop=stop)
    if "_signals_stop" in stop:
        # A SIGTERM as the handler raises it: the stop recorded, then SystemExit(143).
        script = script.replace(
            "_main._run_stats = stuck_then_stopped",
            "from kagreport._signals import note_stop\n"
            "def _signals_stop(signum):\n"
            "    stop = SystemExit(128 + signum)\n"
            "    note_stop(stop)\n"
            "    return stop\n"
            "_main._signals_stop = _signals_stop\n"
            "_main._run_stats = stuck_then_stopped",
        )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines() == [line], done.stderr


_TWICE = r"""
import signal, sys
from kagreport.cli import _main

def stopped_twice(args, level):
    try:
        signal.raise_signal(signal.{first})
    finally:  # the cleanup the stop runs; a repeat of the signal arrives in it
        signal.raise_signal(signal.{second})
        sys.stdout.write("cleanup done\n")

_main._run_stats = stopped_twice
sys.argv = ["kagreport", "stats", "-d", "d.json", "-r", "results"]
sys.exit(_main.main())
"""


@pytest.mark.parametrize(
    ("first", "second", "code", "line"),
    [
        ("SIGINT", "SIGINT", 130, "kagreport: interrupted"),
        ("SIGINT", "SIGTERM", 130, "kagreport: interrupted"),
        ("SIGTERM", "SIGTERM", 143, "kagreport: terminated"),
        ("SIGTERM", "SIGINT", 143, "kagreport: terminated"),
    ],
)
def test_a_repeated_stop_signal_does_not_break_the_cleanup(
    first: str, second: str, code: int, line: str
) -> None:
    # `timeout` and shells pass a process group's signal on to the command, which then
    # gets it twice; a second Ctrl-C does the same. The first stops the command, the
    # repeat is ignored: the cleanup runs to its end and one line is printed.
    script = _TWICE.format(first=first, second=second)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code, done.stderr
    assert done.stdout == "cleanup done\n", done.stderr
    assert done.stderr.splitlines() == [line], done.stderr


_IN_A_CALLBACK = r"""
import os, signal, sys, time, weakref
from kagreport.cli import _main

def work_on(args, level):
    class Lock:
        pass
    lock = Lock()
    def callback(ref):
        # The signal arrives while a weakref callback runs (seen in importlib's module
        # locks): the exception its handler raises cannot leave the callback.
        os.kill(os.getpid(), signal.{name})
    ref = weakref.ref(lock, callback)
    del lock
    started = time.monotonic()
    while time.monotonic() - started < 20:
        time.sleep(0.01)
    sys.stdout.write("went on to the end\n")
    return 0

_main._run_stats = work_on
sys.argv = ["kagreport", "stats", "-d", "d.json", "-r", "results"]
sys.exit(_main.main())
"""


@pytest.mark.parametrize(
    ("name", "code", "line"),
    [("SIGTERM", 143, "kagreport: terminated"), ("SIGINT", 130, "kagreport: interrupted")],
)
def test_a_signal_inside_a_callback_still_stops_the_command(
    name: str, code: int, line: str
) -> None:
    """A stop raised where Python can only print it ("Exception ignored in ...") was lost:
    the command ran to its end and exited 0 (a site build, SIGTERM during an import)."""
    done = subprocess.run(
        [sys.executable, "-c", _IN_A_CALLBACK.format(name=name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines() == [line], done.stderr
    assert "went on" not in done.stdout

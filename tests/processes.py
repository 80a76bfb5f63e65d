"""Watching real kagreport processes from the tests that signal them: their process group,
their children and their signal handlers, read from ``/proc`` (Linux)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

#: Generous bound on the time from a signal to the command's exit (the requirement is 2 s;
#: CI's loaded 2-core machines are slow).
BOUND = 15.0


def _processes() -> list[tuple[int, int, int, str]]:
    """(pid, parent pid, process group, state) of every process, from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        found.append((int(name), int(fields[1]), int(fields[2]), fields[0]))
    return found


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    return [p for p, _, group, state in _processes() if group == pgid and state != "Z"]


def children(pid: int) -> list[int]:
    return [p for p, parent, _, state in _processes() if parent == pid and state != "Z"]


def assert_group_gone(pgid: int) -> None:
    # Poll, bounded: processes that were just killed take a moment to be reaped.
    deadline = time.monotonic() + BOUND
    while True:
        alive = group_members(pgid)
        if not alive:
            return
        assert time.monotonic() < deadline, f"processes of the group survived: {alive}"
        time.sleep(0.02)


def wait_for_handlers(proc: subprocess.Popen[bytes]) -> None:
    """Wait until the command catches SIGTERM and SIGINT (before that, Python's defaults apply:
    the interpreter starting and ``import kagreport``, about 0.1 s)."""
    wanted = (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGINT - 1))
    deadline = time.monotonic() + BOUND
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as file:
                caught = next(line for line in file if line.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return
        if int(caught.split()[1], 16) & wanted == wanted:
            return
        assert time.monotonic() < deadline, "the command never installed its handlers"
        time.sleep(0.002)

"""Misbehaving chat-completions servers, and a command run with its peak memory measured.

Replies for :class:`chat_stub.ChatStub` that write their whole response themselves
(``Reply.raw``): a body of gigabytes (declared or not), an endless chunked body, a gzip body
that inflates a thousandfold, a server that drips one byte a second. Each one stops on its
own after ``SERVER_SECONDS``, so a client with no bound fails a test instead of hanging it.

:func:`run_measured` runs a command as a process of its own and returns its exit code,
output, wall time and peak resident memory (its ``ru_maxrss``, read by a small process that
starts it), killing it if its resident memory passes a guard (so a client with no bound on
the body cannot take the test machine with it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from chat_stub import Reply
from processes import group_members

__all__ = [
    "SERVER_SECONDS",
    "GiB",
    "Measured",
    "MiB",
    "deep",
    "drip",
    "endless",
    "gzip_bomb",
    "huge",
    "run_measured",
]

MiB = 1 << 20
GiB = 1 << 30

#: A hostile reply writes for at most this long, then closes the connection.
SERVER_SECONDS = 60.0

_HEAD = (
    b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "'
)
_BLOCK = b"a" * MiB


def _headers(status: str, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def huge(size: int = 2 * GiB) -> Reply:
    """HTTP 200 with ``Content-Length: size`` and a completion that long, sent as fast as
    the client reads it (its content is ``size`` bytes less the JSON around it)."""

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        tail = b'"}, "finish_reason": "stop"}]}'
        stream.write(_headers("200 OK", [("Content-Length", str(size))]) + _HEAD)
        left = size - len(_HEAD) - len(tail)
        end = time.monotonic() + SERVER_SECONDS
        while left > 0 and not stopping.is_set() and time.monotonic() < end:
            part = _BLOCK[: min(left, MiB)]
            stream.write(part)
            left -= len(part)
        if left <= 0:
            stream.write(tail)

    return Reply(raw=write)


def endless(*, content_length: int | None = None) -> Reply:
    """HTTP 200 with a chunked body that never ends (64 KiB chunks); ``content_length`` also
    sends a ``Content-Length`` header that lies (chunked framing wins, RFC 9112 6.3)."""
    chunk = b"%x\r\n" % (64 * 1024) + b"a" * (64 * 1024) + b"\r\n"

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        extra = [] if content_length is None else [("Content-Length", str(content_length))]
        stream.write(_headers("200 OK", [("Transfer-Encoding", "chunked"), *extra]))
        stream.write(b"%x\r\n" % len(_HEAD) + _HEAD + b"\r\n")
        end = time.monotonic() + SERVER_SECONDS
        while not stopping.is_set() and time.monotonic() < end:
            stream.write(chunk)

    return Reply(raw=write)


@functools.cache
def _gzip_of_as(size: int, layers: int) -> bytes:
    """``b"a" * size`` gzip-compressed ``layers`` times (level 9), computed once."""
    data = b""
    for layer in range(layers):
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        if layer == 0:
            parts = [compressor.compress(_BLOCK) for _ in range(size // MiB)]
            parts.append(compressor.compress(b"a" * (size % MiB)))
        else:
            parts = [compressor.compress(data)]
        parts.append(compressor.flush())
        data = b"".join(parts)
    return data


def gzip_bomb(inflated: int = GiB, *, layers: int = 1) -> Reply:
    """HTTP 200 with ``Content-Encoding: gzip`` (``layers`` times) and ``Content-Length``:
    a body that inflates to ``inflated`` bytes of ``a`` (1 GiB: a body of about 1 MB)."""
    body = _gzip_of_as(inflated, layers)
    encoding = ", ".join(["gzip"] * layers)

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        headers = [("Content-Encoding", encoding), ("Content-Length", str(len(body)))]
        stream.write(_headers("200 OK", headers) + body)

    return Reply(raw=write)


def drip(interval: float = 1.0, *, headers: bool = False) -> Reply:
    """A completion sent one byte every ``interval`` seconds: its body after the headers,
    or (``headers=True``) from the status line on. Ends after ``SERVER_SECONDS``."""
    body = b'{"choices": [{"message": {"content": "Verdict: yes"}, "finish_reason": "stop"}]}'
    head = _headers("200 OK", [("Content-Length", str(len(body) + 10**6))])

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        if headers:
            data = head + body
        else:
            stream.write(head)
            data = body
        end = time.monotonic() + SERVER_SECONDS
        position = 0
        while time.monotonic() < end and not stopping.wait(interval):
            stream.write(data[position : position + 1] or b" ")
            position += 1

    return Reply(raw=write)


def deep(levels: int) -> Reply:
    """HTTP 200 whose body is a JSON object nested ``levels`` arrays deep in ``choices``."""
    return Reply(body=b'{"choices": ' + b"[" * levels + b"]" * levels + b"}")


@dataclass(frozen=True)
class Measured:
    """A finished command: exit code, output, seconds from start to exit, the peak resident
    memory in bytes, and whether the memory guard (or the time limit) killed it."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak: int
    killed: bool


# Runs the command and writes its peak resident memory (ru_maxrss, in KiB on Linux) to the
# file named first. A process of its own, small: a child's ru_maxrss counts the memory of
# the process that started it (the kernel keeps the larger of the two across exec), so the
# command is not started by the test process, whose size is the tests'.
_MEASURE = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as file:
    file.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"""


def _group_resident(group: int) -> int:
    """Resident memory in bytes of the largest process in process group ``group``."""
    largest = 0
    for pid in group_members(group):
        try:
            with open(f"/proc/{pid}/status") as file:
                for line in file:
                    if line.startswith("VmRSS:"):
                        largest = max(largest, int(line.split()[1]) * 1024)
        except (OSError, ValueError, IndexError):
            continue
    return largest


def run_measured(
    command: Sequence[str],
    env: dict[str, str],
    *,
    limit: float = 90.0,
    guard: int = 1536 * MiB,
) -> Measured:
    """Run ``command`` (through a small measuring process); kill it after ``limit`` seconds
    or once it holds ``guard`` bytes. The peak is the command's own ``ru_maxrss``, or, if
    the guard killed it, the most the guard saw."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as folder,
    ):
        report = os.path.join(folder, "maxrss")
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, report, *command],
            stdout=out,
            stderr=err,
            env=env,
            start_new_session=True,
        )
        seen = 0
        killed = False
        while process.poll() is None:
            seen = max(seen, _group_resident(process.pid))
            if seen > guard or time.monotonic() - started > limit:
                killed = True
                with contextlib.suppress(ProcessLookupError):  # it has just ended
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                break
            time.sleep(0.02)
        seconds = time.monotonic() - started
        peak = seen
        if os.path.exists(report):
            with open(report) as file:
                peak = int(file.read()) * 1024
        out.seek(0)
        err.seek(0)
        return Measured(
            returncode=process.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            seconds=seconds,
            peak=peak,
            killed=killed,
        )

"""A set of files renamed into place together, with stop signals held meanwhile."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

import pytest

from kagreport._atomic import write_atomic_set
from kagreport._signals import stops_deferred


def test_a_stop_inside_the_block_is_acted_on_after_it() -> None:
    events: list[object] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        events.append(("handler", signum))

    before = signal.signal(signal.SIGTERM, handler)
    try:
        with stops_deferred():
            signal.raise_signal(signal.SIGTERM)
            events.append("inside")
        events.append("after")
    finally:
        signal.signal(signal.SIGTERM, before)
    assert events == ["inside", ("handler", signal.SIGTERM), "after"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_stop_while_the_handlers_are_put_back_leaves_none_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stop acted on as soon as the first handler is back must not leave the block's hold
    # on the other signal: its stops would be swallowed for good.
    real_signal = signal.signal
    restored: list[int] = []

    def signal_then_interrupt(signum: int, handler: object) -> object:
        previous = real_signal(signum, handler)  # type: ignore[arg-type]
        if handler is not None and getattr(handler, "__name__", "") != "hold":
            restored.append(signum)
            if len(restored) == 1:
                raise KeyboardInterrupt  # as the handler just put back would raise
        return previous

    term_before = signal.getsignal(signal.SIGTERM)
    int_before = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(signal, "signal", signal_then_interrupt)
    with pytest.raises(KeyboardInterrupt), stops_deferred():
        pass
    monkeypatch.undo()
    assert sorted(restored) == sorted([signal.SIGINT, signal.SIGTERM])
    assert signal.getsignal(signal.SIGTERM) is term_before
    assert signal.getsignal(signal.SIGINT) is int_before


_CTRL_C_THEN_SIGTERM = """
import os, signal, time
from kagreport._signals import stops_deferred
try:
    with stops_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
except KeyboardInterrupt:
    pass
time.sleep(0.2)
print("alive")
"""


def test_a_sigterm_held_after_a_ctrl_c_still_ends_the_process() -> None:
    # Found by a breaker: only the first signal held was acted on, so a SIGTERM (default
    # action) held after a Ctrl-C was dropped and the process lived on. Without the block:
    # a KeyboardInterrupt, then death by SIGTERM.
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_THEN_SIGTERM], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.stdout, done.stderr)


def _raise_in_block(*numbers: int) -> None:
    with stops_deferred():
        for number in numbers:
            signal.raise_signal(number)


def test_two_handlers_held_both_run_and_the_last_raise_wins() -> None:
    ran: list[int] = []

    def terminate(signum: int, frame: FrameType | None) -> None:
        ran.append(signum)
        raise SystemExit(143)

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        with pytest.raises(SystemExit) as raised:
            _raise_in_block(signal.SIGINT, signal.SIGTERM, signal.SIGINT)  # a repeat: once
    finally:
        signal.signal(signal.SIGTERM, before)
    assert ran == [signal.SIGTERM]
    assert isinstance(raised.value.__context__, KeyboardInterrupt)  # the Ctrl-C's, first


def test_a_ctrl_c_during_the_renames_still_leaves_the_whole_new_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    for name in ("a", "b", "c"):
        (tmp_path / name).write_text("old")
    real_replace = os.replace
    calls = []

    def replace_then_interrupt(source: str, target: str) -> None:
        real_replace(source, target)
        calls.append(target)
        if len(calls) == 1:
            signal.raise_signal(signal.SIGINT)  # Python's handler raises KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomic_set(tmp_path, {"a": "new", "b": "new", "c": "new"})
    assert len(calls) == 3  # the interruption waited for the last rename
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == dict.fromkeys("abc", "new")

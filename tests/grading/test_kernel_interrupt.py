"""grade() in a real Jupyter kernel (which always has other threads): its workers come from
a fork server, and an interrupt at any moment stops it at once with no worker left behind
and the kernel still usable."""

from __future__ import annotations

import contextlib
import queue
import time
from pathlib import Path
from typing import Any

import pytest

from kagreport import grade
from kagreport.kag import simulate_run
from processes import BOUND, children

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")


def _workers(pid: int) -> list[str]:
    """The command lines of the processes under ``pid`` but multiprocessing's fork server
    and resource tracker (which stay, idle, for the next grade)."""
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            todo.append(child)
            try:
                line = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "forkserver" not in line and "resource_tracker" not in line:
                found.append(f"{child}: {line}")
    return found


def _run(kc: Any, code: str) -> dict[str, Any]:
    """Execute ``code``; its reply's content (raises on a kernel that does not answer)."""
    reply = kc.execute_interactive(code, timeout=BOUND * 4, output_hook=lambda msg: None)
    content: dict[str, Any] = reply["content"]
    return content


def _started(kc: Any, msg_id: str) -> None:
    """Wait until the cell of request ``msg_id`` runs (it prints first): an interrupt
    before that lands in ipykernel's own code, which then drops the request."""
    deadline = time.monotonic() + BOUND * 4
    while True:
        assert time.monotonic() < deadline, "the kernel never ran the cell"
        msg = kc.get_iopub_msg(timeout=BOUND * 4)
        if (
            msg["msg_type"] == "stream"
            and msg["parent_header"].get("msg_id") == msg_id
            and "grading" in msg["content"]["text"]
        ):
            return


def _reply(kc: Any, timeout: float) -> dict[str, Any] | None:
    """The content of the next shell reply, or None if none comes within ``timeout``."""
    try:
        content: dict[str, Any] = kc.get_shell_msg(timeout=timeout)["content"]
    except queue.Empty:
        return None
    return content


def _printed(kc: Any, code: str) -> str:
    """What ``code`` prints in the kernel."""
    shown: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            shown.append(msg["content"]["text"])

    kc.execute_interactive(code, timeout=BOUND * 4, output_hook=hook)
    return "".join(shown)


def _state(kc: Any, kernel: int) -> str:
    """What the kernel holds after an interrupt it did not act on: the exceptions Python
    dropped, its SIGINT handler, and each thread's blocked and pending signals."""
    shown = [_printed(kc, "import signal; print(dropped, signal.getsignal(signal.SIGINT))")]
    for task in sorted(Path(f"/proc/{kernel}/task").iterdir()):
        with contextlib.suppress(OSError):
            status = (task / "status").read_text()
            masks = [line for line in status.splitlines() if line.startswith(("Sig", "Shd"))]
            shown.append(f"{task.name} {(task / 'comm').read_text().strip()}: {masks}")
    return "\n".join(shown)


@pytest.mark.signals
def test_an_interrupted_grade_in_a_kernel_leaves_no_worker_and_the_kernel_works(
    tmp_path: Path,
) -> None:
    run = simulate_run(tmp_path / "sim", questions=150, datasets=3, vector_dim=256, seed=12)
    expected = grade(run.datasets_path, run.results_path, workers=1).to_json()
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        kernel = km.provisioner.process.pid
        setup = (
            "import sys, threading, kagreport\n"
            f"D, R = {str(run.datasets_path)!r}, {str(run.results_path)!r}\n"
            "assert threading.active_count() > 1\n"
            "import traceback\n"
            "dropped = []\n"  # exceptions Python could not raise (a finalizer's), and where
            "sys.unraisablehook = lambda e: dropped.append(\n"
            "    f'{e.exc_value!r} in {e.object!r}: ' + ''.join(traceback.format_tb(e.exc_traceback))\n"
            ")\n"
        )
        assert _run(kc, setup)["status"] == "ok"
        first = _run(kc, f"print(kagreport.grade(D, R, workers=2).to_json() == {expected!r})")
        assert first["status"] == "ok", first
        for delay in (0.0, 0.05, 0.15, 0.3, 0.6):
            # Grades again and again until interrupted: the interrupt lands in the cell's code,
            # never after it (ipykernel loses a reply interrupted while it is being sent).
            # stop_on_error=False: after the KeyboardInterrupt, ipykernel would otherwise abort
            # the requests that reach it for a moment (its stop-on-error window), and on a loaded
            # machine the check below lands in it: an "aborted" reply that is not ours.
            msg_id = kc.execute(
                "print('grading', flush=True)\nwhile True:\n    kagreport.grade(D, R)",
                stop_on_error=False,
            )
            _started(kc, msg_id)  # an interrupt before that is the kernel's, not the grade's
            time.sleep(delay)
            km.interrupt_kernel()
            reply = _reply(kc, BOUND)
            if reply is None:
                # Not acted on. CPython drops an exception raised in a finalizer that its
                # garbage collector runs (it goes to sys.unraisablehook), and a signal that
                # comes during a collection is raised there: the interrupt is lost, and the
                # user interrupts again. So does the test; the loss must be that one, and
                # in no finalizer of kagreport's.
                km.interrupt_kernel()
                reply = _reply(kc, BOUND * 4)
                assert reply is not None, "the kernel did not stop on a second interrupt"
                lost = _printed(kc, "print(*dropped, sep='\\n')")
                assert "KeyboardInterrupt()" in lost, (delay, _state(kc, kernel))
                assert "/kagreport/" not in lost, (delay, lost)
                _printed(kc, "dropped.clear()")
            assert reply["status"] == "error", (delay, reply, _state(kc, kernel))
            assert reply["ename"] == "KeyboardInterrupt", reply
            # No worker left (the fork server stays, idle, for the next grade).
            deadline = time.monotonic() + BOUND
            while _workers(kernel):
                assert time.monotonic() < deadline, _workers(kernel)
                time.sleep(0.05)
            # The kernel still grades, and gets the same report.
            check = _run(kc, f"assert kagreport.grade(D, R, workers=2).to_json() == {expected!r}")
            assert check["status"] == "ok", check
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

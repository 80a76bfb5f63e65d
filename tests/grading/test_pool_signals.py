"""``kagreport stats`` on a tree large enough for the worker pool, stopped at random moments.

Each test starts the command in its own process group, as a shell job is, and
then sends the group SIGTERM or SIGINT (as a terminal's Ctrl-C does), or
SIGKILLs one worker (as the out-of-memory killer would). Whatever the moment,
the command must end promptly with one clear line, its exit code, no
traceback, and no process of the group left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kagreport import grade
from kagreport.grading.engine import _pool
from kagreport.kag import SimulatedRun, simulate_run
from processes import BOUND, assert_group_gone, children, wait_for_handlers

pytestmark = [
    pytest.mark.signals,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork pool, /proc"),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SimulatedRun:
    # 3 x 600 scorable question folders, about 7,200 small result files (short vectors):
    # far more than PARALLEL_AFTER, so the pool is used, and a run takes well under a second.
    root = tmp_path_factory.mktemp("pool-signals") / "sim"
    simulated = simulate_run(root, questions=600, datasets=3, vector_dim=8, seed=3)
    assert 2 * _pool.PARALLEL_AFTER < 3 * 600
    return simulated


def _start(
    run: SimulatedRun, out: Path, find: bool = False
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    stdout, stderr = out / "stdout", out / "stderr"
    command = [sys.executable, "-m", "kagreport", "stats", "-r", str(run.results_path)]
    if find:  # ``stats find`` reads the tree with the same pool
        command += ["find", "--format", "json", r"Answer: [a-d]$"]
    else:
        command += ["-d", str(run.datasets_path), "--format", "json"]
    with open(stdout, "wb") as o, open(stderr, "wb") as e:
        proc = subprocess.Popen(
            command, stdout=o, stderr=e, start_new_session=True  # its own process group
        )  # fmt: skip
    return proc, stdout, stderr


def _finish(proc: subprocess.Popen[bytes], since: float) -> tuple[int, float]:
    try:
        code = proc.wait(timeout=BOUND + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"the command hung after the signal (pid {proc.pid})")
    return code, time.monotonic() - since


def test_reference_output(run: SimulatedRun, tmp_path: Path) -> None:
    proc, stdout, stderr = _start(run, tmp_path)
    assert _finish(proc, time.monotonic())[0] == 0, stderr.read_text()
    assert stdout.read_text().startswith("{")


@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [
        (signal.SIGTERM, 143, "kagreport: terminated"),
        (signal.SIGINT, 130, "kagreport: interrupted"),
    ],
)
def test_group_signal_at_random_moments_ends_the_command(
    run: SimulatedRun, tmp_path: Path, signum: int, code: int, message: str
) -> None:
    # The reference output, to check runs the signal came too late for.
    proc, stdout, _ = _start(run, tmp_path)
    wait_for_handlers(proc)
    returned, busy = _finish(proc, time.monotonic())
    assert returned == 0
    expected = stdout.read_bytes()
    rng = random.Random(signum)
    slowest, stopped = 0.0, 0
    for attempt in range(10):
        proc, stdout, stderr = _start(run, tmp_path)
        wait_for_handlers(proc)
        if attempt % 2:
            time.sleep(rng.uniform(0.0, 0.8 * busy))
        else:  # while the pool runs: as soon as workers exist, then a little later
            deadline = time.monotonic() + BOUND
            while not children(proc.pid) and proc.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.02))
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError):  # it had finished
            os.killpg(proc.pid, signum)
        returned, took = _finish(proc, sent)
        slowest = max(slowest, took)
        err = stderr.read_text()
        assert "Traceback" not in err, err
        assert_group_gone(proc.pid)
        if stdout.read_bytes() == expected:
            # The signal came after the report: while the interpreter exits, Python's
            # default actions are back (a signal then kills it, silently).
            assert returned in (0, code, -signum), (attempt, returned, err)
            continue
        stopped += 1
        assert returned == code, (attempt, returned, err)
        assert err.splitlines()[-1] == message, err
        assert took < BOUND
    print(
        f"signal {signum}: {stopped}/10 runs stopped (a run takes {busy:.2f} s); "
        f"slowest exit {slowest:.3f} s"
    )
    assert stopped >= 3  # at least the signals sent while workers ran landed


def test_a_killed_worker_is_one_error_line(run: SimulatedRun, tmp_path: Path) -> None:
    rng = random.Random(9)
    slowest, killed = 0.0, 0
    for _ in range(8):
        proc, stdout, stderr = _start(run, tmp_path)
        deadline = time.monotonic() + BOUND
        while not (workers := children(proc.pid)) and proc.poll() is None:
            assert time.monotonic() < deadline, "no worker process appeared"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.05))
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError, IndexError):  # it had finished
            os.kill(rng.choice(workers), signal.SIGKILL)
        returned, took = _finish(proc, sent)
        slowest = max(slowest, took)
        err = stderr.read_text()
        assert "Traceback" not in err, err
        assert_group_gone(proc.pid)
        if returned == 0:  # the worker had finished its share: the report is whole
            assert stdout.read_text().endswith("}\n")
            continue
        killed += 1
        assert returned == 1, err
        assert err.splitlines() == [
            "kagreport: error: a grading worker process died (killed by signal 9: SIGKILL, "
            "e.g. out of memory); no report was written"
        ], err
        assert stdout.read_bytes() == b""
    print(f"worker SIGKILL: {killed}/8 runs failed as expected; slowest exit {slowest:.3f} s")
    assert killed >= 3


def test_workers_die_with_a_killed_parent(run: SimulatedRun, tmp_path: Path) -> None:
    # SIGKILL gives the parent no chance to stop its workers: they must not go on alone.
    proc, _, _ = _start(run, tmp_path)
    deadline = time.monotonic() + BOUND
    while not children(proc.pid) and proc.poll() is None:
        assert time.monotonic() < deadline, "no worker process appeared"
        time.sleep(0.002)
    proc.kill()
    assert proc.wait(timeout=BOUND) == -signal.SIGKILL
    assert_group_gone(proc.pid)


def _dispositions(pid: int) -> tuple[bool, bool, bool] | None:
    """(SIGTERM caught, SIGINT caught, SIGINT ignored) of a process, from /proc; None if gone
    (or a zombie: an ended process shows no handlers)."""
    try:
        with open(f"/proc/{pid}/status") as file:
            rows = [
                line.split(":", 1) for line in file
                if line.startswith(("SigCgt:", "SigIgn:", "State:"))
            ]  # fmt: skip
    except OSError:
        return None
    state = dict(rows).pop("State", "").strip()
    if state.startswith(("Z", "X")):
        return None
    masks = {name: int(value, 16) for name, value in rows if name != "State"}
    if len(masks) != 2:
        return None
    caught, ignored = masks["SigCgt"], masks["SigIgn"]
    term, sigint = 1 << (signal.SIGTERM - 1), 1 << (signal.SIGINT - 1)
    return bool(caught & term), bool(caught & sigint), bool(ignored & sigint)


def test_workers_take_the_default_sigterm_and_ignore_sigint(
    run: SimulatedRun, tmp_path: Path
) -> None:
    # Issue #10 item 9: forked workers inherited the command line's Python SIGTERM handler,
    # which only sets a flag, so a SIGTERM landing just before a blocking wait was never
    # acted on (a site build hung in Pool.terminate()); and its SIGINT handler, so a Ctrl-C
    # to the group printed worker tracebacks. A worker must die of SIGTERM (the default)
    # and leave Ctrl-C to the parent (ignored). Between fork and the pool's initializer a
    # worker still shows the inherited handlers, so each worker is read until its
    # dispositions are set or the command ends. A worker last seen with the inherited ones
    # may have set its own after that, unseen (the command ended first): it tells nothing,
    # and the run is repeated until a worker is seen settled.
    expected = (False, False, True)
    for _attempt in range(10):
        proc, _, stderr = _start(run, tmp_path)
        wait_for_handlers(proc)
        parent = _dispositions(proc.pid)
        settled: dict[int, tuple[bool, bool, bool]] = {}
        while proc.poll() is None:
            for worker in children(proc.pid):
                seen = _dispositions(worker)
                if seen is not None and settled.get(worker) != expected:
                    settled[worker] = seen
            time.sleep(0.002)
        assert proc.wait(timeout=BOUND) == 0, stderr.read_text()
        if expected in settled.values():
            break
    assert expected in settled.values(), f"no worker was seen with its own dispositions: {settled}"
    if parent is not None:  # the parent catches both: there are handlers to inherit
        assert parent[:2] == (True, True), parent
    # Any other state seen is the inherited one, before the initializer ran.
    assert set(settled.values()) <= {expected, (True, True, False)}, settled


def test_sigterm_while_a_site_build_grades(run: SimulatedRun, tmp_path: Path) -> None:
    # The site grades in-process with the same pool: a SIGTERM there used to hang forever.
    out = tmp_path / "site"
    with open(tmp_path / "stderr", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kagreport", "site", "build", "-r", str(run.results_path),
             "-d", str(run.datasets_path), "-o", str(out), "--no-execute"],
            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 4 * BOUND
    while not children(proc.pid):
        assert proc.poll() is None, "the site build graded without worker processes"
        assert time.monotonic() < deadline, "no worker process appeared"
        time.sleep(0.002)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)
    returned, took = _finish(proc, sent)
    stderr = (tmp_path / "stderr").read_text()
    print(f"site build: exit {returned} {took:.3f} s after SIGTERM")
    assert returned == 143, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.splitlines()[-1] == "kagreport: terminated"
    assert_group_gone(proc.pid)
    assert not out.exists()


def _when_workers_run(proc: subprocess.Popen[bytes], rng: random.Random) -> list[int]:
    deadline = time.monotonic() + BOUND
    while not (workers := children(proc.pid)) and proc.poll() is None:
        assert time.monotonic() < deadline, "no worker process appeared"
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, 0.02))
    return workers


def test_find_killed_worker_and_group_sigterm(run: SimulatedRun, tmp_path: Path) -> None:
    # ``stats find`` on the same tree (about 7,200 files: above FIND_PARALLEL_AFTER), a few
    # seeded moments each: a SIGKILLed worker is one error line and exit 1; a SIGTERM to the
    # group is exit 143 and "terminated"; never a traceback or a process left behind.
    rng = random.Random(11)
    outcomes: dict[str, int] = {"killed": 0, "terminated": 0}
    for attempt in range(8):
        proc, stdout, stderr = _start(run, tmp_path, find=True)
        wait_for_handlers(proc)
        workers = _when_workers_run(proc, rng)
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError, IndexError):  # it had finished
            if attempt % 2:
                os.killpg(proc.pid, signal.SIGTERM)
            else:
                os.kill(rng.choice(workers), signal.SIGKILL)
        returned, took = _finish(proc, sent)
        err = stderr.read_text()
        assert "Traceback" not in err, err
        assert_group_gone(proc.pid)
        if stdout.read_bytes().endswith(b"}\n"):  # the signal came after the search
            assert returned in (0, 143, -signal.SIGTERM), (attempt, returned, err)
            continue
        assert took < BOUND
        assert stdout.read_bytes() == b"", err
        if attempt % 2:
            outcomes["terminated"] += 1
            assert returned == 143, (attempt, returned, err)
            assert err.splitlines()[-1] == "kagreport: terminated", err
        else:
            outcomes["killed"] += 1
            assert returned == 1, (attempt, returned, err)
            assert err.splitlines() == [
                "kagreport: error: a grading worker process died (killed by signal 9: "
                "SIGKILL, e.g. out of memory); no report was written"
            ], err
    print(f"stats find: {outcomes} of 4 runs each stopped")
    assert outcomes["killed"] >= 1
    assert outcomes["terminated"] >= 1


_SLOW_MANAGER = r"""
import os, sys, time
from concurrent.futures import process
from kagreport import WorkerDiedError
from kagreport.grading.engine._pool import ChunkRunner

real = process._ExecutorManagerThread.join_executor_internals

def slow_join(self):
    time.sleep(0.5)  # a loaded machine: the manager closes its pipes late
    real(self)

process._ExecutorManagerThread.join_executor_internals = slow_join

class Chunk:
    paths = ("a",)

def task(chunk):
    time.sleep(60)

runner = ChunkRunner(2, "", lambda chunk, graded: None, task=task, parallel_after=0)
runner.submit(Chunk())
os.kill(runner._processes[0].pid, 9)
try:
    runner.finish()
except WorkerDiedError:
    pass
else:
    sys.exit("no WorkerDiedError")
manager = runner._pool._executor_manager_thread
runner.close()
print("alive" if manager.is_alive() else "joined")
"""


def test_close_after_a_dead_worker_waits_for_the_executor_thread() -> None:
    # Regression (CI, 2026-12-01): close() read the manager thread after shutdown() had
    # dropped it, so never joined it; at exit CPython's wake-up write met the descriptor
    # that thread was closing, and a traceback followed the one error line.
    done = subprocess.run(
        [sys.executable, "-c", _SLOW_MANAGER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "joined\n", done.stderr
    assert "Traceback" not in done.stderr, done.stderr


_HALF_WRITTEN = r"""
import os, struct, sys, time
from kagreport.grading.engine._pool import ChunkRunner

flag = sys.argv[1]

class Chunk:
    paths = ("a",)

def task(chunk):
    # As a worker stopped while it sends a result: a message's header and part of its body.
    frame = sys._getframe()
    while "result_queue" not in frame.f_locals:
        frame = frame.f_back
    writer = frame.f_locals["result_queue"]._writer
    os.write(writer.fileno(), struct.pack("!i", 1 << 20) + b"x" * 100)
    open(flag, "w").close()
    time.sleep(60)

runner = ChunkRunner(2, "", lambda chunk, graded: None, task=task, parallel_after=0)
runner.submit(Chunk())
deadline = time.monotonic() + 30
while not os.path.exists(flag):
    assert time.monotonic() < deadline, "the task never ran"
    time.sleep(0.01)
time.sleep(0.2)  # the manager thread reads the half-written result meanwhile
manager = runner._pool._executor_manager_thread
start = time.monotonic()
runner.close()
print(f"{time.monotonic() - start:.2f}", "alive" if manager.is_alive() else "joined")
"""


def test_close_while_a_result_is_half_written_is_prompt(tmp_path: Path) -> None:
    # Regression (a breaker, 2026-12-06): Ctrl-C while a worker was sending a `find` result
    # took 5 s to end: the killed worker left the manager thread reading the rest of the
    # message, and close() waited for it until its deadline. The parent closes the result
    # pipe's last write end once the workers are gone, so the read ends at once.
    done = subprocess.run(
        [sys.executable, "-c", _HALF_WRITTEN, str(tmp_path / "ran")],
        capture_output=True,
        text=True,
        timeout=30,  # before the fix, that process never ended (its exit joined the thread)
    )
    assert done.returncode == 0, done.stderr
    took, state = done.stdout.split()
    assert state == "joined", done.stderr
    assert float(took) < 2.0


_THREADED_CALLER = r"""
import json, os, random, signal, sys, threading, time, traceback
import kagreport

datasets, results, expected, count, seed = sys.argv[1:]
rng = random.Random(int(seed))
# Another thread, as in a Jupyter kernel: workers then come from a fork server, and a
# signal may land on that thread, where no mask of the grading thread holds it.
threading.Thread(target=time.sleep, args=(10**6,), daemon=True).start()
dropped = []  # exceptions Python could not raise (a finalizer's), and where
sys.unraisablehook = lambda e: dropped.append(
    f"{e.exc_value!r} " + "".join(traceback.format_tb(e.exc_traceback))
)
lost = 0
for _ in range(int(count)):
    timer = threading.Timer(rng.uniform(0.0, 0.4), os.killpg, (0, signal.SIGINT))
    started = time.monotonic()
    try:
        timer.start()
        while time.monotonic() - started < 5:
            kagreport.grade(datasets, results)
        lost += 1
    except KeyboardInterrupt:
        pass
    timer.join()
same = kagreport.grade(datasets, results, workers=2).to_json() == open(expected).read()
print(json.dumps({"lost": lost, "dropped": dropped, "same": same}))
"""


def test_interrupts_of_a_threaded_caller_are_never_lost(run: SimulatedRun, tmp_path: Path) -> None:
    # Regression (CI, 2026-12-06): in a kernel, an interrupt that landed while a worker
    # started from the fork server, or in the pool's finalizers, was lost (the grade went
    # on), killed the fork server (the next grade failed: connection refused) or left a
    # worker printing a traceback. Ctrl-C goes to the whole group, as a kernel interrupt.
    expected = tmp_path / "expected.json"
    expected.write_text(grade(run.datasets_path, run.results_path, workers=1).to_json(), "utf-8")
    rng = random.Random(31)
    script = tmp_path / "caller.py"
    script.write_text(_THREADED_CALLER, encoding="utf-8")
    command = [sys.executable, str(script), str(run.datasets_path), str(run.results_path)]
    proc = subprocess.run(
        [*command, str(expected), "25", str(rng.randrange(10**6))],
        capture_output=True, text=True, timeout=BOUND * 20, start_new_session=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no traceback from the fork server or a worker
    out = json.loads(proc.stdout)
    assert out["same"]
    # None lost, but where CPython itself drops it: raised in a finalizer its garbage
    # collector runs (sys.unraisablehook sees it), never one of kagreport's.
    assert not [text for text in out["dropped"] if "/kagreport/" in text], out
    assert out["lost"] <= sum(text.startswith("KeyboardInterrupt()") for text in out["dropped"])

"""The Dask engine against the local one: the same report, byte for byte, on disk and on a
bucket; a worker killed mid-task costs a retry, not a report; a cluster without workers is
an error, never a wait; the command stops on a signal with nothing left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from kagreport import EngineOptions, WorkerDiedError, find, grade
from kagreport.grading.engine import _dask
from kagreport.kag import SimulatedRun, simulate_run
from processes import BOUND, assert_group_gone, children, wait_for_handlers

from .conftest import local_cluster, upload

dask_config = pytest.importorskip("dask").config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SimulatedRun:
    """A SIMULATED tree of 1,240 result files in 310 question folders."""
    root = tmp_path_factory.mktemp("dask") / "sim"
    return simulate_run(root, questions=100, datasets=3, vector_dim=8, seed=11)


@pytest.fixture
def small_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks of a few folders, so that a small tree makes many tasks (out of order too)."""
    monkeypatch.setattr(_dask, "FIRST_FOLDERS", 7)
    monkeypatch.setattr(_dask, "TARGET_FILES", 40)


def test_the_options_workers_size_the_local_cluster(
    run: SimulatedRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = []
    made_here = _dask.dask_client

    def spy(client: Any = None, workers: int | None = None) -> Any:
        made, close = made_here(client, workers)
        sizes.append(len(made.nthreads()))
        return made, close

    monkeypatch.setattr(_dask, "dask_client", spy)
    options = EngineOptions(engine="dask", workers=1)
    dask = grade(run.datasets_path, run.results_path, options=options)
    assert sizes == [1]
    assert dask.to_json() == grade(run.datasets_path, run.results_path).to_json()


def test_the_dask_engine_prints_what_the_local_engine_prints(
    run: SimulatedRun, dask_client: Any, small_tasks: None
) -> None:
    local = grade(run.datasets_path, run.results_path, keep_text=True)
    dask = grade(
        run.datasets_path, run.results_path, engine="dask", client=dask_client, keep_text=True
    )
    assert dask.to_text() == local.to_text()
    assert dask.to_json() == local.to_json()
    assert list(dask.items) == list(local.items)
    for texts in ("responses", "response_lengths", "errors"):
        assert list(getattr(dask.items.texts, texts)) == list(getattr(local.items.texts, texts))
    assert dask.unparsable_files == local.unparsable_files
    assert dask.files_read == local.files_read > 1000


def test_the_dask_engine_on_a_bucket(
    tmp_path: Path, s3: Any, storage_options: dict[str, Any], dask_client: Any
) -> None:
    # Small: moto's server answers a few hundred requests a second.
    run = simulate_run(tmp_path / "sim", questions=12, datasets=2, vector_dim=8, seed=4)
    url = upload(s3, Path(run.root))
    local = grade(run.datasets_path, run.results_path)
    remote = grade(
        f"{url}/datasets.json",
        f"{url}/results",
        engine="dask",
        client=dask_client,
        storage_options=storage_options,
    )
    assert remote.to_text() == local.to_text()
    assert remote.to_json() == local.to_json()
    matches = find(
        r"Answer: [a-c]$", f"{url}/results", engine="dask", client=dask_client,
        storage_options=storage_options,
    )  # fmt: skip
    expected = find(r"Answer: [a-c]$", run.results_path)
    assert matches.total == expected.total > 0
    assert [m.path.rsplit("/results/", 1)[1] for m in matches] == [
        os.path.relpath(m.path, run.results_path) for m in expected
    ]


def test_find_on_the_dask_engine(run: SimulatedRun, dask_client: Any, small_tasks: None) -> None:
    for pattern in (r"Answer: [a-c]$", "(?i)^answer", "no such text"):
        local = find(pattern, run.results_path)
        dask = find(pattern, run.results_path, engine="dask", client=dask_client)
        assert dask.to_json() == local.to_json(), pattern
        assert [(m.path, m.response) for m in dask] == [(m.path, m.response) for m in local]


def test_the_command_line_with_a_scheduler_address(run: SimulatedRun, dask_client: Any) -> None:
    address = dask_client.scheduler.address
    for extra in ((), ("--format", "json")):
        common = ("stats", "-d", str(run.datasets_path), "-r", str(run.results_path), *extra)
        local = run_cli(*common)
        dask = run_cli(*common, "--engine", "dask", "--scheduler", address)
        assert dask.returncode == local.returncode == 0, dask.stderr
        assert dask.stdout == local.stdout
    found = run_cli("stats", "-r", str(run.results_path), "find", "--engine", "dask",
                    "--scheduler", address, "Answer: a")  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert found.stdout == run_cli("stats", "-r", str(run.results_path), "find", "Answer: a").stdout
    wrong = run_cli("stats", "-d", str(run.datasets_path), "--scheduler", address)
    assert wrong.returncode == 2
    assert "--scheduler needs --engine dask" in wrong.stderr
    with dask_config.set({"distributed.comm.timeouts.connect": "3s"}):
        gone = run_cli("stats", "-d", str(run.datasets_path), "-r", str(run.results_path),
                       "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")  # fmt: skip
    assert gone.returncode == 1
    assert gone.stderr.count("\n") == 1, gone.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in gone.stderr


def _hold_tasks(folder: str) -> Callable[[], int]:
    """A function for ``client.run``: from then on, each grading task on that worker says it
    started (a file named by the worker's pid) and waits until ``folder/release`` exists."""

    def patch() -> int:
        import kagreport.grading._chunk as chunk

        original = chunk.grade_chunk

        def held(*args: Any, **kwargs: Any) -> Any:
            Path(folder, f"started-{os.getpid()}").touch()
            deadline = time.monotonic() + 120
            while not Path(folder, "release").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            return original(*args, **kwargs)

        # Tasks name the function by module and name: the workers now load this one.
        chunk.grade_chunk = held
        return os.getpid()

    return patch


def test_a_worker_killed_mid_task_costs_a_retry_not_the_report(
    run: SimulatedRun, tmp_path: Path, small_tasks: None
) -> None:
    expected = grade(run.datasets_path, run.results_path)
    with local_cluster(2) as client, ThreadPoolExecutor(1) as pool:
        pids = client.run(_hold_tasks(str(tmp_path)))
        assert len(pids) == 2
        grading = pool.submit(
            grade, run.datasets_path, run.results_path, engine="dask", client=client
        )
        deadline = time.monotonic() + BOUND * 4
        while not (started := sorted(tmp_path.glob("started-*"))):
            assert time.monotonic() < deadline, "no grading task started"
            assert not grading.done(), grading.result()
            time.sleep(0.01)
        victim = int(started[0].name.split("-")[1])
        assert victim in pids.values()
        os.kill(victim, signal.SIGKILL)  # mid-task: the task is waiting for the release
        (tmp_path / "release").touch()
        report = grading.result(timeout=BOUND * 8)
    assert report.to_json() == expected.to_json()
    assert report.to_text() == expected.to_text()
    assert list(report.items) == list(expected.items)


def test_a_cluster_without_workers_is_an_error_not_a_wait(
    run: SimulatedRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_dask, "NO_WORKER_SECS", 0.5)
    with local_cluster(0) as client:
        started = time.monotonic()
        with pytest.raises(WorkerDiedError, match="no worker for 0 s"):
            grade(run.datasets_path, run.results_path, engine="dask", client=client)
        assert time.monotonic() - started < BOUND


def _start(run: SimulatedRun, out: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    stdout, stderr = out / "stdout", out / "stderr"
    command = [sys.executable, "-m", "kagreport", "stats", "-d", str(run.datasets_path),
               "-r", str(run.results_path), "--format", "json", "--engine", "dask"]  # fmt: skip
    with open(stdout, "wb") as o, open(stderr, "wb") as e:
        proc = subprocess.Popen(command, stdout=o, stderr=e, start_new_session=True)
    return proc, stdout, stderr


def _has_workers(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the command's LocalCluster has started its worker processes (or it ended)."""
    return len(children(proc.pid)) >= 2 or proc.poll() is not None


@pytest.mark.signals
@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [
        (signal.SIGINT, 130, "kagreport: interrupted"),
        (signal.SIGTERM, 143, "kagreport: terminated"),
    ],
)
def test_the_dask_command_stops_on_a_signal_at_any_moment(
    run: SimulatedRun, tmp_path: Path, signum: int, code: int, message: str
) -> None:
    # Moments: as the command starts, soon after, as its cluster starts (its first process,
    # multiprocessing's resource tracker, is started just before the cluster's), as soon as
    # its workers exist. The run cannot be over at the first three: the command must stop
    # (a stop that came while the cluster started was once lost to its ignored SIGINT, and
    # the command ran to the end). At the last it may be (a run takes about a second).
    moments: list[tuple[Callable[[subprocess.Popen[bytes]], None], bool]] = [
        (lambda proc: None, True),
        (lambda proc: time.sleep(0.1), True),
        (lambda proc: _wait(lambda: len(children(proc.pid)) >= 1), True),
        (lambda proc: _wait(lambda: _has_workers(proc)), False),
    ]
    stopped = 0
    for moment, must_stop in moments:
        proc, stdout, stderr = _start(run, tmp_path)
        wait_for_handlers(proc)
        moment(proc)
        sent = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
        try:
            returned = proc.wait(timeout=BOUND + 30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail("the command hung after the signal")
        took = time.monotonic() - sent
        err = stderr.read_text()
        assert "Traceback" not in err, err
        assert_group_gone(proc.pid)
        if returned == 0 and not must_stop:  # the report was out before the signal came
            assert stdout.read_text().endswith("}\n")
            continue
        stopped += 1
        assert returned == code, (returned, err)
        assert err.splitlines()[-1] == message, err
        assert stdout.read_bytes() == b""  # nothing half-written
        assert took < BOUND
    assert stopped >= 3


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND * 2
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


def test_a_killed_client_leaves_no_worker_behind(run: SimulatedRun, tmp_path: Path) -> None:
    # SIGKILL gives the command no chance to clean up: Dask's nannies watch their parent.
    proc, _, _ = _start(run, tmp_path)
    _wait(lambda: _has_workers(proc))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=BOUND)
    assert_group_gone(proc.pid)


@pytest.mark.parametrize(
    "address", ["garbage", "", "tcp://", "tcp://host:notaport", "tcp://[::1", "inproc://x",
                "tls://127.0.0.1:1", "file:///etc/passwd"],
)  # fmt: skip
def test_a_malformed_scheduler_address_is_one_line_at_once(run: SimulatedRun, address: str) -> None:
    started = time.monotonic()
    done = run_cli(
        "stats", "-d", run.datasets_path, "-r", run.results_path, "--engine", "dask",
        "--scheduler", address,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "not a Dask scheduler address" in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == ""
    assert time.monotonic() - started < BOUND


@pytest.mark.parametrize(
    "answer",
    [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n", None],
    ids=["silent", "http", "echo"],
)
def test_a_listener_that_is_not_a_scheduler_fails_within_the_connect_timeout(
    run: SimulatedRun, answer: bytes | None
) -> None:
    """Any TCP listener (a port held open, a web server) is one line within Dask's connect
    timeout (distributed.comm.timeouts.connect, 3 s here), never a wait. An echo server
    (``answer`` None) passes the handshake with the client's own: distributed.Client then
    failed an assertion (a traceback) and its __del__ held the exit for 6 s."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def echo(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := conn.recv(65536):
                conn.sendall(data)

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                held.append(conn)
                if answer is None:
                    threading.Thread(target=echo, args=(conn,), daemon=True).start()
                elif answer:
                    conn.sendall(answer)

    threading.Thread(target=accept, daemon=True).start()
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"}
    command = [
        sys.executable, "-m", "kagreport", "stats", "-d", str(run.datasets_path),
        "-r", str(run.results_path), "--engine", "dask", "--scheduler", address,
    ]  # fmt: skip
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=3 + BOUND * 2
        )
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert time.monotonic() - started < 3 + BOUND
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"kagreport: error: cannot reach the Dask scheduler at {address}: "
    )
    if answer is None:
        assert "it does not speak Dask's protocol" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""

"""The report does not depend on how many processes read the tree."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kagreport import ResultTreeError, find, grade
from kagreport.grading.engine import _pool
from kagreport.kag import simulate_run


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("parallel") / "sim"
    # 3 x 120 scorable question folders: more than PARALLEL_AFTER, so a pool is used.
    run = simulate_run(root, questions=120, datasets=3, seed=5, unparsable_files=7)
    assert _pool.PARALLEL_AFTER < 3 * 120
    return run


def test_workers_give_identical_reports(big_run) -> None:  # type: ignore[no-untyped-def]
    serial = grade(big_run.datasets_path, big_run.results_path, workers=1)
    pooled = grade(big_run.datasets_path, big_run.results_path, workers=2)
    assert pooled.to_json() == serial.to_json()
    assert pooled.to_text() == serial.to_text()
    assert pooled.unparsable_files == serial.unparsable_files
    assert len(serial.unparsable_files) == 7
    a, b = serial.items.to_columns(), pooled.items.to_columns()
    for name in a:
        if a[name].dtype == object:
            assert list(a[name]) == list(b[name]), name
        else:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _failing_open(victim: str) -> Any:
    """``os.open`` that refuses ``victim`` (forked workers inherit the patch; tests run as
    root, so chmod cannot make a file unreadable)."""
    real_open = os.open

    def failing_open(path: str, flags: int, *args: int) -> int:
        if os.fspath(path) == victim:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    return failing_open


def _alone(test: str) -> bool:
    """Run ``test`` of this file in a fresh interpreter if this one has other threads;
    True if it did (and it passed). With other threads alive the workers are forked from
    a fork server, which does not inherit this process's patches; and earlier tests of a
    whole run leave threads behind (tqdm's monitor, a stub server's request threads)."""
    import subprocess
    import sys
    import threading

    if threading.active_count() == 1:
        return False
    assert os.environ.get("KAGREPORT_FRESH_INTERPRETER") != "1", threading.enumerate()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{__file__}::{test}"],
        env={**os.environ, "KAGREPORT_FRESH_INTERPRETER": "1"},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return True


def test_a_threaded_caller_grades_with_workers_of_a_fork_server(
    big_run, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    # A Jupyter kernel, a Dask client or a followed view has other threads: forking from
    # it is unsafe, so the workers come from a fork server; the report is the same.
    import threading

    serial = grade(big_run.datasets_path, big_run.results_path, workers=1)
    caplog.set_level(logging.DEBUG, logger="kagreport.grading")
    reports: list[Any] = []
    thread = threading.Thread(
        target=lambda: reports.append(
            grade(big_run.datasets_path, big_run.results_path, workers=2, keep_text=True)
        )
    )
    thread.start()
    thread.join(timeout=300)
    assert reports, "the grade in a thread did not finish"
    assert "reading with 2 worker processes (forkserver)" in caplog.text
    assert reports[0].to_json() == serial.to_json()
    assert reports[0].unparsable_files == serial.unparsable_files
    assert list(reports[0].items) == list(serial.items)
    import multiprocessing

    # The pool's workers are gone; the server stays, idle, for the next grade.
    names = [p.name for p in multiprocessing.active_children()]
    assert not [n for n in names if "SpawnProcess" in n or "ForkProcess" in n], names


def test_a_threaded_script_without_a_main_guard_runs_once(big_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Workers of a fork server would import the caller's main module again (multiprocessing
    # does, for spawn and forkserver): an unguarded script would run in every worker.
    import subprocess
    import sys

    marker = tmp_path / "runs"
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import logging, sys, threading, time\n"
        "import kagreport\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)\n"
        f"print(kagreport.grade({str(big_run.datasets_path)!r}, {str(big_run.results_path)!r},"
        " workers=2).to_json(), end='')\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reading with 2 worker processes (forkserver)" in done.stderr
    assert "Traceback" not in done.stderr
    assert marker.read_text() == "ran\n"
    assert done.stdout == grade(big_run.datasets_path, big_run.results_path, workers=1).to_json()


@pytest.mark.signals
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_fork_server_workers_end_with_their_caller(big_run, tmp_path: Path, signum: int) -> None:  # type: ignore[no-untyped-def]
    # Only the caller is killed (not its group): its fork server and that server's workers
    # (whose parent is the server) must not outlive it.
    import subprocess
    import sys
    import time

    from processes import assert_group_gone

    script = tmp_path / "loop.py"
    script.write_text(
        "import logging, sys, threading, time\n"
        "import kagreport\n"
        "if __name__ == '__main__':\n"
        "    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"
        "    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)\n"
        "    while True:\n"
        f"        kagreport.grade({str(big_run.datasets_path)!r}, "
        f"{str(big_run.results_path)!r}, workers=2, keep_text=True)\n"
    )
    for delay in (0.0, 0.05, 0.15):  # after the workers start: mid-grade
        err = tmp_path / f"err-{delay}"
        with open(err, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, str(script)], stderr=stderr, start_new_session=True
            )
        try:
            deadline = time.monotonic() + 120
            while "worker processes (forkserver)" not in err.read_text():
                assert proc.poll() is None, err.read_text()[-3000:]
                assert time.monotonic() < deadline, "the workers never started"
                time.sleep(0.005)
            time.sleep(delay)
            os.kill(proc.pid, signum)
            proc.wait(timeout=60)
            assert_group_gone(proc.pid)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.usefixtures("python_reads")
def test_io_error_in_a_worker_is_reported(big_run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    if _alone("test_io_error_in_a_worker_is_reported"):
        return
    victim = os.path.join(big_run.results_path, "sim-biology", "q00100", "kag-large.json")
    assert Path(victim).is_file()
    failing_open = _failing_open(victim)
    # Forked workers inherit the patched function (tests run as root: chmod cannot do this).
    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(ResultTreeError, match=r"cannot read the result file .*Permission denied"):
        grade(big_run.datasets_path, big_run.results_path, workers=2)


def test_invalid_worker_count(big_run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="workers"):
        grade(big_run.datasets_path, big_run.results_path, workers=0)


def test_kept_texts_are_the_result_files_and_do_not_depend_on_workers(big_run) -> None:  # type: ignore[no-untyped-def]
    from kagreport.kag._records import read_result

    whole = grade(big_run.datasets_path, big_run.results_path, workers=1, keep_text=True)
    cut = grade(big_run.datasets_path, big_run.results_path, workers=2, keep_text=np.int64(7))
    plain = grade(big_run.datasets_path, big_run.results_path, workers=2)
    assert plain.items.texts is None
    assert whole.to_json() == cut.to_json() == plain.to_json()
    texts, short = whole.items.texts, cut.items.texts
    assert texts is not None
    assert short is not None
    assert (texts.limit, short.limit) == (None, 7)
    assert len(texts) == len(short) == len(whole.items) > 1000
    errors = 0
    for i, row in enumerate(whole.items):
        record = read_result(whole.items.path(row))  # read again, independently
        assert texts.responses[i] == record.result
        assert texts.errors[i] == record.error
        expected_length = -1 if record.result is None else len(record.result)
        assert texts.response_lengths[i] == short.response_lengths[i] == expected_length
        assert short.responses[i] == (None if record.result is None else record.result[:7])
        assert short.errors[i] == (None if record.error is None else record.error[:7])
        errors += record.error is not None
    assert errors > 0  # error records were among them


@pytest.mark.parametrize("keep_text", [0, -1, 1.5, "yes", None])
def test_invalid_keep_text(big_run, keep_text: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="`keep_text` must be a bool or a positive int"):
        grade(big_run.datasets_path, big_run.results_path, keep_text=keep_text)  # type: ignore[arg-type]


def _find_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.slow
@pytest.mark.usefixtures("python_reads")
def test_find_gives_identical_reports_and_warnings_whatever_the_workers(
    big_run, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from kagreport.grading import _find

    if _alone("test_find_gives_identical_reports_and_warnings_whatever_the_workers"):
        return
    results = big_run.results_path
    # One unreadable file (in a worker too: forked workers inherit the patch; tests run as
    # root, chmod cannot do this) and one FIFO (not a regular file), beside the 7 unparsable.
    victim = os.path.join(results, "sim-biology", "q00100", "kag-large.json")
    assert Path(victim).is_file()
    os.mkfifo(os.path.join(results, "sim-biology", "q00007", "fifo.json"))
    failing_open = _failing_open(victim)
    monkeypatch.setattr(os, "open", failing_open)
    try:
        caplog.set_level(logging.DEBUG, logger="kagreport.grading")
        serial = find(r"Answer: [a-d]$", results, workers=1)
        serial_warnings = _find_warnings(caplog)
        assert "worker processes" not in caplog.text
        caplog.clear()
        pooled = find(r"Answer: [a-d]$", results, workers=2)
        pooled_warnings = _find_warnings(caplog)
        # The pool really was used (a tree this size is above the threshold).
        assert serial.total > _find.FIND_PARALLEL_AFTER
        assert "large tree: reading with 2 worker processes" in caplog.text
    finally:
        os.remove(os.path.join(results, "sim-biology", "q00007", "fifo.json"))
    assert pooled == serial
    assert pooled.to_dict() == serial.to_dict()
    assert pooled.to_json() == serial.to_json()
    assert len(serial.matches) > 0
    # 7 unparsable + 1 unreadable + 1 FIFO, warned about in walk order both times.
    assert len(serial.skipped) == 9
    assert pooled_warnings == serial_warnings
    assert len(serial_warnings) == 9
    assert sum("Permission denied" in w for w in serial_warnings) == 1
    assert sum("not a regular file" in w for w in serial_warnings) == 1


def test_find_cli_output_is_the_serial_report(big_run) -> None:  # type: ignore[no-untyped-def]
    # The command line uses the pool on this tree (2 cores or more); its output must be the
    # serial search's, byte for byte, warnings in the same order.
    import subprocess
    import sys

    results = str(big_run.results_path)
    pattern = r"Answer: [a-d]$"
    serial = find(pattern, results, workers=1)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    text = subprocess.run(
        [sys.executable, "-m", "kagreport", "-v", "stats", "-r", results, "find", pattern],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    assert text.stdout == "".join(m.line + "\n" for m in serial)
    warned = [line for line in text.stderr.splitlines() if "failed to parse" in line]
    assert len(warned) == 7
    assert [w for p in serial.skipped for w in warned if p in w] == warned
    assert text.stderr.endswith("\n" + serial.summary + "\n")
    as_json = subprocess.run(
        [sys.executable, "-m", "kagreport", "stats", "-r", results, "find", "--format", "json",
         pattern],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    assert as_json.stdout == serial.to_json()


def test_find_invalid_worker_count(big_run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="workers"):
        find("x", big_run.results_path, workers=0)


def _count_paths(chunk: Any) -> int:
    return len(chunk.paths)


class _Chunk:
    def __init__(self, folders: int) -> None:
        self.paths = ["f"] * folders


def test_chunks_grow_while_much_is_left_and_the_last_ones_are_small() -> None:
    sizes: list[int] = []
    runner = _pool.ChunkRunner(1, "", lambda chunk, graded: sizes.append(graded), task=_count_paths)
    assert runner.chunk_folders == _pool.CHUNK_QUESTIONS  # nothing announced yet
    runner.expect(3000)
    runner.expect(2000)
    left = 5000
    while left:
        size = min(runner.chunk_folders, left)
        runner.submit(_Chunk(size))
        left -= size
    runner.finish()
    runner.close()
    assert sum(sizes) == 5000
    assert max(sizes) == _pool.LARGEST_CHUNK > _pool.CHUNK_QUESTIONS
    # The end waits for the last chunks: the last four per worker are the smallest size.
    assert all(size <= _pool.CHUNK_QUESTIONS for size in sizes[-4:])
    assert sizes == sorted(sizes, reverse=True)


def test_a_tree_announced_large_starts_the_pool_at_its_first_chunk() -> None:
    logger = logging.getLogger("kagreport.grading")
    records: list[logging.LogRecord] = []
    handler = logging.Handler(level=logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    runner = _pool.ChunkRunner(2, "", lambda chunk, graded: None, task=_count_paths)
    try:
        runner.expect(_pool.PARALLEL_AFTER + 1)
        runner.submit(_Chunk(1))
        started = [r for r in records if "worker processes" in r.getMessage()]
        runner.finish()
    finally:
        runner.close()
        logger.removeHandler(handler)
        logger.setLevel(level)
    if not _pool.sys.platform.startswith("linux"):
        pytest.skip("grading stays in one process off Linux")
    assert started, "the pool did not start at the first chunk"

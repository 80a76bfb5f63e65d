"""``kagreport stats --watch`` and ``--store`` as a process: the report printed again when a
running benchmark adds a file (written as kag writes it), a stop at any time leaves whole
reports only, and the store lets the next run read nothing again."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from kagreport import grade
from kagreport.kag import simulate_run
from processes import BOUND, assert_group_gone, wait_for_handlers

pytest.importorskip("pyarrow")


def _documents(text: str) -> list[dict[str, object]]:
    """The whole JSON documents of a stream of them (a partial last one is not returned)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        try:
            document, at = decoder.raw_decode(text, at)
        except ValueError:
            return found
        found.append(document)


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + BOUND * 2
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


@pytest.mark.signals
def test_watch_prints_a_new_report_when_a_file_arrives_and_stops_cleanly(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=6, datasets=2, vector_dim=8, seed=8)
    store, out, err = tmp_path / "store", tmp_path / "out", tmp_path / "err"
    command = [
        sys.executable, "-m", "kagreport", "stats", "-d", str(run.datasets_path),
        "-r", str(run.results_path), "--format", "json", "--watch", "0.05",
        "--store", str(store),
    ]  # fmt: skip
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(command, stdout=o, stderr=e, start_new_session=True)
    try:
        wait_for_handlers(proc)
        _until(lambda: len(_documents(out.read_text())) == 1, "the first report")
        assert _documents(out.read_text())[0] == json.loads(
            grade(run.datasets_path, run.results_path).to_json()
        )
        # The benchmark writes one more setup's result, as kag does.
        graded = sorted(grade(run.datasets_path, run.results_path).setups[0].per_dataset)[0]
        folder = sorted(Path(run.results_path, graded).iterdir())[0]
        tmp = folder / "late-setup.json.tmp"
        shutil.copyfile(sorted(folder.glob("*.json"))[0], tmp)
        os.replace(tmp, folder / "late-setup.json")
        _until(lambda: len(_documents(out.read_text())) == 2, "a second report")
        second = _documents(out.read_text())[1]
        assert second == json.loads(grade(run.datasets_path, run.results_path).to_json())
        assert "late-setup" in {s["setup"] for s in second["setups"]}  # type: ignore[index, union-attr]
        time.sleep(0.3)  # passes with nothing new print nothing
        assert len(_documents(out.read_text())) == 2
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        returned = proc.wait(timeout=BOUND + 30)
    assert returned == 130
    assert err.read_text().splitlines()[-1] == "kagreport: interrupted"
    assert "Traceback" not in err.read_text()
    assert_group_gone(proc.pid)
    text = out.read_text()
    assert text.endswith("}\n")
    assert len(_documents(text)) == 2
    # The store the watch kept: the next run reads nothing and prints the same report.
    again = run_cli(
        "-vv", "stats", "-d", run.datasets_path, "-r", run.results_path, "--format", "json",
        "--store", store,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "read 0 result files" in again.stderr
    assert json.loads(again.stdout) == _documents(text)[1]


def test_watch_refuses_a_bad_interval_in_one_line(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=2, datasets=1, vector_dim=8, seed=9)
    for value in ("0", "-1", "soon", "nan"):
        done = run_cli("stats", "-d", run.datasets_path, "-r", run.results_path, f"--watch={value}")
        assert done.returncode == 2, (value, done.stderr)
        assert "--watch" in done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout == ""


@pytest.mark.signals
def test_watch_waits_for_a_store_in_use_and_a_datasets_file_being_rewritten(
    tmp_path: Path,
) -> None:
    import fcntl

    run = simulate_run(tmp_path / "sim", questions=4, datasets=2, vector_dim=8, seed=10)
    truth = Path(run.datasets_path).read_bytes()
    store, out, err = tmp_path / "store", tmp_path / "out", tmp_path / "err"
    store.mkdir()
    command = [
        sys.executable, "-m", "kagreport", "stats", "-d", str(run.datasets_path),
        "-r", str(run.results_path), "--format", "json", "--watch", "0.05",
        "--store", str(store),
    ]  # fmt: skip
    # Another grade holds the store, as `kagreport stats --store` does while it writes.
    held = os.open(store / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(command, stdout=o, stderr=e, start_new_session=True)
    try:
        wait_for_handlers(proc)
        _until(lambda: "in use by another grade; waiting" in err.read_text(), "the wait said")
        time.sleep(0.3)
        assert proc.poll() is None, err.read_text()
        assert out.read_text() == ""
        assert err.read_text().count("in use by another grade") == 1  # said once
        os.close(held)  # the other grade ends
        _until(lambda: len(_documents(out.read_text())) == 1, "the report after the wait")
        # The datasets file is rewritten in place (an editor or a script): briefly invalid.
        Path(run.datasets_path).write_bytes(truth[: len(truth) // 2])
        _until(lambda: "reading it again" in err.read_text(), "the invalid file said")
        assert "not valid JSON" in err.read_text()
        assert proc.poll() is None, err.read_text()
        Path(run.datasets_path).write_bytes(truth)
        time.sleep(0.3)
        assert proc.poll() is None, err.read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        returned = proc.wait(timeout=BOUND + 30)
    assert returned == 130, err.read_text()
    assert "Traceback" not in err.read_text()
    assert_group_gone(proc.pid)
    assert len(_documents(out.read_text())) == 1  # the same report: not printed again


def test_watch_refuses_a_datasets_file_that_never_reads_well(tmp_path: Path) -> None:
    run = simulate_run(tmp_path / "sim", questions=2, datasets=1, vector_dim=8, seed=11)
    Path(run.datasets_path).write_text("{", encoding="utf-8")
    started = time.monotonic()
    done = run_cli("stats", "-d", run.datasets_path, "-r", run.results_path, "--watch", "0.05")
    assert done.returncode == 1, done.stderr
    assert time.monotonic() - started < 5 + BOUND
    last = done.stderr.splitlines()[-1]
    assert last.startswith("kagreport: error: the datasets file")
    assert "not valid JSON" in last
    assert "Traceback" not in done.stderr

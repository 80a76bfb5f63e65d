"""``kagreport gate`` stopped by Ctrl-C or SIGTERM at random moments: it exits at once with
130/143 and one line, leaves no process and no temporary file, and the output folder holds
the old four files or the new four, never a mix."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy
from processes import BOUND, assert_group_gone, wait_for_handlers

EXAMPLE = mmlu_pro_philosophy()
TREE = [str(EXAMPLE.results), "-d", str(EXAMPLE.datasets)]


def _verdicts(folder: Path) -> set[str]:
    """The verdict each of the four files states."""
    document = json.loads((folder / "gate.json").read_text(encoding="utf-8"))["verdict"]
    markdown = (folder / "gate.md").read_text(encoding="utf-8").splitlines()[0]
    badge = (folder / "badge.svg").read_text(encoding="utf-8")
    junit = (folder / "gate.xml").read_text(encoding="utf-8")
    return {
        document,
        next(v for v in ("pass", "fail", "inconclusive") if f"**{v}**" in markdown),
        next(v for v in ("pass", "fail", "inconclusive") if f">{v}<" in badge),
        "fail" if "<failure" in junit else "pass" if "<skipped" not in junit else "inconclusive",
    }


@pytest.mark.signals
def test_a_stopped_gate_leaves_the_old_set_or_the_new_one(tmp_path: Path) -> None:
    run = read_run(EXAMPLE.results, datasets=EXAMPLE.datasets)
    run.select(["llama-2-7b-hf"]).write(tmp_path / "weak.json")
    run.select(["gemini-1-5-pro-002"]).write(tmp_path / "best.json")
    old = tmp_path / "old"
    # The old set: a failing gate (the weakest system against the best).
    done = run_cli("gate", tmp_path / "weak.json", "--baseline", tmp_path / "best.json", "-o", old)
    assert done.returncode == 1, done.stderr
    assert _verdicts(old) == {"fail"}
    chooser = random.Random(29)
    stopped = 0
    for attempt in range(5):
        out = tmp_path / f"gate{attempt}"
        shutil.copytree(old, out)
        signum = chooser.choice([signal.SIGINT, signal.SIGTERM])
        # The new set: the tree against itself, a pass (graded from its 2,986 files first).
        process = subprocess.Popen(
            [sys.executable, "-m", "kagreport", "gate", TREE[0], "--baseline", *TREE,
             "-o", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            wait_for_handlers(process)
            time.sleep(chooser.uniform(0.0, 0.8))
            sent = time.monotonic()
            if process.poll() is None:
                os.killpg(process.pid, signum)
            _, err = process.communicate(timeout=BOUND)
            took = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert_group_gone(process.pid)
        assert "Traceback" not in err, err
        if process.returncode == 0:
            assert _verdicts(out) == {"pass"}, attempt  # it finished before the signal
        elif process.returncode == -signum:
            # The work was done, the handlers restored (cli._stop.restore_stop_handlers):
            # the signal took its default action as the process exited, silently.
            assert err == "", err
            assert _verdicts(out) == {"pass"}, attempt
        else:
            stopped += 1
            assert process.returncode == 128 + signum, (attempt, process.returncode, err)
            assert len(err.strip().splitlines()) == 1, err
            assert took < BOUND
            assert _verdicts(out) in ({"fail"}, {"pass"}), attempt
        assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in old.iterdir())
    assert stopped, "every gate ended before its signal: the test tested nothing"

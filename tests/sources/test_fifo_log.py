"""A FIFO among a folder's logs is refused in one line, not waited on (it has no writer)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "data" / "sources"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_an_inspect_log_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(DATA / "inspect" / "inspect-0.3.285", folder)
    os.mkfifo(folder / "zz.eval")
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "gate", str(folder), "--baseline", str(folder)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "zz.eval" in done.stderr
    assert "not a regular file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

"""What the repository holds: no file a running process leaves behind (issue 26, item 15:
a stray ``sil.pid`` was committed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Files a process or a run leaves behind, never source.
LEFT_BEHIND = (".pid", ".sock", ".pyc", ".pyo")


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def test_no_file_a_process_leaves_behind_is_tracked() -> None:
    stray = [name for name in _tracked() if name.endswith(LEFT_BEHIND)]
    assert stray == []


def test_pid_files_are_ignored() -> None:
    done = subprocess.run(
        ["git", "check-ignore", "-q", "some-server.pid"], cwd=ROOT, timeout=60, check=False
    )
    assert done.returncode == 0  # ignored

"""What ``make test`` installs, it says first; where it cannot install, the tests that need it
skip and say how to enable them (issue 26, item 14: apt-get ran without a word).

The system commands are stubs on a PATH of this test's own: ``apt-get`` records its arguments
in a file, ``id`` answers the uid asked for, so nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("sh", "make", "cat", "echo", "[", "test", "env")


def _path(tmp_path: Path, *, apt: bool, uid: int) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "id").chmod(0o755)
    if apt:
        log = tmp_path / "apt.log"
        (bin_dir / "apt-get").write_text(
            f'#!/bin/sh\necho "apt-get $*" >> {log}\necho "apt-get ran $*" >&2\n'
        )
        (bin_dir / "apt-get").chmod(0o755)
    return bin_dir


def _make(target: str, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("no make")
    return subprocess.run(
        [str(bin_dir / "make"), "-s", "-C", str(ROOT), target, "CHROMIUM=/nonexistent/chromium"],
        env={"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/tmp")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_it_says_what_it_installs_and_why_before_apt_get(tmp_path: Path) -> None:
    done = _make("chromium", _path(tmp_path, apt=True, uid=0))
    assert done.returncode == 0, done.stderr
    notice = done.stderr.index("make: installing Chromium")
    assert "for the browser tests" in done.stderr
    assert notice < done.stderr.index("apt-get ran update")
    assert (tmp_path / "apt.log").read_text().splitlines() == [
        "apt-get update -q",
        "apt-get install -y -q chromium",
    ]


@pytest.mark.parametrize("target", ["chromium", "tex"])
def test_without_apt_get_the_tests_skip_and_say_how_to_run_them(
    tmp_path: Path, target: str
) -> None:
    done = _make(target, _path(tmp_path, apt=False, uid=0))
    assert done.returncode == 0, done.stderr
    assert "will skip" in done.stderr
    assert "To run" in done.stderr


def test_without_root_nothing_is_installed(tmp_path: Path) -> None:
    done = _make("chromium", _path(tmp_path, apt=True, uid=1000))
    assert done.returncode == 0, done.stderr
    assert "needs root" in done.stderr
    assert "sudo apt-get install chromium" in done.stderr
    assert not (tmp_path / "apt.log").exists()

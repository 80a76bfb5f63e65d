"""The wheel: a few hundred files, and `kagreport demo` from it outside the repository.

The wheel is installed into a new virtual environment (no pip of its own, no system site
packages) outside the repository. Its core dependencies (msgspec, NumPy, ry) are not
installed from a registry, which would take minutes and need the network: a ``.pth`` file
puts a folder on its path that links only those distributions of the environment running
the tests, so neither the repository's kagreport nor any other package is importable there.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import run_process

REPO = Path(__file__).resolve().parents[1]
# What `kagreport demo` needs: the core dependencies of pyproject.toml, nothing else.
CORE = ("msgspec", "numpy", "ry")
MAX_FILES = 400


def _run(*command: str | os.PathLike[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [os.fspath(c) for c in command],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=300,
        **kwargs,  # type: ignore[call-overload]
    )
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done


def _build_wheel(out: Path) -> Path:
    # Without build isolation where hatchling is installed (the dev extra): offline, and
    # seconds faster than pip fetching the build backend into a fresh environment.
    flags = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", *flags, "-q", "-w", out, REPO)
    (wheel,) = out.glob("kagreport-*.whl")
    return wheel


def _link_core_dependencies(folder: Path) -> None:
    """Link the top-level files of the CORE distributions (packages, their .libs folders,
    their .dist-info) into ``folder``."""
    folder.mkdir()
    for name in CORE:
        distribution = importlib.metadata.distribution(name)
        base = Path(str(distribution.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in distribution.files or ()}
        for top in sorted(tops - {".."}):
            if (base / top).exists() and not (folder / top).exists():
                (folder / top).symlink_to(base / top)


@pytest.mark.slow
def test_the_wheel_is_lean_and_its_demo_runs_outside_the_repository(tmp_path: Path) -> None:
    assert not tmp_path.resolve().is_relative_to(REPO)
    wheel = _build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert len(names) <= MAX_FILES, f"{len(names)} files in the wheel"
    assert "kagreport/examples/mmlu-pro-philosophy/mmlu-pro-philosophy.tar.xz" in names
    assert "kagreport/examples/mmlu-pro-philosophy/README.md" in names
    assert not [n for n in names if "mmlu-pro-philosophy/results" in n]
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "notebooks/"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".tmp"))]

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    site = Path(
        _run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip()
    )
    _link_core_dependencies(tmp_path / "core")
    (site / "core-dependencies.pth").write_text(f"{tmp_path / 'core'}\n", encoding="utf-8")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-index", wheel)  # fmt: skip

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        PYTHONNOUSERSITE="1",
        KAGREPORT_CACHE=str(tmp_path / "cache"),
    )
    where = _run(
        python, "-c", "import kagreport, numpy; print(kagreport.__file__)", cwd=elsewhere, env=env
    )
    installed = Path(where.stdout.strip())
    assert installed.is_relative_to(venv), installed  # not the repository's kagreport

    demo = _run(venv / "bin" / "kagreport", "demo", cwd=elsewhere, env=env)
    repository = run_process("demo")
    assert repository.returncode == 0, repository.stderr
    assert demo.stdout == repository.stdout
    assert "Datasets: 1 | Scorable questions: 499 | Skipped files: 0" in demo.stdout
    assert "TIGER-AI-Lab/MMLU-Pro" in demo.stdout
    assert "gemini-1-5-pro-002             72.34" in demo.stdout
    (unpacked,) = (tmp_path / "cache" / "examples").iterdir()
    assert (unpacked / "README.md").is_file()

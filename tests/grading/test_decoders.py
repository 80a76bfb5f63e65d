"""``stats`` and ``stats find`` give the same bytes with the compiled scanner and without it.

``KAGREPORT_DECODER=python`` turns the scanner off (the fallback a machine without a C
compiler runs): the text and JSON reports, ``find``'s matches and every warning on stderr
must not change, on a simulated run with unparsable files, a FIFO, a symlink and files the
scanner declines (an escaped key, a 19-digit count) beside those it reads. Both pools run
(2 workers) so the workers' reads are compared too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_process
from kagreport.kag._simulate import write_simulated_run

pytestmark = pytest.mark.slow


def _run(env_decoder: str | None, *args: str | Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KAGREPORT_DECODER"}
    if env_decoder is not None:
        env["KAGREPORT_DECODER"] = env_decoder
    done = run_process(*args, env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    sim = write_simulated_run(tmp_path_factory.mktemp("sim") / "run", questions=150, seed=11)
    results = Path(sim.results_path)
    files = sorted(results.rglob("*.json"))
    # Declined by the scanner, read by Python: an escaped key, a count of 19 digits.
    text = files[0].read_text()
    files[0].write_text(text.replace('"result"', '"res\\u0075lt"', 1))
    text = files[1].read_text()
    if '"vertices": ' in text:
        head, tail = text.split('"vertices": ', 1)
        files[1].write_text(head + '"vertices": 1000000000000000000' + tail.lstrip("0123456789"))
    os.mkfifo(files[2].with_name("fifo.json"))
    files[3].with_name("link.json").symlink_to(files[3])
    return Path(sim.datasets_path), results


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "-v"),
        ("stats", "-v", "--format", "json"),
        ("stats", "-v", "--workers", "2"),
        ("stats", "find", r"^[A-D]$", "-v"),
        ("stats", "find", r"(?i)answer", "-v", "--workers", "2"),
    ],
    ids=["text", "json", "pool", "find", "find-pool"],
)
def test_the_python_decoder_gives_the_same_bytes(
    run: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    datasets, results = run
    where = ["-r", str(results)] if "find" in args else ["-d", str(datasets), "-r", str(results)]
    compiled = _run(None, *args, *where)
    python = _run("python", *args, *where)
    assert compiled == python
    assert compiled[0] in (0, 1), compiled[2]
    if "json" in args:
        assert json.loads(compiled[1])
    assert "failed to parse" in compiled[2] or "find" in args

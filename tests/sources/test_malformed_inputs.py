"""Malformed single-file inputs: each reader returns a Run or one one-line KagreportError naming the file.

Mutants of real fixtures (tests/data/sources/<tool>/): truncations and single-byte flips at
offsets drawn with a fixed seed, so every run tries the same inputs.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kagreport import KagreportError
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
CASES = [
    ("promptfoo", "promptfoo/results.json"),
    ("promptfoo", "promptfoo/two-prompts.jsonl"),
    ("openai-evals", "openai-evals/gpt-4.jsonl"),
    ("inspect", "inspect/log_read_sample.json"),
    ("inspect", "inspect/log_formats.eval"),
]


def _mutants(data: bytes, seed: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    out = [("empty", b"")]
    for at in sorted(rng.sample(range(1, len(data)), 12)):
        out.append((f"cut{at}", data[:at]))
    for at in sorted(rng.sample(range(len(data)), 12)):
        flipped = bytearray(data)
        flipped[at] ^= 1 << rng.randrange(8)
        out.append((f"flip{at}", bytes(flipped)))
    return out


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_mutant_is_run_or_one_line_error(tmp_path: Path, fmt: str, name: str) -> None:
    source = DATA / name
    faults = []
    for label, data in _mutants(source.read_bytes(), seed=13):
        path = tmp_path / label / source.name
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            read_run(path, format=fmt)
        except KagreportError as error:
            message = str(error)
            if "\n" in message or source.name not in message:
                faults.append(f"{label}: message {message!r}")
        except Exception as error:  # the test collects what escapes
            faults.append(f"{label}: {type(error).__name__}: {error}")
        shutil.rmtree(path.parent)
    assert faults == []


@pytest.mark.parametrize("fmt", ["openai-evals"])
def test_empty_folder_is_one_line_error(tmp_path: Path, fmt: str) -> None:
    with pytest.raises(KagreportError, match=r"no OpenAI evals record log") as caught:
        read_run(tmp_path, format=fmt)
    assert str(tmp_path) in str(caught.value)

"""Hostile files (issue 25): what a reader must read, or refuse in one line.

Fault 14: JSON Lines are split on "\\n" only, so a string holding a raw U+2028, U+2029 or
U+0085 (valid JSON: RFC 8259 escapes only U+0000-U+001F) reads.
Fault 12 (part): an infinity read from a log is written back (as null, like NaN: JSON has
no token for it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kagreport.runs import Run
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
SEPARATORS = ["\u2028", "\u2029", "\u0085"]


@pytest.mark.parametrize("separator", SEPARATORS, ids=["U+2028", "U+2029", "U+0085"])
@pytest.mark.parametrize(
    ("fmt", "name", "old"),
    [
        ("promptfoo", "promptfoo/two-prompts.jsonl", '"output": "4"'),
        ("openai-evals", "openai-evals/gpt-4.jsonl", '"expected": "4"'),
    ],
)
def test_jsonl_string_with_unicode_line_separator_reads(
    tmp_path: Path, fmt: str, name: str, old: str, separator: str
) -> None:
    source = DATA / name
    text = source.read_text(encoding="utf-8")
    assert old in text
    new = old[:-1] + f"a{separator}b" + '"'
    hostile = tmp_path / source.name
    hostile.write_text(text.replace(old, new, 1), encoding="utf-8")
    # The raw character is there, unescaped, and each line is still valid JSON.
    assert separator.encode("utf-8") in hostile.read_bytes()
    for line in hostile.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            json.loads(line)
    plain = read_run(source, format=fmt)
    run = read_run(hostile, format=fmt)
    assert len(run) == len(plain)
    texts = [*(run.responses or ()), *(run.references or ())]
    assert f"4a{separator}b" in texts


def test_infinity_read_from_an_inspect_log_is_written_back(tmp_path: Path) -> None:
    text = (DATA / "inspect" / "log_read_sample.json").read_text(encoding="utf-8")
    hostile = tmp_path / "log.json"
    hostile.write_text(
        re.sub(r'"total_time": [0-9.]+', '"total_time": Infinity', text, count=1),
        encoding="utf-8",
    )
    run = read_run(hostile, format="inspect")
    assert any(v == float("inf") for c in run.costs.values() for v in c.tolist())
    run.write(tmp_path / "run.json")  # JSON has no infinity: written as null
    back = Run.read(tmp_path / "run.json")
    assert back == run  # equality is on the JSON form (NaN and infinities as null)

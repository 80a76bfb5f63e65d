"""JSON Lines split at "\\n" only: U+2028, U+2029 and U+0085 may stand raw inside a JSON
string (valid JSON), and a reader that splits with str.splitlines() cut such a line in two
("not JSON: Input data was truncated")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kagreport import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
BREAKS = ("\u2028", "\u2029", "\u0085")


def _with_breaks(value: Any, seen: list[int], key: str = "") -> Any:
    """``value`` with a raw line-break character appended to every string of free text
    (one holding a space, or a chat message's content; never an identifier)."""
    if isinstance(value, dict):
        return {k: _with_breaks(v, seen, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_breaks(v, seen, key) for v in value]
    if isinstance(value, str) and (" " in value or key == "content"):
        seen.append(1)
        return value + BREAKS[len(seen) % len(BREAKS)]
    return value


def _rewrite(path: Path) -> None:
    seen: list[int] = []
    lines = [
        json.dumps(_with_breaks(json.loads(line), seen), ensure_ascii=False)
        for line in path.read_text(encoding="utf-8").split("\n")
        if line.strip()
    ]
    assert seen, path  # the file had free text to put the breaks in
    text = "\n".join(lines) + "\n"
    assert any(b in text for b in BREAKS)  # written raw, not escaped
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("fixture", "pattern"),
    [
        # The tools' own outputs (SOURCE.md beside each).
        ("promptfoo/real/results.jsonl", None),
        ("openai-evals/evals-3.0.1/records", "*.jsonl"),
        ("lm-eval/lm-eval-0.4.13/output", "*/samples_*.jsonl"),
    ],
)
def test_raw_unicode_line_breaks_inside_strings_read(
    tmp_path: Path, fixture: str, pattern: str | None
) -> None:
    source = DATA / fixture
    original = read_run(source)
    target = tmp_path / source.name
    if source.is_dir():
        shutil.copytree(source, target)
        files = sorted(target.glob(pattern or "*"))
    else:
        shutil.copy(source, target)
        files = [target]
    for file in files:
        _rewrite(file)
    run = read_run(target)
    assert run.systems == original.systems
    assert len(run) == len(original)
    texts = [t for column in (run.question_texts, run.responses, run.references) if column
             for t in column if t]  # fmt: skip
    assert any(b in t for t in texts for b in BREAKS)

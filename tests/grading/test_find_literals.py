"""``stats find`` against the real kag's recorded output: escapes, case flags, no literal.

The cases of ``tests/data/kag-find/literals.json`` (recorded from kag 0.2.0 by
``tests/data/kag-find/record.py``) are the classes a literal prefilter gets wrong when it
looks at raw bytes: a response that holds the literal only through JSON escapes
(``\\u0063annot``, ``\\/``, ``\\"``) must match; ``(?i)`` and classes match other bytes; a
pattern with no required literal (``^\\w+$``, ``.``) matches without one; the literal
outside the response (in the prompt, in an unknown field, in an error record) must not
match; and every file that does not parse is reported, with or without the literal (kag
warns about each one for every pattern, even ``zzz``), so no file can be left undecoded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kagreport import find

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "kag-find" / "literals.json"
RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kag-find")
    for name, text in RECORDED["files"].items():
        path = root / "results" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))  # raw: the escapes are in the bytes
    return root / "results"


@pytest.mark.parametrize("case", RECORDED["cases"], ids=[c["pattern"] for c in RECORDED["cases"]])
def test_find_matches_kag(case: dict[str, Any], results: Path) -> None:
    kag = json.loads(case["kag_stdout"])
    report = find(case["pattern"], results)

    def relative(path: str) -> str:
        return os.path.relpath(path, results.parent).replace(os.sep, "/")

    # kag prints its paths in file-system order, kagreport sorted.
    ours = report.to_dict()
    assert (ours["matches"], ours["total"]) == (kag["matches"], kag["total"])
    assert [relative(p) for p in ours["paths"]] == sorted(kag["paths"])
    assert sorted(relative(p) for p in report.skipped) == case["kag_warned"]


def test_fixture_covers_the_prefilter_classes() -> None:
    patterns = {c["pattern"] for c in RECORDED["cases"]}
    assert {"cannot", "(?i)CANNOT", r"^\w+$", "zzz"} <= patterns
    files = RECORDED["files"]
    assert "\\u0063annot" in files["ds/q1/escaped-u.json"]
    assert "cannot" not in files["ds/q1/escaped-all.json"]
    assert "cannot" not in files["ds/q2/broken-without.json"]

"""Result and datasets files kag refuses: a UTF-8 BOM, keys given twice; and reading a big file."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from conftest import S, Tree, mcq, run_cli, stats
from kagreport import DatasetsError, grade
from kagreport.kag import load_datasets
from kagreport.kag._records import decode_result, read_bytes, read_result

BOM = b"\xef\xbb\xbf"


def _ok(result: str = "B", **kwargs: Any) -> dict[str, Any]:
    return {"ok": {"result": result, "stats": stats(**kwargs)}}


def test_a_result_file_with_a_bom_is_unparsable_and_says_so(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("B"))
    path = tree.ok("ds", "q1", "bom", "B")
    Path(path).write_bytes(BOM + Path(path).read_bytes())
    tree.ok("ds", "q1", "fine", "B")
    report = grade(tree.datasets_path, tree.results)
    assert report.setup_names == ("fine",)
    assert report.unparsable_files == (str(path),)
    done = run_cli("stats", "-v", "-d", str(tree.datasets_path), "-r", str(tree.results))
    assert done.returncode == 0
    assert f"failed to parse result file {path}: the file starts with a UTF-8 BOM" in done.stderr
    with pytest.raises(ValueError, match="UTF-8 BOM"):
        decode_result("\ufeff" + json.dumps(_ok()))


def test_a_datasets_file_with_a_bom_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "datasets.json"
    path.write_bytes(BOM + json.dumps({"ds": {"q1": mcq("A")}}).encode())
    with pytest.raises(DatasetsError, match=r"datasets\.json starts with a UTF-8 BOM"):
        load_datasets(path)
    (tmp_path / "results").mkdir()
    done = run_cli("stats", "-d", str(path), "-r", str(tmp_path / "results"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"kagreport: error: the datasets file {path} starts with a UTF-8 BOM (byte order mark), "
        "which kag does not accept; save it as UTF-8 without a BOM"
    ]


# What kag's serde does with a key given twice (serde derive: `duplicate field`; externally
# tagged enums take one key; maps and ignored fields are not checked).
_RETRIEVAL = (1, 0, 3, 2, 7)


def _repeat(text: str, key: str, value: str, nth: int = 1) -> str:
    """Insert `"key": value,` before the nth occurrence of `"key":` (a key given twice)."""
    at = -1
    for _ in range(nth):
        at = text.index(f'"{key}":', at + 1)
    return text[:at] + f'"{key}": {value}, ' + text[at:]


@pytest.mark.parametrize(
    ("key", "value", "nth", "where"),
    [
        ("result", '"A"', 1, "duplicate field `result` in ok"),
        ("stats", "SAME", 1, "duplicate field `stats` in ok"),
        ("prompt", '"p: q"', 1, "duplicate field `prompt` in ok.stats"),
        ("retrieval", "null", 1, "duplicate field `retrieval` in ok.stats"),
        ("config", "SAME", 1, "duplicate field `config` in ok.stats"),
        ("provider", '"x"', 1, "duplicate field `provider` in ok.stats.config"),
        ("temperature", "1.0", 1, "duplicate field `temperature` in ok.stats.config"),
        ("tokens", "5", 1, "duplicate field `tokens` in ok.stats.config"),
        ("retriever", '"r"', 1, "duplicate field `retriever` in ok.stats.config.augmented_generation"),
        ("result", '"c"', 2, "duplicate field `result` in ok.stats.retrieval"),
        ("document", '"d"', 1, "duplicate field `document` in ok.stats.retrieval.stats.embedder.embedding"),
        ("vec", "[1.0]", 1, "duplicate field `vec` in ok.stats.retrieval.stats.embedder.embedding"),
        ("vertices", "1", 1, "duplicate field `vertices` in ok.stats.retrieval.stats.embedder.database.neo4j"),
        ("secs", "2", 1, "duplicate field `secs` in ok.stats.retrieval.stats.embedder.database.neo4j.time"),
        ("nanos", "2", 3, "duplicate field `nanos` in ok.stats.time"),
        ("embedder", "SAME", 1, "ok.stats.retrieval.stats must have exactly one key, not 2"),
        ("neo4j", "SAME", 1, "ok.stats.retrieval.stats.embedder.database must have exactly one key"),
        ("ok", "SAME", 1, "the envelope must have exactly one key, not 2 ('ok', 'ok')"),
    ],
)  # fmt: skip
def test_a_field_given_twice_is_refused_as_serde_does(
    key: str, value: str, nth: int, where: str
) -> None:
    record = _ok(prompt="Question: x\nAnswer:", retrieval=_RETRIEVAL)
    record["ok"]["stats"]["config"]["tokens"] = 10
    text = json.dumps(record)
    assert decode_result(text).result == "B"  # as written, it parses
    if value == "SAME":  # the object itself, twice (msgspec checks the first one too)
        stats_ = record["ok"]["stats"]
        embedder = stats_["retrieval"]["stats"]["embedder"]
        objects = {"ok": record["ok"], "stats": stats_, "config": stats_["config"],
                   "embedder": embedder, "neo4j": embedder["database"]["neo4j"]}  # fmt: skip
        value = json.dumps(objects[key])
    with pytest.raises(ValueError, match="^" + re.escape(where)):
        decode_result(_repeat(text, key, value, nth))


@pytest.mark.parametrize(
    "text",
    [
        '{"error": "a", "error": "b"}',
        # Spaces before the colon, and colons spelled as escapes: still found.
        json.dumps(_ok()).replace('"result": "B"', '"result" : "A", "result"\n:"B"'),
        json.dumps(_ok()).replace('"model": "m"', '"model": "\\u003a", "model": "\\u003a"'),
    ],
)
def test_repeated_keys_found_whatever_the_spelling(text: str) -> None:
    with pytest.raises(ValueError, match=r"duplicate field|exactly one key"):
        decode_result(text)


def test_what_serde_does_not_check_is_accepted() -> None:
    # Unknown (ignored) fields are never looked into, even repeated; their colons are many.
    text = json.dumps(_ok(retrieval=_RETRIEVAL)).replace(
        '"prompt":', '"x": {"a": 1, "a": {"b": 2, "b": 3}}, "x": "y:z", "prompt":'
    )
    assert decode_result(text).result == "B"
    # A repeated key inside a response, a prompt or the vector's place is only text.
    text = json.dumps(_ok('"result": "A", "result": "B"', prompt='{"a": 1, "a": 2}'))
    assert decode_result(text).result == '"result": "A", "result": "B"'


def test_kag_written_layouts_pass_the_quick_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import kagreport.kag._duplicate_keys as duplicate_keys

    def never(text: bytes) -> str | None:
        raise AssertionError("slow path taken")

    monkeypatch.setattr(duplicate_keys, "_repeated_key", never)
    for record in (_ok(), _ok("a: b", prompt="Q: x\nA:", retrieval=_RETRIEVAL), {"error": "e: f"}):
        for text in (json.dumps(record, separators=(",", ":")), json.dumps(record, indent=2)):
            decode_result(text.encode())


def test_duplicate_fields_in_the_datasets_file_are_refused(tmp_path: Path) -> None:
    entry = json.dumps(mcq("A"))
    cases = {
        "input": entry.replace('"input":', '"input": "x", "input":'),
        "output": entry.replace('"output":', '"output": null, "output":'),
        "type": entry.replace('"type":', '"type": "MCQ", "type":'),
        "options": entry.replace('"options":', '"options": {}, "options":'),
        "answer": entry.replace('"answer":', '"answer": "B", "answer":'),
    }
    for field, text in cases.items():
        path = tmp_path / f"{field}.json"
        path.write_text('{"ds": {"q1": %s}}' % text)  # noqa: UP031
        with pytest.raises(DatasetsError, match=f"ds/q1: duplicate field `{field}`"):
            load_datasets(path)
    # Maps keep the last value, as serde's BTreeMap does; unknown fields are not checked.
    path = tmp_path / "maps.json"
    first = (
        '{"input": "x", "output": {"type": "MCQ", "options": {"A": "a", "A": "b"}, "answer": "A"},'
        ' "z": 1, "z": 2}'
    )
    path.write_text(f'{{"ds": {{"q1": {first}, "q1": {entry}}}, "ds": {{"q2": {entry}}}}}')
    truth = load_datasets(path)
    assert [(d, q) for d, q, _ in truth] == [("ds", "q2")]


def test_reading_a_big_result_file_costs_about_its_size(tmp_path: Path) -> None:
    # About 40 MB, nearly all of it the embedding vector (kept raw, never copied).
    record = _ok(retrieval=_RETRIEVAL)
    vector = ",".join(["-0.012345678901234567"] * 1_900_000)
    text = json.dumps(record).replace('"vec": [0.25, -0.5, 0.001]', f'"vec": [{vector}]')
    path = tmp_path / "big.json"
    path.write_text(text)
    size = path.stat().st_size
    assert size > 40_000_000
    tracemalloc.start()
    try:
        record_read = read_result(path)
        _, peak = tracemalloc.get_traced_memory()
        assert len(read_bytes(str(path))) == size
    finally:
        tracemalloc.stop()
    assert record_read.result == "B"
    print(f"peak {peak / size:.3f} x the file's size")
    assert peak < 1.3 * size  # chunks joined cost 2x


def test_unrelated_minimal_record_still_parses() -> None:
    assert decode_result(json.dumps({"ok": {"result": "B", "stats": S}})).result == "B"

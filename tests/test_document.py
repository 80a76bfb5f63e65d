"""kagreport._document.Document: the one base of the versioned documents (issue #12 item 6),
and the stored documents older code wrote, which keep reading (tests/data/v1, item 9)."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kagreport import DocumentError, KagreportError
from kagreport._document import Document
from kagreport._format import MISSING
from kagreport.evaluation import (
    AnswerEvaluation,
    EvaluationComparison,
    ReportError,
    RetrievalEvaluation,
)
from kagreport.evaluation._read import read_report
from kagreport.runs import Run, leaderboard

V1 = Path(__file__).parent / "data" / "v1"


def _raw(name: str) -> Any:
    """A stored document as plain JSON (what the checks below compute from)."""
    return json.loads((V1 / name).read_text(encoding="utf-8"))


def _same(a: float, b: float | None) -> bool:
    return (math.isnan(a) and b is None) or a == b


class _Tally(Document):
    """A two-field document, enough to exercise the base."""

    SCHEMA: ClassVar[str] = "test.Tally"
    SCHEMA_VERSION: ClassVar[int] = 3

    def __init__(self, name: str, items: list[dict[str, Any]]) -> None:
        self.name, self.items = name, items

    def to_dict(self) -> dict[str, Any]:
        return {"schema": self.SCHEMA, "schema_version": 3, "name": self.name, "items": self.items}

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> _Tally:
        return cls(str(data["name"]), [dict(i) for i in data["items"]])


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".toml"])
def test_a_document_round_trips_with_nan_aware_equality(tmp_path: Path, suffix: str) -> None:
    tally = _Tally("t", [{"x": 1.5}, {"x": math.nan}])
    path = tmp_path / f"tally{suffix}"
    tally.write(path)
    back = _Tally.read(path)
    assert back == tally  # NaN equals NaN here
    assert back != _Tally("t", [{"x": 1.5}, {"x": 2.0}])
    assert tally.dumps(suffix[1:]) == path.read_text(encoding="utf-8")


def test_jsonl_writes_one_line_per_item() -> None:
    lines = _Tally("t", [{"x": 1}, {"x": 2}]).dumps("jsonl").splitlines()
    assert len(lines) == 3  # a header line, then the two items
    assert '"record": "header"' in lines[0]


def test_the_schema_and_its_version_are_checked() -> None:
    with pytest.raises(ValueError, match=r"not a test.Tally report \(schema 'other'\)"):
        _Tally.from_dict({"schema": "other", "schema_version": 3})
    with pytest.raises(ValueError, match="schema version True is not supported"):
        _Tally.from_dict({"schema": "test.Tally", "schema_version": True})
    with pytest.raises(ValueError, match="not a valid _Tally: KeyError"):
        _Tally.from_dict({"schema": "test.Tally", "schema_version": 3})


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "tally.toml"
    _Tally("old", []).write(path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="TOML"):
        _Tally("new", [{"x": [None]}]).write(path)  # TOML cannot hold None in a list
    assert path.read_bytes() == before


def test_the_documents_share_the_base() -> None:
    for kind in (AnswerEvaluation, RetrievalEvaluation, EvaluationComparison, Run):
        assert issubclass(kind, Document)
        for name in ("dumps", "write", "read", "from_dict", "__eq__"):
            owner = next(k for k in kind.__mro__ if name in vars(k))
            assert owner is Document, (kind, name)
    assert EvaluationComparison.ITEMS_KEY == "metrics"
    assert Run.WRITES == ("json",)


# ---------------------------------------------------------------- stored version-1 documents


@pytest.mark.parametrize("suffix", ["json", "jsonl", "yaml", "toml"])
def test_a_stored_answer_evaluation_reads_with_its_values(suffix: str) -> None:
    raw = _raw("answer-evaluation.json")
    report = AnswerEvaluation.read(V1 / f"answer-evaluation.{suffix}")
    assert [i.identifier for i in report.items] == [i["identifier"] for i in raw["items"]]
    assert report.n_items == 8
    for metric, stored in raw["metrics"].items():
        values = [i["scores"][metric] for i in raw["items"] if metric in i["scores"]]
        assert report.metrics[metric] == pytest.approx(statistics.fmean(values), abs=1e-15)
        assert report.metrics[metric] == stored
    assert report.metrics["ChatGPT-0301/CoT.swap_true"] == 0.5  # 4 of the 8 picks right
    assert dict(report.agreement) == raw["agreement"]
    for criterion, (low, high) in raw["agreement_intervals"].items():
        assert report.agreement_intervals[criterion] == (low, high)
    assert {k: list(v) for k, v in report.agreement_judges.items()} == raw["agreement_judges"]
    assert report.items[0].reference == raw["items"][0]["reference"]
    assert report.judges == raw["judges"]
    # Written again, it is the same text: nothing was lost or changed on the way.
    assert report.dumps(suffix) == (V1 / f"answer-evaluation.{suffix}").read_text("utf-8")


def _recall_and_rr(item: Mapping[str, Any], k: int) -> tuple[float, float]:
    # recall@k = |top-k ∩ R| / |R|; reciprocal rank of the first relevant id (0 if none).
    ranked = list(dict.fromkeys(item["retrieved"]))
    relevant = set(item["relevant"])
    first = next((r for r, doc in enumerate(ranked, start=1) if doc in relevant), None)
    return len(set(ranked[:k]) & relevant) / len(relevant), 0.0 if first is None else 1 / first


def test_a_stored_retrieval_evaluation_reads_with_its_values() -> None:
    raw = _raw("retrieval-evaluation.json")
    report = RetrievalEvaluation.read(V1 / "retrieval-evaluation.json")
    assert report.n_items == len(raw["items"]) == 8
    for item, stored in zip(report.items, raw["items"], strict=True):
        recall, rr = _recall_and_rr(stored, 5)
        assert item.scores["recall@5"] == pytest.approx(recall)
        assert item.scores["mrr"] == pytest.approx(rr)
        assert item.retrieved == tuple(stored["retrieved"])
    rrs = [_recall_and_rr(i, 5)[1] for i in raw["items"]]
    assert report.metrics["mrr"] == pytest.approx(statistics.fmean(rrs))
    assert report.dumps() == (V1 / "retrieval-evaluation.json").read_text("utf-8")


@pytest.mark.parametrize(
    "name", ["comparison-v2.json", "comparison-v2.jsonl", "comparison-v1.json"]
)
def test_stored_comparisons_read_with_their_values(name: str) -> None:
    raw = _raw(name.replace(".jsonl", ".json"))
    comparison = EvaluationComparison.read(V1 / name)
    assert (comparison.candidate, comparison.baseline, comparison.n_items) == ("lightrag", "vdb", 8)
    rows = {row["metric"]: row for row in raw["metrics"]}
    assert list(comparison.metrics) == sorted(rows)
    baseline = _raw("retrieval-evaluation.json")["items"]  # vdb's items, the baseline
    for metric, row in rows.items():
        got = comparison.metrics[metric]
        for field in ("candidate_mean", "baseline_mean", "mean_difference", "p_value"):
            assert _same(getattr(got, field), row[field]), (metric, field)
        assert _same(got.p_value_holm, row["p_value_holm"])
        assert (got.n_pairs, got.n_nonzero, got.exact) == (8, row["n_nonzero"], row["exact"])
        stored = [i["scores"][metric] for i in baseline if metric in i["scores"]]
        assert got.baseline_mean == pytest.approx(statistics.fmean(stored))
    if raw["schema_version"] == 2:
        assert comparison.family == tuple(raw["family"]) == ("mrr",)
        assert [m.method for m in comparison.metrics.values()] == [
            r["method"] for r in rows.values()
        ]
        if name.endswith(".json"):
            # Written again as version 3: the same document, with each row's variance
            # (unknown before version 3: null).
            again = json.loads(comparison.dumps())
            assert again.pop("schema_version") == 3
            assert all(row.pop("variance") is None for row in again["metrics"])
            original = json.loads((V1 / name).read_text("utf-8"))
            assert original.pop("schema_version") == 2
            assert again == original
    else:
        # Version 1: Holm ran over every metric, and an exact p was an enumerated one.
        holm = tuple(sorted(m for m, r in rows.items() if r["p_value_holm"] is not None))
        assert comparison.family == holm
        assert len(holm) == len(rows)
        for metric, row in rows.items():
            expected = "exact-enumeration" if row["exact"] else "monte-carlo"
            assert comparison.metrics[metric].method == expected
        assert comparison.to_dict()["schema_version"] == 3  # written again as version 3
    assert comparison == read_report(V1 / name)


def test_stored_runs_read_with_their_values() -> None:
    for name in ("run-kag.json", "run-retrieval.json"):
        raw = _raw(name)
        run = Run.read(V1 / name)
        assert run.systems == tuple(raw["systems"])
        assert run.system.tolist() == raw["system"]
        assert run.outcome.tolist() == raw["outcome"]
        for group in ("metrics", "costs"):
            for column, values in raw[group].items():
                got = getattr(run, group)[column].tolist()
                assert all(_same(a, b) for a, b in zip(got, values, strict=True)), column
        # Written again as version 2: every version-1 field as stored, the new texts absent,
        # the gold answers (the same for every system of an item) once per item.
        again = json.loads(run.dumps())
        assert again.pop("version") == 2
        for absent in ("explanations", "question_texts", "options"):
            assert again.pop(absent) is None
        items = again.pop("item_texts")
        stored = raw.get("references")
        if stored is None:
            assert items is None
        else:
            assert again.pop("references") is None
            pairs = list(zip(raw["dataset"], raw["question"], strict=True))
            first = list(dict.fromkeys(pairs))  # the items, by their first row
            assert list(zip(items["dataset"], items["question"], strict=True)) == first
            answer = dict(zip(pairs, stored, strict=True))
            assert items["references"] == [answer[item] for item in first]
            assert all(answer[pair] == ref for pair, ref in zip(pairs, stored, strict=True))
            raw = {k: v for k, v in raw.items() if k != "references"}
        assert again == {k: v for k, v in raw.items() if k != "version"}
        assert Run.loads(run.dumps()) == run
    raw = _raw("run-kag.json")
    for row in leaderboard(Run.read(V1 / "run-kag.json")):
        code = raw["systems"].index(row.system)
        mine = [
            c for s, c in zip(raw["system"], raw["metrics"]["correct"], strict=True) if s == code
        ]
        assert row.mean == statistics.fmean(mine)
    assert math.isnan(Run.read(V1 / "run-kag.json").costs["retrieval_secs"][0])  # null
    # vdb's mean reciprocal rank in the run is the one its own document holds.
    vdb = _raw("retrieval-evaluation.json")["metrics"]["mrr"]
    retrieval = Run.read(V1 / "run-retrieval.json")
    means = {row.system: row.mean for row in leaderboard(retrieval, "mrr")}
    assert means["vdb"] == pytest.approx(vdb)


# ---------------------------------------------------------------- a bad field is named by its path


def _bad_copy(tmp_path: Path, name: str, change: Any) -> Path:
    document = _raw(name)
    change(document)
    path = tmp_path / f"bad-{name}"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kind", "name", "change", "message"),
    [
        (
            AnswerEvaluation,
            "answer-evaluation.json",
            lambda d: d["items"][3]["scores"].__setitem__("GPT-4/CoT.swap_true", "x"),
            r'not a valid AnswerEvaluation: items\[3\]\.scores\["GPT-4/CoT\.swap_true"\]: '
            r'expected a number, got "x"',
        ),
        (
            AnswerEvaluation,
            "answer-evaluation.json",
            lambda d: d["items"][5].__setitem__("latency", -2),
            r"not a valid AnswerEvaluation: items\[5\]: latency must be finite and >= 0",
        ),
        (
            RetrievalEvaluation,
            "retrieval-evaluation.json",
            lambda d: d["items"][3]["scores"].__setitem__("recall@5", True),
            r"items\[3\]\.scores\.recall@5: expected a number, got true",
        ),
        (
            RetrievalEvaluation,
            "retrieval-evaluation.json",
            lambda d: d["items"][6].pop("identifier"),
            r"items\[6\]\.identifier: missing",
        ),
        (
            EvaluationComparison,
            "comparison-v2.json",
            lambda d: d["metrics"][2].__setitem__("n_pairs", -1),
            r"metrics\[2\]\.n_pairs: expected an integer >= 0, got -1",
        ),
        (
            EvaluationComparison,
            "comparison-v2.json",
            lambda d: d["judge_mismatch"].__setitem__("j", ["x"]),
            r'judge_mismatch\.j: expected an object, got \["x"\]',
        ),
        (
            Run,
            "run-kag.json",
            lambda d: d["metrics"]["correct"].__setitem__(4, "x"),
            r'not a valid Run: metrics\.correct\[4\]: expected a number or null, got "x"',
        ),
        (
            Run,
            "run-kag.json",
            lambda d: d["outcome"].__setitem__(7, 3),
            r"outcome\[7\]: expected an integer <= 2, got 3",
        ),
    ],
)
def test_a_bad_field_is_named_with_its_path_and_the_file(
    tmp_path: Path, kind: Any, name: str, change: Any, message: str
) -> None:
    path = _bad_copy(tmp_path, name, change)
    with pytest.raises(DocumentError, match=message) as caught:
        kind.read(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, KagreportError)
    assert "\n" not in str(caught.value)
    if kind is not Run:  # read_report says the same, naming the file
        with pytest.raises(ReportError, match=message):
            read_report(path)


def test_a_mapping_key_msgspec_leaves_unnamed_is_found_again() -> None:
    # msgspec names a mapping's entry "[...]": the path names the key at fault, not the first.
    document = _raw("answer-evaluation.json")
    document["usage"]["GPT-4/Metrics"]["output_tokens"] = 1.5
    with pytest.raises(DocumentError, match=r"usage\.GPT-4/Metrics\.output_tokens: .* got 1\.5"):
        AnswerEvaluation.from_dict(document)


# ---------------------------------------------------------------- the one missing mark


def test_the_views_use_the_one_missing_mark() -> None:
    pytest.importorskip("altair")
    from kagreport.charts._agreement import pairwise_agreement_data
    from kagreport.evaluation._text import render_comparison

    # GPT-4/CoT and GPT-4/Metrics pick right on all 8 items: no variation, alpha undefined.
    frame, _ = pairwise_agreement_data(
        AnswerEvaluation.read(V1 / "answer-evaluation.json"), "swap_false"
    )
    undefined = frame[~frame["defined"]]
    assert len(undefined) == 1
    assert set(undefined["label"]) == {MISSING}
    text = render_comparison(EvaluationComparison.read(V1 / "comparison-v2.json"))
    assert f"P_HOLM '{MISSING}': not among the metrics under test" in text
    assert f"{MISSING}*" not in text
    assert text.count(MISSING) > 1


def test_a_lone_surrogate_is_written_as_its_json_escape_and_reads_back() -> None:
    # A file name read with surrogateescape (LC_ALL=C) reaches a run's metadata: the
    # document must still encode as UTF-8 and read back as the same string.
    from kagreport._document import _json_text

    value = {"prefix": "\udcc3\udca9t\udcc3\udca9-", "line": "a\u2028b", "astral": "\U0001f600"}
    text = _json_text(value)
    text.encode("utf-8")  # no UnicodeEncodeError
    assert "\\udcc3\\udca9t" in text
    assert json.loads(text) == value

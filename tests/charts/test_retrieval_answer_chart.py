"""The retrieval-against-answer chart draws the table's numbers and renders offline."""

from __future__ import annotations

import math

import pytest

from kagreport.charts import retrieval_answer_chart, save_figure
from kagreport.charts._retrieval_answer import retrieval_answer_data
from kagreport.evaluation import retrieval_answer_table

# Setup "a": 8 paired items, hit-right 3, hit-wrong 2, miss-right 1, miss-wrong 2 (counted
# by eye); setup "b": 4 items, one per cell.
A = retrieval_answer_table([1, 1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 1, 0, 0])
B = retrieval_answer_table([1, 1, 0, 0], [1, 0, 1, 0])


def test_data_copies_the_tables() -> None:
    data = retrieval_answer_data({"a": A, "b": B})
    assert list(data["setup"]) == ["a"] * 4 + ["b"] * 4
    assert list(data["count"]) == [3, 2, 1, 2, 1, 1, 1, 1]
    assert list(data["n"]) == [8] * 4 + [4] * 4
    assert list(data["blame"][:4]) == ["", "generator", "", "retriever"]
    assert data["share"].iloc[1] == pytest.approx(2 / 8)
    cell = A.cell("hit", "wrong")
    assert (data["low"].iloc[1], data["high"].iloc[1]) == (cell.low, cell.high)


def test_chart_spec_inline_and_ordered() -> None:
    spec = retrieval_answer_chart({"a": A, "b": B}).to_dict()
    values = spec.get("datasets")
    rows = next(iter(values.values())) if values else spec["layer"][0]["data"]["values"]
    assert len(rows) == 8
    bar = spec["layer"][0]["encoding"]
    assert bar["y"]["sort"][1] == "hit, wrong (generator)"
    assert bar["yOffset"]["field"] == "setup"
    assert bar["x"]["field"] == "share"
    # one table: coloured by whose error, no offset
    single = retrieval_answer_chart(A).to_dict()
    assert "yOffset" not in single["layer"][0]["encoding"]
    assert single["layer"][0]["encoding"]["color"]["field"] == "blame"


def test_empty_table_draws_missing_not_zero() -> None:
    empty = retrieval_answer_table([], [])
    data = retrieval_answer_data(empty)
    assert all(math.isnan(v) for v in data["share"])
    spec = retrieval_answer_chart(empty).to_dict()
    dumped = str(spec)
    assert "nan" not in dumped.lower().replace("nano", "")


def test_renders_to_svg_offline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "retrieval-answer.svg"
    save_figure(retrieval_answer_chart({"a": A, "b": B}), out)
    svg = out.read_text("utf-8")
    assert "<svg" in svg
    assert "miss, wrong (retriever)" in svg


def _steps(node: object) -> list[object]:
    """Every discrete (``{"step": ...}``) height in a spec."""
    if isinstance(node, dict):
        found = [node["height"]] if isinstance(node.get("height"), dict) else []
        return found + [s for v in node.values() for s in _steps(v)]
    if isinstance(node, list):
        return [s for v in node for s in _steps(v)]
    return []


def test_no_discrete_height_beside_a_fit_autosize() -> None:
    """Vega-Lite drops a fit for a discrete height and says so in the browser's console
    ("Dropping fit-y because spec has discrete height", #26)."""
    from kagreport.charts._theme import fit_container

    for chart in (retrieval_answer_chart({"a": A, "b": B}), retrieval_answer_chart(A)):
        for spec in (chart.to_dict(), fit_container(chart)):
            autosize = spec.get("autosize") or spec.get("config", {}).get("autosize", {})
            kind = autosize.get("type", "") if isinstance(autosize, dict) else str(autosize)
            assert kind.startswith("fit")
            assert _steps(spec) == []

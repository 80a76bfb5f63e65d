"""The history chart draws ``runs.history``'s frame: links, marks, escaping of names."""

from __future__ import annotations

import re

import numpy as np
import pytest
import vl_convert as vlc

from kagreport import KagreportError
from kagreport.charts import history_chart
from kagreport.charts._export import paper_spec
from kagreport.charts._theme import fit_container
from kagreport.runs import Run, history

HOSTILE = '<img src=x onerror="alert(1)">\u202e'


def _run(systems: tuple[str, ...], rates: list[float], created: str | None, seed: int) -> Run:
    n = 120
    rng = np.random.default_rng(seed)
    values = np.concatenate([(rng.random(n) < r).astype(float) for r in rates])
    return Run(
        kind="answers",
        systems=systems,
        dataset_names=("d",),
        question_names=tuple(f"q{i}" for i in range(n)),
        system=np.repeat(np.arange(len(systems)), n).astype(np.int32),
        dataset=np.zeros(len(values), dtype=np.int32),
        question=np.tile(np.arange(n), len(systems)).astype(np.int32),
        outcome=np.where(values == 1.0, 0, 1).astype(np.int8),
        metrics={"correct": values},
        metadata={} if created is None else {"created": created},
    )


def _frame() -> object:
    systems = ("base", HOSTILE)
    return history(
        {
            "r1": _run(systems, [0.5, 0.2], "2026-01-01T00:00:00Z", 1),
            HOSTILE: _run(systems, [0.5, 0.9], "2026-01-02T00:00:00Z", 2),
            "r3": _run(systems, [0.5, 0.9], None, 3),
        },
        fallback_times={"r3": "2026-01-03T00:00:00Z"},
    )


def test_points_link_to_their_runs_and_significant_changes_are_marked() -> None:
    frame = _frame()
    spec = history_chart(frame, hrefs={"r1": "history/r1.html", "r3": "history/r3.html"}).to_dict()
    rows = spec["datasets"][next(iter(spec["datasets"]))] if "datasets" in spec else None
    if rows is None:
        rows = spec["layer"][0]["data"]["values"]
    links = {r["run"].split(" · ")[0]: r["href"] for r in rows}
    assert links["r1"] == "history/r1.html"
    assert links["r3"] == "history/r3.html"
    point = spec["layer"][2]
    assert point["encoding"]["href"]["field"] == "href"
    # The jump 20% -> 90% on 120 items is significant after Holm; the diamonds say so.
    marked = [r for r in rows if r["significant"]]
    assert marked
    assert all(r["system"] != "base" for r in marked)
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "Holm" in subtitle
    assert "each system's sequence of changes" in subtitle
    # The fallback time is said on the axis label.
    assert any("(file time)" in r["run"] for r in rows)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_hostile_names_are_drawn_safely() -> None:
    strings = _strings(history_chart(_frame()).to_dict())
    # The right-to-left override only inside an isolate (FSI ... PDI), never leaking into
    # the text beside it; the markup is data (Vega draws text; the site escapes its JSON).
    isolated = "\u2068" + HOSTILE + "\u2069"
    holding = [s for s in strings if "\u202e" in s]
    assert holding
    assert all(isolated in s for s in holding)
    assert not any(
        s.startswith("\u2068") and " · 2026" in s and s.endswith("\u2069") for s in strings
    )
    assert any(s.startswith(isolated + " · ") for s in strings)  # the run, on the axis


def test_a_metric_the_frame_lacks_is_refused() -> None:
    with pytest.raises(KagreportError, match="no row of metric 'nope'"):
        history_chart(_frame(), metric="nope")


def test_a_system_the_frame_lacks_is_named() -> None:
    frame = _frame()
    held = sorted(frame["system"].unique())
    with pytest.raises(KagreportError, match="holds no system 'nobody'") as caught:
        history_chart(frame, systems=[held[0], "nobody"])
    assert repr(held[0]) in str(caught.value)  # what it does hold, to choose from


def test_run_labels_are_whole_on_paper_and_on_a_screen() -> None:
    # A new user's history: runs made by `kagreport convert` (file times), named run-N.
    systems = ("kag-large",)
    frame = history(
        {
            "run-1": _run(systems, [0.8], "2026-12-06T05:11:42Z", 1),
            "run-2": _run(systems, [0.7], None, 2),
        },
        fallback_times={"run-2": "2026-12-07T09:30:00Z"},
    )
    chart = history_chart(frame)
    screen = fit_container(chart)
    screen["width"] = 1200  # the site's page
    for medium, spec in (("paper", paper_spec(chart)), ("screen", screen)):
        svg = vlc.vegalite_to_svg(spec)
        labels = [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg) if " · " in t]
        assert labels == ["run-1 · 2026-12-06", "run-2 · 2026-12-07 (file time)"], medium
    # The full time and where it comes from: in the tooltip.
    rows = chart.to_dict()["datasets"]
    times = [r["time_text"] for v in rows.values() for r in v]
    assert times == [
        "2026-12-06 05:11:42 UTC, recorded by the run's tool",
        "2026-12-07 09:30:00 UTC, file time: a file's modification time (the run records none)",
    ]


def test_simulated_runs_are_said() -> None:
    systems = ("base",)
    runs = {
        "measured": _run(systems, [0.5], "2026-01-01T00:00:00Z", 1),
        "sim-a": _run(systems, [0.6], "2026-01-02T00:00:00Z", 2),
    }
    frame = history(runs)
    plain = history_chart(frame).to_dict()["title"]
    assert "SIMULATED" not in str(plain)
    some = history_chart(frame, simulated=["sim-a"]).to_dict()["title"]
    assert not _first(some["text"]).startswith("SIMULATED")  # not every run is
    assert "SIMULATED data (no model was run): sim-a." in some["subtitle"]
    every = history_chart(frame, simulated=["sim-a", "measured"]).to_dict()["title"]
    assert _first(every["text"]).startswith("SIMULATED: ")


def _first(text: str | list[str]) -> str:
    """A title's first line (Vega-Lite: a string, or a list of lines)."""
    return text if isinstance(text, str) else text[0]

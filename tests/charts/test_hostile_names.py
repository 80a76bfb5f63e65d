"""Names that hold anything, in every chart (issue 27, items 6-8).

- A control character (NUL, ``\\x01``, ESC) in a name aborted the SVG export with a Rust
  panic (vl-convert measures text in an XML document, which cannot hold it), and U+2028 or
  U+2029 broke it too: every string of every chart's spec is printable, each such character
  drawn as its escape (``\\x01``).
- Two names of 100,000 characters made a site build take minutes: no string of a chart's
  spec grows with a name's length (a name is drawn to ``NAME_LIMIT`` characters).
- A right-to-left override (U+202E) in a name reversed the text after it in a title or a key:
  such a name is isolated (U+2068 ... U+2069), and vl-convert draws the title around it in
  its own order.

The expectations are the escapes and isolates written out by hand, and a title drawn by
vl-convert compared with the title a reader should see, drawn without any control.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from kagreport._format import NAME_LIMIT, printable
from kagreport.charts import (
    accuracy_cost_chart,
    agreement_chart,
    dataset_heatmap,
    forest_plot,
    latency_chart,
    outcomes_chart,
    retrieval_answer_chart,
)
from kagreport.charts._accuracy import accuracy_cost_data
from kagreport.evaluation import retrieval_answer_table
from kagreport.runs import Run, compare_setups

FSI, PDI, RLO = "\u2068", "\u2069", "\u202e"
LONG = 100_000
#: Hostile names: controls, separators, a lone surrogate, a noncharacter, an override, a
#: right-to-left name, and two names of 200,001 characters that share a start and an end.
NAMES = [
    "nul\x00one",
    "soh\x01esc\x1b[31m",
    "line\u2028para\u2029",
    "lone\ud800\ufffe",
    "ab" + RLO + "cd",
    "שלום-model",
    "x" * LONG + "1" + "y" * LONG,
    "x" * LONG + "2" + "y" * LONG,
]
DATASETS = ["ds\x00a", "ds" + RLO + "b"]
#: No string of a chart grows with the names: far below one long name's 100,000 characters
#: (a key line, a label expression holding every changed name as JSON, escaped).
STRING_BOUND = 8 * NAME_LIMIT * 6


def _run(systems: list[str], datasets: list[str]) -> Run:
    """A run of every system on four items of each dataset, with outcomes and costs."""
    k, per = len(systems), 4 * len(datasets)
    rng = np.random.default_rng(0)
    correct = rng.integers(0, 2, k * per).astype(float)
    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=tuple(datasets),
        question_names=tuple(f"q{i}" for i in range(4)),
        system=np.repeat(np.arange(k, dtype=np.int32), per),
        dataset=np.tile(np.repeat(np.arange(len(datasets), dtype=np.int32), 4), k),
        question=np.tile(np.arange(4, dtype=np.int32), k * len(datasets)),
        outcome=np.where(correct == 1, 0, 1).astype(np.int8),
        metrics={"correct": correct},
        costs={
            "generation_secs": rng.uniform(0.5, 2.0, k * per),
            "retrieval_secs": rng.uniform(0.1, 1.0, k * per),
        },
    )


def _strings(value: Any) -> Iterator[str]:
    """Every string of a spec, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _charts() -> dict[str, alt.TopLevelMixin]:
    run = _run(NAMES, DATASETS)
    pairs = compare_setups(run, "all-pairs", n_resamples=100)
    tables = {
        name: retrieval_answer_table([1, 1, 0, 0, 1], [1, 0, 1, 0, i % 2])
        for i, name in enumerate(NAMES)
    }
    # pandas (Arrow strings) holds no lone surrogate: a frame's names are text already.
    criteria = [n for n in NAMES if "\ud800" not in n]
    agreement = pd.DataFrame(
        {"criterion": criteria, "alpha": 0.5, "low": 0.4, "high": 0.6, "judges": 2}
    )
    return {
        "accuracy": accuracy_cost_chart(run, cost="generation"),
        "accuracy per dataset": accuracy_cost_chart(run, cost="retrieval", per_dataset=True),
        "outcomes": outcomes_chart(run, title="Outcomes of " + NAMES[1]),
        "heatmap": dataset_heatmap(run),
        "latency": latency_chart(run, "generation"),
        "forest of pairs": forest_plot(pairs, metric="correct"),
        "forest of one pair": forest_plot(pairs.comparisons[0]),
        "retrieval answer": retrieval_answer_chart(tables),
        "agreement": agreement_chart(agreement),
    }


CHARTS = _charts()


@pytest.mark.parametrize("name", list(CHARTS))
def test_every_string_of_a_chart_is_printable_and_short(name: str) -> None:
    strings = list(_strings(CHARTS[name].to_dict(validate=False)))
    unprintable = [s[:60] for s in strings if printable(s) != s]
    assert not unprintable, unprintable
    assert max(map(len, strings)) < STRING_BOUND


def test_names_are_drawn_with_their_escapes_and_isolates() -> None:
    data = accuracy_cost_data(_run(NAMES, DATASETS), cost="generation")
    # The long names: their start and end (66 + "…" + 33 of 100), told apart by a number
    # within the 100 (63 + "…" + 32 + " (2)").
    cut, second = "x" * 66 + "…" + "y" * 33, "x" * 63 + "…" + "y" * 32 + " (2)"
    assert set(data["setup"]) == {
        "nul\\x00one",
        "soh\\x01esc\\x1b[31m",
        "line\\u2028para\\u2029",
        "lone\\ud800\\ufffe",
        FSI + "ab" + RLO + "cd" + PDI,
        FSI + "שלום-model" + PDI,
        cut,
        second,
    }


def test_the_figures_export_and_show_the_escapes() -> None:
    """vl-convert draws every chart (no panic), and the escapes are in the figure's text."""
    texts = ""
    for name in ("accuracy", "outcomes", "heatmap", "forest of pairs"):
        texts += vlc.vegalite_to_svg(CHARTS[name].to_dict(validate=False))
    for shown in ("\\x00", "\\x01", "\\x1b", "\\u2028", "\\ud800"):
        assert shown in texts, shown
    for raw in ("\x00", "\x01", "\x1b", "\u2028", "\ufffe"):
        assert raw not in texts


def _title_png(text: str) -> bytes:
    spec = {
        "data": {"values": [{"x": 1}]},
        "mark": "point",
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
        "title": {"text": text, "font": "Liberation Sans"},
    }
    return bytes(vlc.vegalite_to_png(spec))


def test_an_override_in_a_name_reverses_only_the_name() -> None:
    """The heading of a comparison names both sides: "ab<RLO>cd − base" drew as
    "abesab − dc" (the override ran on to the end of the title); isolated, it draws as the
    name itself, then " − base" in its own order, exactly as the text "abdc − base"."""
    frame = pd.DataFrame(
        {
            "metric": ["accuracy"],
            "mean_difference": [0.1],
            "ci_low": [0.0],
            "ci_high": [0.2],
            "p_value_holm": [0.5],
            "n_pairs": [10],
            "candidate": ["ab" + RLO + "cd"],
            "baseline": ["base"],
        }
    )
    title = forest_plot(frame).to_dict(validate=False)["title"]["text"]
    assert title == FSI + "ab" + RLO + "cd" + PDI + " \u2212 base"
    assert _title_png(title) == _title_png("abdc \u2212 base")
    assert _title_png("ab" + RLO + "cd \u2212 base") != _title_png("abdc \u2212 base")

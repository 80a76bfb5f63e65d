"""Issue #26 item 9 (charts): in a static figure (SVG, PNG: no tooltip) a row, column or
legend label is never cut without the full name nearby. A long setup, metric, judge or
dataset name is drawn whole (on one line, or on two lines broken after a separator), or as
a number that the key in the subtitle ("Key: 1 name; 2 name") maps to the full name; on
paper and on a screen alike.

The names are real ones (HELM, Inspect and LLMBar systems and judges); the expectations
are the names themselves, never taken from the chart code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from kagreport.charts import (
    agreement_chart,
    dataset_heatmap,
    forest_plot,
    latency_chart,
    outcomes_chart,
    pairwise_agreement_chart,
    retrieval_answer_chart,
)
from kagreport.charts._export import paper_spec
from kagreport.charts._theme import fit_container
from kagreport.evaluation import retrieval_answer_table
from kagreport.examples import llmbar_natural
from kagreport.frames._tables import OVERALL

SVG = "{http://www.w3.org/2000/svg}"

#: Real system names: an lm-eval/kag setup, HELM and Inspect model names, and a long
#: provider path that fits no label column.
NAMES = [
    "meta-llama-3-1-70b-instruct",
    "azureai/Meta-Llama-3.1-405B-Instruct-jqf",
    "together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo-with-retrieval-2024-07-23",
    "gpt-4o",
]


def _texts(svg: str) -> list[str]:
    """Every <text> of the figure, its lines (tspans) joined: a label broken after a
    separator reads as the whole name again."""
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def _lines(svg: str) -> list[str]:
    """Every line of text: each tspan of a multi-line text, else the text."""
    found = []
    for t in ET.fromstring(svg).iter(f"{SVG}text"):
        spans = ["".join(s.itertext()) for s in t.iter(f"{SVG}tspan")]
        found += spans or ["".join(t.itertext())]
    return found


def _key(svg: str) -> dict[str, str]:
    """Number -> name from the key lines ("Key: 1 name; 2 name", continued on lines that
    start with a number; a name too long for a line ends it with a separator and goes on
    at the start of the next)."""
    key: dict[str, str] = {}
    started, last = False, ""
    for line in _lines(svg):
        if started and last and key[last][-1:] in "/-_:" and not re.match(r"\d+ ", line):
            key[last] += line  # the rest of a long name
            continue
        if line.startswith("Key: "):
            started, line = True, line.removeprefix("Key: ")
        elif not (started and re.match(r"\d+ ", line)):
            started, last = False, ""
            continue
        for entry in line.split("; "):
            number, _, name = entry.partition(" ")
            key[number], last = name, number
    return key


def _check(svg: str, names: list[str], what: str) -> None:
    """Each name is a whole label, or a label that is a number of the key naming it; and
    no text is cut."""
    texts, key = _texts(svg), _key(svg)
    assert not [t for t in _lines(svg) if t.endswith("…")], (what, _lines(svg))
    for name in names:
        whole = name in texts
        keyed = any(key.get(t) == name for t in texts if t.isdigit())
        assert whole or keyed, (what, name, texts, key)


def _media(chart: alt.TopLevelMixin) -> dict[str, str]:
    """The figure on paper (as exported) and on a wide screen (the site's page)."""
    screen = fit_container(chart)
    screen["width"] = 1200
    return {
        "paper": vlc.vegalite_to_svg(paper_spec(chart)),
        "screen": vlc.vegalite_to_svg(screen),
    }


def _stats(setups: list[str], datasets: list[str]) -> pd.DataFrame:
    """A stats-frame-like table: every setup on every dataset and overall."""
    rows = []
    for rank, setup in enumerate(setups, start=1):
        for dataset in [*datasets, OVERALL]:
            rows.append(
                {
                    "setup": setup,
                    "dataset": dataset,
                    "rank": rank,
                    "total": 10,
                    "correct": 6,
                    "incorrect": 3,
                    "errors": 1,
                    "accuracy": 0.6 - 0.1 * rank,
                }
            )
    return pd.DataFrame(rows)


def _charts() -> dict[str, tuple[alt.TopLevelMixin, list[str]]]:
    datasets = ["mmlu_pro_computer_science", "2wikimultihopqa_bridge_comparison_dev"]
    stats = _stats(NAMES, datasets)
    forest = pd.DataFrame(
        {
            "metric": NAMES,
            "mean_difference": [0.05, -0.02, 0.01, 0.0],
            "ci_low": [0.01, -0.06, -0.03, -0.04],
            "ci_high": [0.09, 0.02, 0.05, 0.04],
            "p_value": [0.01, 0.3, 0.6, 1.0],
            "p_value_holm": [0.04, 0.6, 0.6, 1.0],
            "n_pairs": [100] * 4,
        }
    )
    rng = np.random.default_rng(0)
    items = pd.DataFrame(
        {
            "setup": np.repeat(NAMES, 20),
            "generation_secs": rng.uniform(0.5, 3.0, 20 * len(NAMES)),
        }
    )
    tables = {
        name: retrieval_answer_table([1, 1, 0, 0, 1], [1, 0, 1, 0, i % 2])
        for i, name in enumerate(NAMES)
    }
    agreement = pd.DataFrame(
        {
            "criterion": ["faithfulness_to_retrieved_context_strict", "score"],
            "alpha": [0.7, 0.4],
            "low": [0.6, 0.2],
            "high": [0.8, 0.6],
            "judges": [3, 2],
        }
    )
    judges = [
        "GPT-4/Rating_Metrics_Reference",
        "GPT-4/Rating_Reference",
        "ChatGPT/Rating_NoRules",
        "ChatGPT/Rating",
    ]
    evaluation = llmbar_natural(agreement_resamples=0)
    return {
        "outcomes": (outcomes_chart(stats), NAMES),
        "heatmap": (dataset_heatmap(stats), NAMES + datasets),
        "forest": (forest_plot(forest), NAMES),
        "latency": (latency_chart(items, "generation"), NAMES),
        "retrieval_answer": (retrieval_answer_chart(tables), NAMES),
        "agreement": (
            agreement_chart(agreement),
            ["faithfulness_to_retrieved_context_strict (3 judges)"],
        ),
        "pairwise": (pairwise_agreement_chart(evaluation, "score_1", judges=judges), judges),
    }


CHARTS = _charts()


@pytest.mark.parametrize("name", list(CHARTS))
def test_no_label_is_cut_without_the_full_name(name: str) -> None:
    chart, names = CHARTS[name]
    for medium, svg in _media(chart).items():
        _check(svg, names, f"{name} on {medium}")


def test_a_name_that_fits_is_drawn_whole_on_one_line() -> None:
    """Short names are left as they are: no key, no break."""
    names = ["gpt-4o", "claude-3-5-sonnet", "meta-llama-3-1-70b-instruct"]
    svg = vlc.vegalite_to_svg(outcomes_chart(_stats(names, ["a"])).to_dict())
    assert not _key(svg)
    lines = _lines(svg)
    for setup in names:
        assert setup in lines, (setup, lines)


def test_a_broken_name_breaks_after_a_separator() -> None:
    """A name too long for one line is broken after "/", "-", "_" or a space, never inside
    a word, and keeps every character."""
    name = NAMES[1]
    svg = vlc.vegalite_to_svg(outcomes_chart(_stats([name], ["a"])).to_dict())
    spans = [
        ["".join(s.itertext()) for s in t.iter(f"{SVG}tspan")]
        for t in ET.fromstring(svg).iter(f"{SVG}text")
    ]
    (parts,) = [s for s in spans if "".join(s) == name]
    assert len(parts) == 2
    assert parts[0][-1] in "/-_ ", parts


def test_the_key_numbers_only_what_does_not_fit() -> None:
    svg = vlc.vegalite_to_svg(outcomes_chart(_stats(NAMES, ["a"])).to_dict())
    assert list(_key(svg).values()) == [NAMES[2]]

"""A cost that was not recorded is unknown ("—"), never 0 (issue 26, item 3): MMLU-Pro's
published outputs hold a time of 0 for every answer, and the leaderboard, the setup pages
and every flipped item's cost table showed 0.000 s beside a note that no setup recorded a
cost."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import flipped_items
from kagreport.runs._costs import recorded_columns


@pytest.fixture(scope="module")
def site(mmlu_site: Path) -> Path:
    return mmlu_site


def _text(page: Path) -> str:
    html = re.sub(r"<script.*?</script>", "", page.read_text("utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_example_records_no_time() -> None:
    example = mmlu_pro_philosophy()
    run = read_run(example.results, format="kag", datasets=example.datasets)
    assert not np.nan_to_num(run.costs["generation_secs"]).any()  # every file holds 0
    assert "generation_secs" not in recorded_columns(run)
    (first, *_) = flipped_items(run, run.systems[0], run.systems[1])
    assert first.candidate.costs["generation_secs"] is None
    assert first.baseline.costs["context_bytes"] is None


def test_no_page_shows_an_unrecorded_cost_as_zero(site: Path) -> None:
    pages = [site / "index.html", *sorted(site.glob("setups/*.html"))]
    pages += sorted(site.glob("comparisons/*.html"))
    assert len(pages) > 6
    for page in pages:
        text = _text(page)
        assert "0.000 s" not in text, page.name
        assert not re.search(r"Mean generation \(s\).*?\b0\.000\b", text), page.name
        assert "Generation (s) 0.000" not in text, page.name
        assert "Context length (bytes) 0" not in text, page.name
    assert "—" in _text(site / "index.html")

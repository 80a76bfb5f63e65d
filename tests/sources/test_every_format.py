"""Every format kagreport reads drives the same views: the leaderboard, a paired
comparison, ``kagreport convert`` and a site page (issue #13's "done when").

One fixture per format, read through the public entry points only. The numbers checked
here are computed in the test from the run's own per-item columns (each reader's test
checks those columns against its tool's own aggregates).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli
from kagreport import read_run
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run, compare_setups, leaderboard
from kagreport.site._slugs import slugify
from kagreport.sources._eee_write import write_eee
from kagreport.sources._registry import FORMATS, detect_format

DATA = Path(__file__).parent.parent / "data" / "sources"
PROMPTFOO = DATA / "promptfoo" / "real" / "results.json"

#: One fixture per format, made by the tool itself (SOURCE.md beside each).
FIXTURES = {
    "lm-eval": DATA / "lm-eval" / "lm-eval-0.4.13" / "output",
    "helm": DATA / "helm" / "real" / "tiny25",
    "promptfoo": PROMPTFOO,
    "openai-evals": DATA / "openai-evals" / "evals-3.0.1" / "records",
    "inspect": DATA / "inspect" / "inspect-0.3.285",
}


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fixtures, plus a kagreport.run document and an EEE folder written from promptfoo
    (EEE's own test data are kept out of this repository)."""
    folder = tmp_path_factory.mktemp("formats")
    run = read_run(PROMPTFOO)
    run.write(folder / "run.json")
    write_eee(run, folder / "eee")
    kag = mmlu_pro_philosophy().results
    return {**FIXTURES, "kagreport": folder / "run.json", "eee": folder / "eee", "kag": kag}


def _options(name: str) -> dict[str, Path]:
    """The read options of a format: a kag tree is read with its datasets file."""
    return {"datasets": mmlu_pro_philosophy().datasets} if name == "kag" else {}


def test_every_format_has_a_case() -> None:
    assert set(FORMATS) == {*FIXTURES, "kagreport", "eee", "kag"}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_run_of_every_format_drives_the_views(name: str, paths: dict[str, Path]) -> None:
    path = paths[name]
    if name != "kag":  # a kag tree is told apart by its datasets option
        assert detect_format(path).name == name
    run = read_run(path, **_options(name))
    assert read_run(path, format=name, **_options(name)) == run
    assert isinstance(run.metadata["convention"], str)  # how the tool's files were read
    assert len(run.systems) >= 2
    assert len(run) > 0
    metric = run.headline
    rows = leaderboard(run)
    assert {r.system for r in rows} == set(run.systems)
    for row in rows:
        values = run.metrics[metric][run.system == run.systems.index(row.system)]
        defined = values[~np.isnan(values)]
        assert row.n_defined == len(defined)
        if len(defined):
            assert row.mean == pytest.approx(math.fsum(defined) / len(defined), abs=1e-12)
        else:  # e.g. an Inspect log never scored
            assert math.isnan(row.mean)
    comparisons = compare_setups(run)
    assert len(comparisons.family) >= 1
    p_values = [c.p_values_family[metric] for c in comparisons]
    assert any(0.0 <= p <= 1.0 for p in p_values)  # some pair shares items
    assert all(math.isnan(p) or 0.0 <= p <= 1.0 for p in p_values)
    again = Run.loads(run.dumps())
    assert again == run


@pytest.mark.parametrize("name", sorted(set(FORMATS) - {"kag"}))  # kag: tests/site, tests/cli
def test_convert_and_a_site_page_of_every_format(
    name: str, paths: dict[str, Path], tmp_path: Path
) -> None:
    path = paths[name]
    out = tmp_path / "run.json"
    done = run_cli("convert", path, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"read {path} as {name}: ")
    written = Run.read(out)
    if written.metadata.get("created_from") == "file":
        # A folder whose tool records no time (HELM): convert keeps the folder's file
        # time, said to be one (docs/history.md); the rest is the run read.
        assert "created" not in read_run(path).metadata
        kept = {k: v for k, v in written.metadata.items() if k not in ("created", "created_from")}
        written = dataclasses.replace(written, metadata=kept)
    assert written == read_run(path)
    site = tmp_path / "site"
    done = run_cli("site", "build", "--run", path, "-o", site)
    assert done.returncode == 0, done.stderr
    pages = sorted((site / "setups").glob("*.html"))
    run = read_run(path)
    text = (site / "index.html").read_text(encoding="utf-8")
    for system in run.systems:
        assert f'data-system="{system}"' in text or slugify(system) in text
    assert len(pages) == len(run.systems)  # one page per system

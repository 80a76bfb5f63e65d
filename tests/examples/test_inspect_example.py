"""The bundled Inspect AI logs: unchanged copies of the fixtures, and their own aggregates."""

from __future__ import annotations

import filecmp
import json
import zipfile
from pathlib import Path

import pytest

import kagreport
from kagreport.examples import inspect_popularity
from kagreport.examples._attribution import INSPECT_ATTRIBUTION
from kagreport.runs import leaderboard

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "sources" / "inspect"


def test_the_bundled_logs_are_the_fixtures_unchanged() -> None:
    example = inspect_popularity()
    assert example.attribution == INSPECT_ATTRIBUTION
    for log in example.logs:
        assert filecmp.cmp(log, FIXTURES / log.name, shallow=False)
    readme = (example.logs[0].parent / "README.md").read_text(encoding="utf-8")
    assert "499e6152e7b8fc8cbd8ac5283536572aa6e4ab17" in readme
    assert "MIT" in readme


def test_the_leaderboard_gives_each_logs_own_accuracy() -> None:
    for log in inspect_popularity().logs:
        # The expected accuracy is the log's own aggregate, read from header.json.
        with zipfile.ZipFile(log) as archive:
            header = json.loads(archive.read("header.json"))
        (score,) = header["results"]["scores"]
        run = kagreport.read_run(log)
        (row,) = leaderboard(run, score["name"])
        assert row.mean == pytest.approx(score["metrics"]["accuracy"]["value"])


def test_the_example_reads_as_one_run_of_both_logs() -> None:
    # The docstring's own use: the example is path-like, the folder of its logs.
    run = kagreport.read_run(inspect_popularity())
    headers = []
    for log in inspect_popularity().logs:
        with zipfile.ZipFile(log) as archive:
            headers.append(json.loads(archive.read("header.json")))
    assert set(run.systems) == {h["eval"]["model"] for h in headers}
    # One row per sample (epochs reduced): the samples each log lists.
    assert len(run) == sum(len(h["eval"]["dataset"]["sample_ids"]) for h in headers)

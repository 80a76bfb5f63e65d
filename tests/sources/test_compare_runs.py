"""``kagreport compare`` on two runs (any format read_run reads), paired by item."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

import kagreport
from conftest import run_cli
from kagreport import KagreportError, UsageError
from kagreport.evaluation import NoSharedItemsError
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run, compare_setups
from kagreport.sources._compare import compare_files, join_runs


@pytest.fixture(scope="module")
def whole() -> Run:
    example = mmlu_pro_philosophy()
    return Run.from_stats(kagreport.grade(example.datasets, example.results))


@pytest.fixture(scope="module")
def files(whole: Run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    paths = {}
    for system in whole.systems:
        path = root / f"{system}.json"
        whole.select([system]).write(path)
        paths[system] = path
    whole.write(root / "whole.json")
    paths["whole"] = root / "whole.json"
    return paths


def test_two_runs_compare_as_the_pair_does_in_the_whole_run(
    whole: Run, files: dict[str, Path]
) -> None:
    candidate, baseline = whole.systems[1], whole.systems[0]
    got = compare_files(files[candidate], files[baseline])
    want = compare_setups(whole.select([candidate, baseline]), baseline=baseline)
    expected = want.comparisons[0].comparison.metrics["correct"]
    assert got.metrics["correct"].p_value == expected.p_value
    assert got.metrics["correct"].n_pairs == expected.n_pairs
    # Independently: the exact sign-flip p of 0/1 outcomes is the binomial test on the
    # discordant items (read from the two documents' own columns).
    by_item = {}
    for name in (candidate, baseline):
        doc = json.loads(files[name].read_text(encoding="utf-8"))
        for d, q, c in zip(doc["dataset"], doc["question"], doc["metrics"]["correct"], strict=True):
            key = (doc["dataset_names"][d], doc["question_names"][q])
            by_item.setdefault(key, {})[name] = c
    pairs = [(v[candidate], v[baseline]) for v in by_item.values() if len(v) == 2]
    wins = sum(1 for c, b in pairs if c > b)
    losses = sum(1 for c, b in pairs if c < b)
    assert got.metrics["correct"].n_pairs == len(pairs)
    p = binomtest(wins, wins + losses).pvalue
    assert got.metrics["correct"].p_value == pytest.approx(p, rel=1e-9)
    done = run_cli("compare", files[candidate], files[baseline], "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["metrics"]
    row = next(r for r in rows if r["metric"] == "correct")
    assert row["p_value"] == pytest.approx(p, rel=1e-9)


def test_bad_pairs_of_files_are_one_usage_error(whole: Run, files: dict[str, Path]) -> None:
    one = files[whole.systems[0]]
    with pytest.raises(UsageError, match="holds 6 systems"):
        compare_files(files["whole"], one)
    done = run_cli("compare", files["whole"], one)
    assert done.returncode == 2
    assert "compare needs one per file" in done.stderr.splitlines()[-1]


def test_join_runs_matches_items_by_name(whole: Run) -> None:
    a, b = whole.select([whole.systems[0]]), whole.select([whole.systems[1]])
    joined = join_runs([a, b])
    assert joined.systems == (whole.systems[0], whole.systems[1])
    assert len(joined) == len(a) + len(b)
    both = whole.select([whole.systems[0], whole.systems[1]])
    key = lambda r: sorted(  # noqa: E731
        (r.systems[s], r.dataset_names[d], r.question_names[q], float(m))
        for s, d, q, m in zip(r.system, r.dataset, r.question, r.metrics["correct"], strict=True)
    )
    assert key(joined) == key(both)

    # Every text column travels with its row (the kag run's texts from its files).
    def texts(r: Run, name: str) -> list[tuple[tuple[str, str], str]]:
        column = getattr(r, name)
        return sorted(
            ((r.systems[r.system[i]], r.item_label(i)), repr(column[i])) for i in range(len(r))
        )

    for name in ("question_texts", "options", "references", "responses", "errors"):
        assert texts(joined, name) == texts(both, name), name
    assert joined.explanations is None  # no run had any
    with pytest.raises(UsageError, match="repeat"):
        join_runs([a, a])


def test_runs_that_share_no_item_are_one_usage_error(
    whole: Run, files: dict[str, Path], tmp_path: Path
) -> None:
    one = files[whole.systems[0]]
    run = Run.read(files[whole.systems[1]])
    renamed = dataclasses.replace(run, question_names=tuple(f"x{q}" for q in run.question_names))
    other = tmp_path / "other.json"
    renamed.write(other)
    with pytest.raises(NoSharedItemsError, match="the runs share no item") as caught:
        compare_files(one, other)
    assert isinstance(caught.value, UsageError)
    assert isinstance(caught.value, KagreportError)
    for shared in ([], ["--shared"]):
        done = run_cli("compare", one, other, *shared)
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr == (
            f"kagreport: error: cannot compare {one} with {other}: the runs share no item "
            "(items are paired by dataset and question name)\n"
        )


def test_runs_whose_items_differ_are_refused_with_the_counts_or_compared_on_the_shared() -> None:
    """Issue 26, item 1: the two bundled Inspect logs hold 10 and 2 samples; compare said
    "2 paired items" and nothing of the 8 left out. Without --shared it now refuses, with
    the counts; with --shared every output counts the items of each side and those left out."""
    from kagreport.evaluation import DifferentItemsError
    from kagreport.examples import inspect_popularity

    ten, two = inspect_popularity().logs  # 10 samples, 2 samples (1 and 2 of the ten)
    assert len(kagreport.read_run(ten)) == 10
    assert len(kagreport.read_run(two)) == 2
    with pytest.raises(DifferentItemsError) as refused:
        compare_files(ten, two)
    assert (refused.value.only_candidate, refused.value.only_baseline) == (8, 0)
    assert "10 in the candidate, 8 of them only there" in str(refused.value)
    assert "2 in the baseline, 0 only there" in str(refused.value)
    comparison = compare_files(ten, two, shared_only=True)
    assert comparison.n_items == 2
    assert {k: v for k, v in comparison.metadata.items() if k.startswith("items_")} == {
        "items_in_candidate": 10,
        "items_in_baseline": 2,
        "items_only_in_candidate": 8,
        "items_only_in_baseline": 0,
    }
    done = run_cli("compare", ten, two)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "--shared" in done.stderr
    text = run_cli("compare", ten, two, "--shared")
    assert text.returncode == 0, text.stderr
    assert "left out (not in both): 8 only in openai/gpt-4o-mini (of 10 in" in text.stdout
    document = json.loads(run_cli("compare", ten, two, "--shared", "--format", "json").stdout)
    assert document["metadata"]["items_only_in_candidate"] == 8

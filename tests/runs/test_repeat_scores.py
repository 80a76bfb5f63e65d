"""Issue 25, fault 7: repeats (Inspect epochs, promptfoo ``repeat``) keep every repeat's
score, clustered by the item they repeat.

The expected scores are read here straight from the tools' own files (the ``.eval`` zip's
per-epoch sample entries, promptfoo's results.json), not through kagreport's readers.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from kagreport import read_run
from kagreport.runs import Run, repeat_scores

DATA = Path(__file__).parent.parent / "data" / "sources"
INSPECT = DATA / "inspect" / "inspect-0.3.285"
PROMPTFOO = DATA / "promptfoo" / "real"
# Inspect's value_to_float for the scores these logs hold.
TO_FLOAT = {"C": 1.0, "I": 0.0, "P": 0.5}


def _member(log: Path, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, zstd (method 93, as Inspect writes them) or deflate: read from
    its local header here, apart from kagreport's archive reader."""
    with open(log, "rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(30)
        skip = struct.unpack("<HH", header[26:30])
        handle.seek(info.header_offset + 30 + sum(skip))
        raw = handle.read(info.compress_size)
    if info.compress_type == 93:
        zstandard = pytest.importorskip("zstandard")
        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(raw))
    if info.compress_type == zipfile.ZIP_DEFLATED:
        return zlib.decompress(raw, -15)
    return raw


def _epochs_from_zip(log: Path, scorer: str) -> dict[str, list[float]]:
    """sample id -> the scorer's value in each epoch (NaN for an epoch without it)."""
    found: dict[str, dict[int, float]] = {}
    with zipfile.ZipFile(log) as archive:
        for info in archive.infolist():
            if not info.filename.startswith("samples/"):
                continue
            sample = json.loads(_member(log, info))
            score = (sample.get("scores") or {}).get(scorer)
            value = math.nan if score is None else score["value"]
            value = TO_FLOAT.get(value, value) if isinstance(value, str) else float(value)
            found.setdefault(str(sample["id"]), {})[sample["epoch"]] = value
    return {i: [by[e] for e in sorted(by)] for i, by in found.items()}


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("qa")
    for log in INSPECT.glob("*_tiny-qa_*.eval"):
        shutil.copy(log, folder)
    return read_run(folder)


@pytest.mark.parametrize("scorer", ["match", "includes"])
def test_every_epoch_of_a_real_log_is_kept_and_clustered_by_its_sample(
    qa: Run, scorer: str
) -> None:
    repeats = repeat_scores(qa, scorer)
    assert repeats.source == "epochs"
    # 7 samples x 3 epochs x 2 models; q7 errored in every epoch: three unscored repeats.
    assert len(repeats.values) == 42
    assert repeats.n_clusters == 14
    for log in INSPECT.glob("*_tiny-qa_*.eval"):
        model = "mockllm/alpha" if "BtyES3" in log.name else "mockllm/beta"
        expected = _epochs_from_zip(log, scorer)
        for sample_id, scores in expected.items():
            row = next(
                r
                for r in range(len(qa))
                if qa.systems[qa.system[r]] == model and qa.item_label(r) == f"tiny_qa/{sample_id}"
            )
            mine = repeats.values[repeats.cluster == row]
            np.testing.assert_array_equal(mine, scores)
            # The log reduces epochs by their mean: the row holds that mean.
            defined = [s for s in scores if not math.isnan(s)]
            if defined:
                assert qa.metrics[scorer][row] == pytest.approx(statistics.fmean(defined))


def test_epoch_scores_survive_the_run_document(qa: Run, tmp_path: Path) -> None:
    qa.write(tmp_path / "run.json")
    again = Run.read(tmp_path / "run.json")
    first, second = repeat_scores(qa), repeat_scores(again)
    np.testing.assert_array_equal(first.values, second.values)
    np.testing.assert_array_equal(first.cluster, second.cluster)


def test_promptfoo_repeats_are_rows_clustered_by_their_test() -> None:
    run = read_run(PROMPTFOO / "results.json")
    repeats = repeat_scores(run, "correct")
    assert repeats.source == "repeat_of"
    # results.json: every result's testIdx and testCase; repeats of a test share its vars.
    document = json.loads((PROMPTFOO / "results.json").read_text("utf-8"))
    tests: dict[int, str] = {}
    for result in document["results"]["results"]:
        tests[result["testIdx"]] = json.dumps(result["testCase"]["vars"], sort_keys=True)
    groups = {v: sorted(k for k, w in tests.items() if w == v) for v in tests.values()}
    assert repeats.n_clusters == len(run.systems) * len(groups)
    for row in range(len(run)):
        index = int(run.item_label(row).removeprefix("test "))
        first = min(next(g for g in groups.values() if index in g))
        assert run.item_label(int(repeats.cluster[row])) == f"test {first}"
        assert run.system[repeats.cluster[row]] == run.system[row]


def test_a_run_without_repeats_is_one_repeat_per_row(qa: Run) -> None:
    plain = Run.loads(qa.dumps().replace('"epoch_scores"', '"epoch_scores_"'))
    repeats = repeat_scores(plain)
    assert repeats.source == "none"
    assert repeats.n_clusters == len(plain)
    np.testing.assert_array_equal(repeats.values, plain.metrics["match"])


def test_item_means_have_the_same_digits_in_any_row_order() -> None:
    from kagreport.runs._repeats import item_means

    # One item repeated 3 times: 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 differ in the last bit.
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    means = []
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        values = np.array([0.1, 0.2, 0.3])[order]
        run = Run(
            kind="answers", systems=("s",), dataset_names=("",),
            question_names=("a", "b", "c"), system=np.zeros(3, dtype=np.int32),
            dataset=np.zeros(3, dtype=np.int32), question=np.array(order, dtype=np.int32),
            outcome=np.full(3, -1, dtype=np.int8), metrics={"score": values},
            metadata={"repeat_of": {"a": "a", "b": "a", "c": "a"}},
        )  # fmt: skip
        found = item_means(run, {"score": values})
        assert found is not None
        (first,) = np.flatnonzero(found[1])
        means.append(float(found[0]["score"][first]))
    assert len(set(means)) == 1
    assert means[0] == pytest.approx(0.2)

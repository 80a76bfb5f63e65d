"""kagreport.sources inspect: Inspect AI eval logs (.eval zips and .json, log format 2)."""

from __future__ import annotations

import json
import math
import shutil
import statistics
import struct
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kagreport
from kagreport import DocumentError, MissingExtraError
from kagreport.runs import Run, compare_setups, leaderboard
from kagreport.sources import read_run
from kagreport.sources._inspect import is_inspect, read_inspect
from kagreport.sources._registry import detect_format

DATA = Path(__file__).parent.parent / "data" / "sources" / "inspect"
POPULARITY = DATA / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
UNSCORED = DATA / "unscored" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
LOGS = sorted(p for p in DATA.iterdir() if p.suffix in (".eval", ".json"))


def _header(path: Path) -> dict[str, Any]:
    """The log's own header, read with the standard library (not kagreport)."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            header: dict[str, Any] = json.loads(archive.read("header.json"))
    else:
        header = json.loads(path.read_text("utf-8"))
    return header


@pytest.fixture(scope="module")
def run() -> Run:
    return read_run(DATA)


def test_a_folder_of_logs_is_one_system_per_log(run: Run) -> None:
    assert detect_format(DATA).name == "inspect"
    assert detect_format(POPULARITY).name == "inspect"
    assert detect_format(DATA / "log_read_sample.json").name == "inspect"
    models = tuple(_header(p)["eval"]["model"] for p in LOGS)
    assert run.systems == models
    assert run.dataset_names == ("popularity", "inspect_evals/mmlu_0_shot")
    assert len(run) == 10 + 1 + 1 + 2 + 1
    assert run.metadata["tool"] == "inspect_ai"


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_the_logs_own_accuracy_and_stderr_are_reproduced_from_the_samples(path: Path) -> None:
    (scored,) = _header(path)["results"]["scores"]
    one = read_inspect(path)
    values = one.metrics[scored["scorer"]]
    n = len(values)
    # inspect's accuracy is the mean; its stderr is stdev (n - 1) / sqrt(n), 0 when n < 2.
    accuracy = statistics.fmean(values)
    stderr = statistics.stdev(values) / math.sqrt(n) if n > 1 else 0.0
    assert accuracy == pytest.approx(scored["metrics"]["accuracy"]["value"], abs=1e-12)
    assert stderr == pytest.approx(scored["metrics"]["stderr"]["value"], abs=1e-12)
    if set(values) <= {0.0, 1.0}:
        assert np.array_equal(one.metrics["correct"], values)
        assert np.array_equal(one.outcome == 0, values == 1.0)
        assert np.array_equal(one.outcome == 1, values == 0.0)
    else:  # log_streaming: 2 epochs reduced by their mean, so partial credit
        assert "correct" not in one.metrics
        assert (one.outcome == -1).all()
    light = read_inspect(path, summaries_only=True)
    assert np.array_equal(light.metrics[scored["scorer"]], values)


def test_epochs_are_reduced_as_the_log_says_with_or_without_its_reductions(tmp_path: Path) -> None:
    log = DATA / "log_streaming.eval"
    run = read_inspect(log)
    assert run.question_names == ("1", "2")
    # The log's reductions.json: sample 1 0.5, sample 2 1.0 (mean of C/I and C/C).
    assert list(run.metrics["match"]) == [0.5, 1.0]
    epochs = run.metadata["systems"][run.systems[0]]["epochs"]
    assert epochs == {"epochs": 2, "reducer": "mean", "source": "the log's reductions"}
    # The same log without reductions.json: inspect's default reducer (mean) again.
    bare = tmp_path / "bare.eval"
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(bare, "w") as target:
        for name in source.namelist():
            if name != "reductions.json":
                target.writestr(name, source.read(name))
    again = read_inspect(bare)
    assert list(again.metrics["match"]) == [0.5, 1.0]
    assert again.metadata["systems"][again.systems[0]]["epochs"]["source"] == (
        "eval.config.epochs_reducer"
    )


def test_summaries_only_keeps_the_scores_but_not_the_texts() -> None:
    full = read_inspect(POPULARITY)
    light = read_inspect(POPULARITY, summaries_only=True)
    assert np.array_equal(light.metrics["correct"], full.metrics["correct"])
    assert np.array_equal(light.outcome, full.outcome)
    assert light.question_names == full.question_names
    assert light.responses is None
    assert full.responses is not None
    # sample 3 (a popularity statement the model answered "No" against " Yes"), per the log.
    row = full.question_names.index("3")
    # The target as Inspect's scorers compare it: stripped (the log holds " Yes").
    assert (full.responses[row], full.references and full.references[row]) == ("No", "Yes")
    assert full.metadata["systems"]["openai/gpt-4o-mini"]["answers"]["3"] == ["No", "No"]
    assert full.costs["input_tokens"].sum() == 620  # stats.model_usage input_tokens
    assert full.costs["output_tokens"].sum() == 20


def test_read_run_takes_the_summaries_only_option() -> None:
    # The public way to the same reading: read_run passes the inspect format its option.
    light = kagreport.read_run(POPULARITY, summaries_only=True)
    assert light.responses is None
    # sample 3 answered "No" against "Yes", per the log (as the full reading above).
    assert light.metrics["correct"][light.question_names.index("3")] == 0.0
    with pytest.raises(kagreport.UsageError, match="takes no option 'summaries_only'"):
        kagreport.read_run(POPULARITY, format="lm-eval", summaries_only=True)


def test_the_run_drives_the_views(run: Run, tmp_path: Path) -> None:
    popularity = run.dataset == run.dataset_names.index("popularity")
    board = {row.system: row for row in leaderboard(run)}
    assert board["openai/gpt-4o-mini"].mean == pytest.approx(0.8)  # results accuracy
    assert board["ollama/gemma3"].mean == 1.0
    assert board["ollama/llama3.1"].mean == 0.0
    # Two logs (a .eval and a .json) of popularity sample 1: llama3.1 wrong, gemma3 right.
    two = tmp_path / "two"
    two.mkdir()
    shutil.copy(DATA / "log_formats.eval", two)
    shutil.copy(DATA / "log_read_sample.json", two)
    (pair,) = compare_setups(read_run(two), baseline="ollama/llama3.1", n_resamples=200)
    assert pair.candidate == "ollama/gemma3"
    assert pair.flips == (("popularity/1", "correct", "incorrect"),)
    assert pair.only_candidate == pair.only_baseline == 0
    assert popularity.sum() == 14
    path = tmp_path / "run.json"
    run.write(path)
    assert Run.read(path) == run
    assert kagreport.read_run(DATA, format="inspect") == run


def test_two_logs_of_one_model_are_named_by_their_task_id(tmp_path: Path) -> None:
    shutil.copy(POPULARITY, tmp_path)
    shutil.copy(UNSCORED, tmp_path)
    both = read_run(tmp_path)
    assert both.systems == (
        "openai/gpt-4o-mini (dPiJifoWeEQBrfWsAopzWr)",
        "openai/gpt-4o-mini (mj7khqpMM4GBCfVQozKgzB)",
    )
    unscored = both.system == 0
    assert np.isnan(both.metrics["correct"][unscored]).all()
    assert (both.outcome[unscored] == -1).all()
    assert leaderboard(both)[0].mean == pytest.approx(0.8)


# Hand-made logs, shaped per inspect_ai/log/_log.py and _recorders/eval.py.


def _sample(sid: Any, value: Any, epoch: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "epoch": epoch,
        "input": "q",
        "target": "t",
        "scores": {"s": {"value": value, "answer": "a", "explanation": "e"}},
        **extra,
    }


def _header_dict(version: int = 2, **config: Any) -> dict[str, Any]:
    return {
        "version": version,
        "status": "success",
        "eval": {"task": "t", "task_id": "T1", "run_id": "R1", "model": "m", "config": config},
        "results": {"scores": []},
    }


def _write_eval(
    path: Path,
    samples: list[dict[str, Any]],
    header: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    # json.dumps writes NaN bare, as inspect's pydantic serialisation does.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for s in samples:
            archive.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        for name, value in (extra or {}).items():
            archive.writestr(name, json.dumps(value))
        archive.writestr("header.json", json.dumps(header or _header_dict()))
    return path


def test_another_log_version_is_one_line(tmp_path: Path) -> None:
    real = DATA / "other-version" / "log_message_deduplication.eval"
    with pytest.raises(DocumentError, match=r"\$\.version: inspect log format version 3, "):
        read_run(real)
    path = _write_eval(tmp_path / "old.eval", [_sample(1, "C")], _header_dict(version=1))
    with pytest.raises(DocumentError, match=r"old\.eval: \$\.version: .*version 1,") as info:
        read_run(path)
    assert "\n" not in str(info.value)
    json_log = tmp_path / "old.json"
    json_log.write_text(json.dumps({**_header_dict(version=3), "samples": []}), "utf-8")
    with pytest.raises(DocumentError, match=r"old\.json: \$\.version: .*version 3,"):
        read_run(json_log)


def test_a_truncated_zip_is_one_line(tmp_path: Path) -> None:
    cut = tmp_path / "cut.eval"
    cut.write_bytes(POPULARITY.read_bytes()[:5000])
    with pytest.raises(DocumentError, match=r"cut\.eval: not a readable \.eval zip") as info:
        read_run(cut)
    assert "\n" not in str(info.value)


def test_nan_scores_missing_usage_and_errors(tmp_path: Path) -> None:
    samples = [
        _sample(1, math.nan, model_usage={"a": {"input_tokens": 3, "output_tokens": 1}}),
        _sample(2, 1),
        _sample(3, 0, error={"message": "RuntimeError: boom", "traceback": ""}),
    ]
    run = read_run(_write_eval(tmp_path / "nan.eval", samples))
    values = run.metrics["s"]
    assert math.isnan(values[0])
    assert values[1] == 1.0
    assert values[2] == 0.0
    assert list(run.outcome) == [-1, 0, 2]
    assert run.errors == (None, None, "RuntimeError: boom")
    assert list(run.costs) == ["input_tokens", "output_tokens"]
    assert run.costs["input_tokens"][0] == 3
    assert np.isnan(run.costs["input_tokens"][1:]).all()
    as_json = tmp_path / "nan.json"
    as_json.write_text(json.dumps({**_header_dict(), "samples": samples}), "utf-8")
    assert "NaN" in as_json.read_text("utf-8")
    assert np.array_equal(read_run(as_json).metrics["s"], values, equal_nan=True)


def test_a_repeated_sample_and_epoch_is_one_line(tmp_path: Path) -> None:
    log = {**_header_dict(), "samples": [_sample(7, "C"), _sample(7, "I")]}
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(log), "utf-8")
    with pytest.raises(DocumentError, match=r"twice\.json: sample 7 epoch 1 appears twice"):
        read_run(path)


def test_value_to_float_partial_credit_and_dict_scores(tmp_path: Path) -> None:
    values = ["C", "I", "P", "N", "yes", "False", "0.25", True]
    samples = [_sample(i, v) for i, v in enumerate(values)]
    samples.append(
        {"id": 99, "epoch": 1, "target": "t", "scores": {"s": {"value": {"x": "C", "y": 2}}}}
    )
    run = read_run(_write_eval(tmp_path / "p.eval", samples))
    # inspect's value_to_float: C 1, I 0, P 0.5, N 0, yes 1, false 0, "0.25" 0.25, True 1.
    assert list(run.metrics["s"][:-1]) == [1.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.25, 1.0]
    assert run.metrics["s/x"][-1] == 1.0
    assert run.metrics["s/y"][-1] == 2.0
    assert "correct" not in run.metrics  # partial credit: the outcome stays unknown
    assert (run.outcome == -1).all()


def test_epochs_are_reduced_by_the_logs_reducer_or_its_reductions(tmp_path: Path) -> None:
    samples = [_sample(1, v, epoch=e) for e, v in enumerate(["C", "I", "C"], 1)]
    samples += [_sample(2, v, epoch=e) for e, v in enumerate(["I", "I", "C"], 1)]
    mean = read_run(_write_eval(tmp_path / "mean.eval", samples))
    assert list(mean.metrics["s"]) == [2 / 3, 1 / 3]
    assert mean.metadata["systems"]["m"]["epochs"]["reducer"] == "mean"
    assert len(mean) == 2
    header = _header_dict(epochs=3, epochs_reducer=["at_least_2"])
    at_least = read_run(_write_eval(tmp_path / "al.eval", samples, header))
    assert list(at_least.metrics["correct"]) == [1.0, 0.0]
    header = _header_dict(epochs=3, epochs_reducer=["pass_at_2"])
    # pass@2 of 3 attempts: 1 - C(3-c, 2)/C(3, 2) -> c=2: 1, c=1: 1 - 1/3.
    pass_at = read_run(_write_eval(tmp_path / "pa.eval", samples, header))
    assert pass_at.metrics["s"] == pytest.approx([1.0, 2 / 3])
    reductions = [
        {"scorer": "s", "reducer": "max", "samples": [{"value": 1.0, "sample_id": 1}]},
        {"scorer": "s", "reducer": "mean", "samples": [{"value": 0.0, "sample_id": 1}]},
    ]
    reduced = read_run(
        _write_eval(tmp_path / "r.eval", samples, extra={"reductions.json": reductions})
    )
    assert reduced.metrics["s"][0] == 1.0  # the log's first reduction of scorer s
    assert reduced.metadata["systems"]["m"]["epochs"]["source"] == "the log's reductions"


def test_chunked_summaries_are_read_in_order(tmp_path: Path) -> None:
    first = [_sample(1, "C")]
    second = [_sample(2, "I"), _sample(1, "I")]  # a later chunk supersedes sample 1
    extra = {"_journal/summaries/2.json": second, "_journal/summaries/1.json": first}
    path = _write_eval(tmp_path / "chunks.eval", [], extra=extra)
    run = read_inspect(path, summaries_only=True)
    assert run.question_names == ("1", "2")
    assert list(run.metrics["s"]) == [0.0, 0.0]


def _zip_with_zstd_entry(path: Path, name: str, data: bytes, stored: bytes) -> None:
    """A zip whose one entry uses method 93 (zstd), written by hand (APPNOTE 4.3)."""
    crc, raw = zlib.crc32(data), name.encode()
    sizes = (crc, len(stored), len(data), len(raw), 0)
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, 93, 0, 0, *sizes)
    central = struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, *sizes, 0, 0, 0, 0, 0)
    body = local + raw + stored
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(raw), len(body), 0)
    path.write_bytes(body + central + raw + end)


def test_a_zstd_entry_without_zstd_support_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes an import fail as if the module were not installed.
    monkeypatch.setitem(sys.modules, "compression.zstd", None)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    path = tmp_path / "z.eval"
    header = json.dumps(_header_dict()).encode()
    _zip_with_zstd_entry(path, "header.json", header, b"\x28\xb5\x2f\xfd")
    with pytest.raises(MissingExtraError, match=r"kagreport\[zstd\]"):
        read_run(path)


def test_a_zstd_compressed_entry_is_read(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard", reason="writing a zstd entry needs zstandard")
    header = json.dumps({**_header_dict(), "results": {"scores": []}}).encode()
    path = tmp_path / "z.eval"
    _zip_with_zstd_entry(path, "header.json", header, zstandard.ZstdCompressor().compress(header))
    run = read_run(path)
    assert run.systems == ("m",)
    assert len(run) == 0


def test_a_corrupt_entry_or_a_misshapen_field_is_one_line(tmp_path: Path) -> None:
    data = bytearray(POPULARITY.read_bytes())
    with zipfile.ZipFile(POPULARITY) as archive:
        info = archive.getinfo("header.json")
    data[info.header_offset + 30 + len("header.json") + 10] ^= 0xFF  # inside its deflate data
    bad = tmp_path / "bad.eval"
    bad.write_bytes(bytes(data))
    with pytest.raises(DocumentError, match=r"bad\.eval: header\.json: corrupt zip entry") as info_:
        read_run(bad)
    assert "\n" not in str(info_.value)
    sample = {**_sample(1, "C"), "epoch": "first"}
    path = _write_eval(tmp_path / "shape.eval", [sample])
    with pytest.raises(
        DocumentError, match=r"shape\.eval: samples/1_epoch_first\.json: .*\$\.epoch"
    ):
        read_run(path)


def test_detection_never_raises_and_passes_other_json(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"version": 1, "results": {}}', "utf-8")
    assert not is_inspect(other)
    assert not is_inspect(tmp_path / "missing.eval")
    assert is_inspect(DATA)
    assert not is_inspect(DATA / "SOURCE.md")


def test_total_cost_is_cost_usd_summed_over_models(tmp_path: Path) -> None:
    usage = {
        "a": {"input_tokens": 10, "output_tokens": 2, "total_cost": 0.25},
        "b": {"input_tokens": 5, "output_tokens": 1, "total_cost": 0.5},
    }
    run = read_run(
        _write_eval(tmp_path / "cost.eval", [_sample(1, "C", model_usage=usage, total_time=2.0)])
    )
    assert run.costs["cost_usd"][0] == 0.75
    assert run.costs["input_tokens"][0] == 15
    assert run.costs["output_tokens"][0] == 3
    assert run.costs["generation_secs"][0] == 2.0
    assert "working_secs" not in run.costs


# inspect-ai 0.3.285's own logs (inspect-0.3.285/SOURCE.md): epochs 3, scorers match,
# includes and a numeric one; multiple choice; an errored sample. Inspect's own headline
# (results.scores[0].metrics[0]; expected.txt).
REAL = Path(__file__).parent.parent / "data" / "sources" / "inspect" / "inspect-0.3.285"
HEADLINES = {
    "tiny-qa_BtyES3hnYdPwoV5J3Cq3PP": ("mockllm/alpha", "match", 0.7777777777777777),
    "tiny-mc_WZFQuP9WwCSf3VjD3ksd2o": ("mockllm/alpha", "choice", 0.8),
    "tiny-qa_cwrVdZ9DMvdr6bLa64ajWv": ("mockllm/beta", "match", 0.27777777777777773),
    "tiny-mc_XyrkUL2Y682c2Qb8nz4wb5": ("mockllm/beta", "choice", 0.2),
}


@pytest.mark.parametrize("log", sorted(HEADLINES))
def test_the_leaderboard_of_a_real_log_is_inspects_headline(log: str) -> None:
    """With no metric named, the leaderboard ranks by the log's headline metric (the first
    scorer's first metric, as Inspect shows it), epochs reduced as the log says and the
    errored sample left out: Inspect's own value. It failed before ("the run has no metric
    'correct'": a mean over epochs is not 0/1)."""
    (path,) = REAL.glob(f"*_{log}.eval")
    system, metric, value = HEADLINES[log]
    run = read_run(path)
    assert run.headline == metric
    (row,) = leaderboard(run)
    assert row.system == system
    assert row.mean == pytest.approx(value, abs=1e-15)


def test_every_view_defaults_to_the_logs_headline(tmp_path: Path) -> None:
    """With no metric named, the LaTeX table, the widgets, the paired tests and the site
    rank by the Inspect log's headline (``match``), not by ``correct``, which a
    mean-reduced log does not have (each of these failed before or picked another metric)."""
    from kagreport.frames import to_latex
    from kagreport.runs import compare_setups
    from kagreport.site._run import headline_metric
    from kagreport.widgets import ComparisonView, StatsView

    for log in REAL.glob("*_tiny-qa_*.eval"):
        shutil.copy(log, tmp_path)
    run = read_run(tmp_path)
    assert run.headline == "match"
    assert "correct" not in run.metrics
    latex = to_latex(run)
    # Inspect's own match accuracy of each model (expected.txt), as the table prints it.
    assert "0.778" in latex
    assert "0.278" in latex
    assert StatsView(run).metric.value == "match"
    assert ComparisonView(run).metric.value == "match"
    assert compare_setups(run).metrics == ("match",)
    assert headline_metric(run) == "match"

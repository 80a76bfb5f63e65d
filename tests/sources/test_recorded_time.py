"""The time each tool records for its run, normalised into ``metadata["created"]`` (ISO 8601,
UTC): checked against the value written in each real fixture, read here independently."""

from __future__ import annotations

import json
import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kagreport.runs import Run
from kagreport.runs._times import latest_time, recorded_time
from kagreport.sources import read_run
from kagreport.sources._eee_write import write_eee

DATA = Path(__file__).parents[1] / "data" / "sources"


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _created(run: Run) -> datetime:
    text = run.metadata["created"]
    assert isinstance(text, str)
    assert text.endswith("Z")
    return datetime.fromisoformat(text)


def _eval_created(log: Path) -> str:
    with zipfile.ZipFile(log) as archive:
        return str(json.loads(archive.read("header.json"))["eval"]["created"])


@pytest.mark.parametrize(
    "name",
    ["log_formats.eval", "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"],
)
def test_inspect_created_is_eval_created_in_utc(name: str) -> None:
    log = DATA / "inspect" / name
    stamp = _eval_created(log)
    assert stamp[-6:] in ("-04:00", "-05:00")  # an offset, converted to UTC
    assert _created(read_run(log)) == _utc(datetime.fromisoformat(stamp))


def test_inspect_several_logs_take_the_latest() -> None:
    # zstd-compressed logs (not readable by this Python's zipfile): Inspect names each log
    # after its eval.created, "2026-12-05T10-58-47-00-00_<task>_<id>.eval".
    folder = DATA / "inspect" / "inspect-0.3.285"
    stamps = []
    for log in folder.glob("*.eval"):
        day, clock = log.name.split("_")[0].split("T")
        hour, minute, second, zone_h, zone_m = clock.split("-")
        assert (zone_h, zone_m) == ("00", "00")
        stamps.append(datetime.fromisoformat(f"{day}T{hour}:{minute}:{second}+00:00"))
    assert len(stamps) == 4
    assert _created(read_run(folder)) == max(stamps)


def test_lmeval_created_is_its_results_date() -> None:
    folder = DATA / "lm-eval" / "lm-eval-0.4.13" / "output"
    dates = [json.loads(f.read_text())["date"] for f in folder.glob("*/results_*.json")]
    assert len(dates) == 3
    got = _created(read_run(folder))
    # lm-eval's date is Unix seconds; the run's time, to the microsecond, the latest of them.
    assert abs(got.timestamp() - max(dates)) < 1e-6


def test_promptfoo_created_is_results_timestamp_and_jsonl_has_none() -> None:
    path = DATA / "promptfoo" / "real" / "results.json"
    stamp = json.loads(path.read_text())["results"]["timestamp"]
    assert _created(read_run(path)) == datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    # promptfoo's JSONL output records no time: no key, never a guess.
    assert "created" not in read_run(DATA / "promptfoo" / "real" / "results.jsonl").metadata


def test_openai_evals_created_is_the_spec_created_at_in_utc() -> None:
    path = DATA / "openai-evals" / "real" / "self_prompting-oriprompt.log"
    spec = next(
        json.loads(line)["spec"] for line in path.read_text().splitlines() if '"spec"' in line
    )
    naive = datetime.fromisoformat(spec["created_at"])
    assert naive.tzinfo is None  # evals writes utcnow(): UTC without an offset
    assert _created(read_run(path)) == naive.replace(tzinfo=UTC)


def test_eee_created_is_the_evaluation_timestamp() -> None:
    folder = DATA / "eee" / "converted" / "inspect"
    stamps = [
        float(json.loads(f.read_text())["evaluation_timestamp"])
        for f in folder.rglob("*.json")
        if not f.name.endswith("_samples.jsonl")
    ]
    got = _created(read_run(folder))
    assert got.timestamp() == max(stamps)


def test_helm_records_no_time() -> None:
    assert "created" not in read_run(DATA / "helm" / "real" / "tiny25").metadata


def test_created_survives_the_run_document_and_eee(tmp_path: Path) -> None:
    run = read_run(DATA / "lm-eval" / "lm-eval-0.4.13" / "output")
    path = tmp_path / "run.json"
    run.write(path)
    assert Run.read(path).metadata["created"] == run.metadata["created"]
    written = write_eee(run, tmp_path / "eee", timestamp=0.0)
    assert read_run(written).metadata["created"] == run.metadata["created"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-02-11T15:18:04-05:00", "2025-02-11T20:18:04Z"),
        ("2026-12-05T10:58:23.158Z", "2026-12-05T10:58:23.158000Z"),
        ("2026-12-05 11:04:04.343020", "2026-12-05T11:04:04.343020Z"),
        (0, "1970-01-01T00:00:00Z"),
        ("1796469023", "2026-12-05T11:10:23Z"),  # date -u -d @1796469023
        ("", None),
        ("not a time", None),
        (True, None),
        (float("nan"), None),
        (1e20, None),
        (None, None),
    ],
)
def test_recorded_time_normalises_or_refuses(value: object, expected: str | None) -> None:
    assert recorded_time(value) == expected


def test_latest_time_skips_what_is_not_a_time() -> None:
    assert latest_time(["junk", "2020-01-01T00:00:00Z", 1.0]) == "2020-01-01T00:00:00Z"
    assert latest_time(["junk", None]) is None


def test_convert_stamps_a_kag_tree_with_its_file_time_stated_as_such(tmp_path: Path) -> None:
    # A kag tree records no time: the document keeps the tree's newest modification time
    # (set here with os.utime, read back independently), marked as a file time, so a
    # history orders it even after a checkout rewrote every file's time.
    import os

    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.runs import history
    from kagreport.sources import convert_run

    example = mmlu_pro_philosophy()
    tree = tmp_path / "results"
    shutil.copytree(example.results, tree)
    os.utime(tree, (1_796_469_023, 1_796_469_023))
    for entry in tree.iterdir():
        os.utime(entry, (1_700_000_000, 1_700_000_000))
    run = convert_run(tree, tmp_path / "run.json", datasets=example.datasets)
    kept = Run.read(tmp_path / "run.json").metadata
    assert kept["created"] == run.metadata["created"] == "2026-12-05T11:10:23Z"
    assert kept["created_from"] == "file"
    frame = history({"tree": Run.read(tmp_path / "run.json")})
    assert set(frame["time_source"]) == {"file"}
    # A tool's own time is kept as it is, and said to be recorded.
    inspect = tmp_path / "inspect.json"
    convert_run(DATA / "inspect" / "log_formats.eval", inspect)
    document = Run.read(inspect)
    assert "created_from" not in document.metadata
    assert set(history({"log": document})["time_source"]) == {"recorded"}

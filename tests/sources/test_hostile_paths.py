"""Faults an adversarial pass found after the bounded loading layer (issue 25): each input
ends in a Run or one line naming the file, never a traceback, an abort or a silent drop."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from kagreport import KagreportError, read_run
from kagreport.runs import repeat_scores

DATA = Path(__file__).parent.parent / "data" / "sources"
PROMPTFOO = DATA / "promptfoo" / "real" / "results.jsonl"


def _promptfoo_with(tmp_path: Path, name: str, **labels: str) -> Path:
    rows = [json.loads(line) for line in PROMPTFOO.read_text("utf-8").split("\n") if line]
    for row in rows:
        row["provider"]["label"] = labels.get(row["provider"]["label"], row["provider"]["label"])
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def test_a_symbolic_link_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    done = run_cli("convert", tmp_path / "a", "-o", tmp_path / "out.json")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr


def test_a_lone_surrogate_escape_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _promptfoo_with(tmp_path, "s.jsonl", echo="a\ud800b")  # json.dumps escapes it
    assert "\\ud800" in path.read_text("utf-8")
    with pytest.raises(KagreportError, match=r"s\.jsonl: line 1: .*lone UTF-16 surrogate"):
        read_run(path)


def test_control_characters_and_line_separators_in_names_build_a_site(tmp_path: Path) -> None:
    """A NUL aborted the SVG export (a Rust panic, exit 134, a temporary folder left);
    U+2028 stopped it in a Vega expression. Names are read with each shown as its escape
    (issue 27: visible, where U+FFFD lost what the character was)."""
    path = _promptfoo_with(tmp_path, "n.jsonl", echo="a\x00b", **{"mock-scripted": "c\u2028d"})
    assert read_run(path).systems == ("a\\x00b", "c\\u2028d")
    out = tmp_path / "site"
    done = run_cli("site", "build", "--run", path, "-o", out)
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_promptfoo_jsonl_with_a_long_first_response_is_detected(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in PROMPTFOO.read_text("utf-8").split("\n") if line]
    rows[0]["response"]["output"] = "x" * 5000  # pushes testIdx past the first 4 KiB
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    assert len(read_run(path)) == len(rows)


def test_an_empty_eval_log_in_a_folder_is_refused_not_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(DATA / "inspect" / "inspect-0.3.285", folder)
    first = sorted(folder.glob("*.eval"))[0]
    first.write_bytes(b"")
    with pytest.raises(KagreportError, match=first.name):
        read_run(folder)


def test_an_openai_evals_log_with_a_byte_order_mark_is_refused_not_skipped(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "records"
    shutil.copytree(DATA / "openai-evals" / "evals-3.0.1" / "records", folder)
    log = sorted(folder.glob("*.jsonl"))[0]
    log.write_bytes(b"\xef\xbb\xbf" + log.read_bytes())
    with pytest.raises(KagreportError, match=log.name):
        read_run(folder)


def test_a_samples_file_that_is_a_fifo_is_refused_not_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    shutil.copytree(DATA / "lm-eval" / "lm-eval-0.4.13" / "output" / "mock__dummy-seed0", folder)
    (samples,) = folder.glob("samples_tiny25_free_*.jsonl")
    samples.unlink()
    os.mkfifo(samples)
    with pytest.raises(KagreportError, match="not a regular file"):
        read_run(folder, format="lm-eval")


def test_a_helm_file_that_is_a_folder_is_refused_not_skipped(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DATA / "helm" / "real" / "tiny25", suite)
    stats = suite / "tiny25_mc:model=simple_model1" / "per_instance_stats.json"
    stats.unlink()
    stats.mkdir()
    with pytest.raises(KagreportError, match=r"per_instance_stats\.json: not a regular file"):
        read_run(suite, format="helm")


def test_a_run_document_with_a_short_column_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "run.json"
    read_run(PROMPTFOO).write(good)
    data = json.loads(good.read_text("utf-8"))
    data["question"] = data["question"][:-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), "utf-8")
    done = run_cli("convert", bad, "-o", tmp_path / "x.json")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr


def test_repeats_of_a_test_a_system_holds_only_in_part_are_one_cluster(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in PROMPTFOO.read_text("utf-8").split("\n") if line]
    kept = [r for r in rows if (r["provider"]["label"] == "echo") == (r["testIdx"] < 4)]
    path = tmp_path / "disjoint.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in kept), "utf-8")
    run = read_run(path)
    repeats = repeat_scores(run, "correct")
    assert len(repeats.values) == len(run)

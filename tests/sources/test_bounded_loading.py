"""The bounded loading layer (kagreport.sources._load) and wrong-typed fields (issue 25,
faults 11-13 as classes): every reader refuses a document over its size limit before
reading it, decompresses a zip entry a chunk at a time whatever its header says, and ends a
wrong-typed field in one DocumentError line naming the file and the key path."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from kagreport import DocumentError, KagreportError, UsageError
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
# The tools' own outputs (SOURCE.md beside each).
LM = DATA / "lm-eval" / "lm-eval-0.4.13" / "output" / "mock__dummy-seed0"
HELM_RUN = DATA / "helm" / "real" / "tiny25" / "tiny25_qa:model=simple_model1"
OPENAI_EVALS = DATA / "openai-evals" / "evals-3.0.1" / "records"
EEE_MC = DATA / "eee" / "converted" / "inspect" / "data" / "tiny_mc"


def _copy(source: Path, tmp: Path) -> Path:
    target = tmp / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    return target


# -- size of a plain document ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "source"),
    [
        ("promptfoo", DATA / "promptfoo" / "results.json"),
        ("promptfoo", DATA / "promptfoo" / "real" / "results.jsonl"),
        ("openai-evals", OPENAI_EVALS / "tiny25-match.tiny25-scripted.jsonl"),
        ("inspect", DATA / "inspect" / "log_read_sample.json"),
        ("lm-eval", LM),
        ("helm", HELM_RUN),
        ("eee", EEE_MC),
    ],
)
def test_a_document_over_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, source: Path
) -> None:
    """Every reader's JSON and JSON Lines files go through the one size limit (here the
    largest file the reader reads is one byte over it)."""
    copy = _copy(source, tmp_path)
    files = [copy] if copy.is_file() else [p for p in copy.rglob("*") if p.is_file()]
    target = max(files, key=lambda p: p.stat().st_size)
    size = target.stat().st_size
    assert len(read_run(copy, format=fmt)) > 0
    monkeypatch.setenv("KAGREPORT_MAX_DOCUMENT_BYTES", str(size - 1))
    with pytest.raises(DocumentError) as caught:
        read_run(copy, format=fmt)
    assert str(caught.value) == (
        f"{target}: {size:,} bytes, over the limit of {size - 1:,} "
        "(KAGREPORT_MAX_DOCUMENT_BYTES sets another)"
    )
    monkeypatch.setenv("KAGREPORT_MAX_DOCUMENT_BYTES", str(size))
    assert len(read_run(copy, format=fmt)) > 0
    for value in ("1 GB", "-1"):
        monkeypatch.setenv("KAGREPORT_MAX_DOCUMENT_BYTES", value)
        with pytest.raises(UsageError, match="KAGREPORT_MAX_DOCUMENT_BYTES must be a number of"):
            read_run(copy, format=fmt)


# Peak resident memory of the reading process (VmHWM: ru_maxrss would keep the high-water
# mark of the process that started it).
_READ = """
import sys, time
from kagreport import KagreportError, read_run
start = time.monotonic()
try:
    read_run(sys.argv[1], format=sys.argv[2])
    print("read")
except KagreportError as exc:
    print(exc)
print(time.monotonic() - start)
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))  # KiB
"""


def _read_in_child(path: Path, fmt: str) -> tuple[str, float, int]:
    """(message, seconds, peak resident MiB) of reading ``path`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(path), fmt], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    message, seconds, peak_kib = done.stdout.strip().split("\n")
    return message, float(seconds), int(peak_kib) // 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_document_over_a_gigabyte_is_refused_without_reading_it(tmp_path: Path) -> None:
    """A 1 GiB + 1 byte results.json (sparse: no disk used) was read whole before."""
    from kagreport.sources._load import DOCUMENT_LIMIT

    big = tmp_path / "results.json"
    with open(big, "wb") as handle:
        handle.truncate(DOCUMENT_LIMIT + 1)
    message, seconds, peak = _read_in_child(big, "promptfoo")
    assert message == (
        f"{big}: 1,073,741,825 bytes, over the limit of 1,073,741,824 "
        "(KAGREPORT_MAX_DOCUMENT_BYTES sets another)"
    )
    assert peak < 200
    assert seconds < 5
    print(f"refused in {seconds:.2f} s, peak {peak} MiB")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_named_as_a_log_does_not_block(tmp_path: Path) -> None:
    """A FIFO (no writer) in place of a JSON Lines file: reading it blocked forever."""
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    code = (
        "import sys\nfrom kagreport import KagreportError, read_run\n"
        "try:\n    read_run(sys.argv[1], format='promptfoo')\n"
        "except KagreportError as exc:\n    print(exc)\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        pytest.fail("reading a FIFO blocked")
    assert done.stdout == f"{fifo}: not a regular file\n", done.stderr


# -- zip entries whose header lies -----------------------------------------------------


def _zip_one_entry(path: Path, name: str, method: int, stored: bytes, size: int, crc: int) -> None:
    """A zip holding one entry written by hand (APPNOTE 4.3), whose header states ``size``
    bytes decompressed whatever ``stored`` decompresses to."""
    raw = name.encode()
    sizes = (crc, len(stored), size, len(raw), 0)
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, method, 0, 0, *sizes)
    central = struct.pack(
        "<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, method, 0, 0, *sizes, 0, 0, 0, 0, 0
    )
    body = local + raw + stored
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(raw), len(body), 0)
    path.write_bytes(body + central + raw + end)


def _deflated_zeros(size: int) -> bytes:
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    block = bytes(1 << 20)
    parts = [compressor.compress(block) for _ in range(size >> 20)]
    return b"".join([*parts, compressor.flush()])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_deflate_bomb_under_a_small_header_is_not_decompressed_whole(tmp_path: Path) -> None:
    """header.json states 1,000 bytes and deflates to 1 GiB: zipfile decompressed it whole
    (1 GiB resident) before cutting it at the stated size."""
    path = tmp_path / "bomb.eval"
    _zip_one_entry(path, "header.json", 8, _deflated_zeros(1 << 30), 1000, 0)
    message, seconds, peak = _read_in_child(path, "inspect")
    assert message.startswith(f"{path}: header.json: corrupt zip entry ("), message
    assert peak < 200
    print(f"refused in {seconds:.2f} s, peak {peak} MiB")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_one_zstd_frame_of_a_gigabyte_under_a_small_header_is_refused(tmp_path: Path) -> None:
    """One zstd frame decompressing to 1 GiB under a header stating 1,000 bytes was
    decompressed whole (frames were decompressed in one call each) before its size was
    checked."""
    zstandard = pytest.importorskip("zstandard")
    compressor = zstandard.ZstdCompressor(level=1).compressobj()
    block = bytes(1 << 20)
    frame = b"".join([*(compressor.compress(block) for _ in range(1024)), compressor.flush()])
    path = tmp_path / "bomb.eval"
    _zip_one_entry(path, "header.json", 93, frame, 1000, 0)
    message, seconds, peak = _read_in_child(path, "inspect")
    assert message == (
        f"{path}: header.json: corrupt zip entry (entry longer than its header states)"
    ), message
    assert peak < 200
    print(f"refused in {seconds:.2f} s, peak {peak} MiB")


def test_a_zstd_entry_cut_short_or_with_a_wrong_crc_is_one_line(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    data = json.dumps({"version": 2}).encode()
    stored = zstandard.ZstdCompressor().compress(data)
    cases = {
        "short.eval": (stored, len(data) + 5, zlib.crc32(data), "shorter than its header"),
        "crc.eval": (stored, len(data), zlib.crc32(data) ^ 1, "CRC check failed"),
        "cut.eval": (stored[:-4], len(data), zlib.crc32(data), "corrupt zip entry"),
    }
    for name, (body, size, crc, fragment) in cases.items():
        path = tmp_path / name
        _zip_one_entry(path, "header.json", 93, body, size, crc)
        with pytest.raises(DocumentError, match=fragment) as caught:
            read_run(path, format="inspect")
        assert str(caught.value).startswith(f"{path}: header.json: ")
        assert "\n" not in str(caught.value)


# -- wrong-typed fields ----------------------------------------------------------------


def _inspect_log(tmp: Path, samples: list[dict[str, Any]], **config: Any) -> Path:
    log = json.loads((DATA / "inspect" / "log_read_sample.json").read_text("utf-8"))
    log["eval"]["config"] = config
    log["samples"] = samples
    log.pop("reductions", None)
    path = tmp / "log.json"
    path.write_text(json.dumps(log), "utf-8")
    return path


def _sample(sid: Any, value: Any, epoch: int = 1) -> dict[str, Any]:
    return {
        "id": sid,
        "epoch": epoch,
        "input": "q",
        "target": "t",
        "scores": {"s": {"value": value}},
    }


def _one_line(fmt: str, path: Path, *fragments: str) -> None:
    with pytest.raises(KagreportError) as caught:
        read_run(path, format=fmt)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_an_inspect_reducer_that_is_a_number_is_one_line(tmp_path: Path) -> None:
    """epochs_reducer [5] ended in AttributeError: 'int' object has no attribute 'rpartition'."""
    samples = [_sample(1, "C", 1), _sample(1, "I", 2)]
    path = _inspect_log(tmp_path, samples, epochs=2, epochs_reducer=[5])
    _one_line("inspect", path, str(path), "$.eval.config.epochs_reducer[0]")


def test_the_mode_reducer_counts_nested_dict_scores(tmp_path: Path) -> None:
    """mode over nested dict scores ended in TypeError: unhashable type: 'dict'. A dict
    score is reduced per key (s/a) and inspect's value_to_float makes a dict 0, so the
    mode of {"b": 1}, {"b": 1}, "C" is 0."""
    inner = {"a": {"b": 1}}
    samples = [_sample(1, inner, 1), _sample(1, inner, 2), _sample(1, {"a": "C"}, 3)]
    path = _inspect_log(tmp_path, samples, epochs=3, epochs_reducer=["mode"])
    run = read_run(path, format="inspect")
    assert run.metrics["s/a"].tolist() == [0.0]


def test_one_sample_id_as_a_number_and_a_string_is_one_line_naming_the_file(
    tmp_path: Path,
) -> None:
    """Sample ids 1 and "1" are one item: the Run refused it without naming the file."""
    path = _inspect_log(tmp_path, [_sample(1, "C"), _sample("1", "I")])
    _one_line("inspect", path, f"{path}: ", "in two rows")


def _eee_written(tmp: Path) -> tuple[Path, Path]:
    from kagreport.sources._eee_write import write_eee

    out = tmp / "eee"
    write_eee(read_run(DATA / "promptfoo" / "results.json"), out)
    return out, sorted(out.rglob("*.json"))[0]


@pytest.mark.parametrize(
    ("hint", "value", "where"),
    [
        ("kagreport_rank", [0], "$.kagreport_rank"),
        ("kagreport_costs", 5, "$.kagreport_costs"),
        ("kagreport_texts", {"responses": 1}, "$.kagreport_texts"),
        ("kagreport_metrics", [1, 2], "$.kagreport_metrics[0]"),
    ],
)
def test_an_eee_hint_of_the_wrong_type_is_one_line(
    tmp_path: Path, hint: str, value: Any, where: str
) -> None:
    """kagreport_costs 5 ended in TypeError: 'int' object is not iterable (and the like)."""
    out, aggregate = _eee_written(tmp_path)
    data = json.loads(aggregate.read_text("utf-8"))
    data["eval_library"]["additional_details"][hint] = json.dumps(value)
    aggregate.write_text(json.dumps(data), "utf-8")
    _one_line("eee", out, str(aggregate), "eval_library.additional_details", where)


def test_an_eee_file_path_naming_a_folder_reads_the_sibling(tmp_path: Path) -> None:
    """detailed_evaluation_results.file_path "data/x/" ended in ValueError: Invalid name ''."""
    out, aggregate = _eee_written(tmp_path)
    before = read_run(out, format="eee")
    data = json.loads(aggregate.read_text("utf-8"))
    data["detailed_evaluation_results"]["file_path"] = "data/x/"
    aggregate.write_text(json.dumps(data), "utf-8")
    assert read_run(out, format="eee") == before


def test_an_integer_past_a_floats_range_names_its_key(tmp_path: Path) -> None:
    """10**400 as an lm-eval score: the message now names the line and the key."""
    copy = _copy(LM, tmp_path)
    (samples,) = copy.glob("samples_tiny25_free_*.jsonl")
    lines = samples.read_text("utf-8").split("\n")
    first = json.loads(lines[0])
    key = next(k for k in first if k.startswith("exact_match"))
    first[key] = "BIG"
    lines[0] = json.dumps(first).replace('"BIG"', str(10**400))
    samples.write_text("\n".join(lines), "utf-8")
    _one_line("lm-eval", copy, f"{samples}: line 1: $.{key}: an integer out of a float's range")


@pytest.mark.parametrize(
    ("fmt", "source", "edit", "where"),
    [
        # Passed before too (msgspec types): kept as the class's regression tests.
        (
            "promptfoo",
            "promptfoo/results.json",
            lambda d: d["results"]["results"][0].update(namedScores={"a": "x"}),
            "$.results.results[0].namedScores",
        ),
        (
            "promptfoo",
            "promptfoo/results.json",
            lambda d: d["results"]["results"][1].update(provider="echo"),
            "$.results.results[1].provider",
        ),
    ],
)
def test_a_wrong_typed_promptfoo_field_is_one_line(
    tmp_path: Path, fmt: str, source: str, edit: Any, where: str
) -> None:
    data = json.loads((DATA / source).read_text("utf-8"))
    edit(data)
    path = tmp_path / Path(source).name
    path.write_text(json.dumps(data), "utf-8")
    _one_line(fmt, path, str(path), where)


def test_an_lmeval_results_section_that_is_a_list_is_one_line(tmp_path: Path) -> None:
    copy = _copy(LM, tmp_path)
    (results,) = copy.glob("results_*.json")
    data = json.loads(results.read_text("utf-8"))
    data["results"] = list(data["results"].values())
    results.write_text(json.dumps(data), "utf-8")
    _one_line("lm-eval", copy, str(results), "Expected `object`, got `array` - at `$.results`")


def test_nesting_names_the_file_and_line(tmp_path: Path) -> None:
    """Deep nesting is refused where it is decoded: the file and line, not only the run."""
    lines = (DATA / "promptfoo" / "two-prompts.jsonl").read_text("utf-8").split("\n")
    lines[1] = '{"deep": ' + "[" * 200_000 + "]" * 200_000 + ", " + lines[1][1:]
    path = tmp_path / "two-prompts.jsonl"
    path.write_text("\n".join(lines), "utf-8")
    _one_line("promptfoo", path, f"{path}: line 2: nested too deeply to read")


def test_an_integer_across_the_scans_chunk_boundary_is_found() -> None:
    """The digits are looked for 16 MiB at a time; a run across two chunks is one run."""
    from kagreport.sources._load import decode

    head = b'{"pad": "' + b"x" * ((1 << 24) - 200) + b'", "n": '
    data = head + str(10**400).encode() + b"}"
    with pytest.raises(DocumentError, match=r"^doc: \$\.n: an integer out of a float's range"):
        decode(data, Any, "doc")
    assert decode(head + str(10**300).encode() + b"}", Any, "doc")["n"] == 10**300

"""Hostile files (issue 25): what a reader must read, or refuse in one line.

Fault 14: JSON Lines are split on "\\n" only, so a string holding a raw U+2028, U+2029 or
U+0085 (valid JSON: RFC 8259 escapes only U+0000-U+001F) reads.
Fault 12 (part): an infinity read from a log is written back (as null, like NaN: JSON has
no token for it); an integer past a float's range is one error.
Fault 13: a zip entry over the size limit is refused before it is read.
Fault 11: JSON nested deeper than the interpreter's recursion limit is one error.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kagreport import KagreportError
from kagreport.runs import Run
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
SEPARATORS = ["\u2028", "\u2029", "\u0085"]
LMEVAL = "lm-eval/lm-eval-0.4.13/output"  # lm-eval 0.4.13's own output


@pytest.mark.parametrize("separator", SEPARATORS, ids=["U+2028", "U+2029", "U+0085"])
@pytest.mark.parametrize(
    ("fmt", "name", "old"),
    [
        # The tools' own outputs (SOURCE.md beside each).
        ("promptfoo", "promptfoo/real/results.jsonl", '"output":"Paris"'),
        (
            "openai-evals",
            "openai-evals/evals-3.0.1/records/tiny25-match.tiny25-scripted.jsonl",
            '"expected": "8"',
        ),
    ],
)
def test_jsonl_string_with_unicode_line_separator_reads(
    tmp_path: Path, fmt: str, name: str, old: str, separator: str
) -> None:
    source = DATA / name
    text = source.read_text(encoding="utf-8")
    assert old in text
    new = old[:-1] + f"a{separator}b" + '"'
    hostile = tmp_path / source.name
    hostile.write_text(text.replace(old, new, 1), encoding="utf-8")
    # The raw character is there, unescaped, and each line is still valid JSON.
    assert separator.encode("utf-8") in hostile.read_bytes()
    for line in hostile.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            json.loads(line)
    plain = read_run(source, format=fmt)
    run = read_run(hostile, format=fmt)
    assert len(run) == len(plain)
    texts = [*(run.responses or ()), *(run.references or ())]
    value = old.rstrip('"').rpartition('"')[2]
    assert f"{value}a{separator}b" in texts


def test_infinity_read_from_an_inspect_log_is_written_back(tmp_path: Path) -> None:
    text = (DATA / "inspect" / "log_read_sample.json").read_text(encoding="utf-8")
    hostile = tmp_path / "log.json"
    hostile.write_text(
        re.sub(r'"total_time": [0-9.]+', '"total_time": Infinity', text, count=1),
        encoding="utf-8",
    )
    run = read_run(hostile, format="inspect")
    assert any(v == float("inf") for c in run.costs.values() for v in c.tolist())
    run.write(tmp_path / "run.json")  # JSON has no infinity: written as null
    back = Run.read(tmp_path / "run.json")
    assert back == run  # equality is on the JSON form (NaN and infinities as null)


DEPTH = 200_000  # far past any recursion limit; 400 kB of brackets


def _nest_first_object(text: str) -> str:
    """``text`` with a 200,000-level nested array as an extra first key of its first
    JSON object (valid JSON, as deep as a hostile file can be)."""
    start = text.index("{")
    deep = "[" * DEPTH + "]" * DEPTH
    return f'{text[: start + 1]}"deep": {deep}, {text[start + 1 :]}'


@pytest.mark.parametrize(
    ("folder", "file"),
    [
        ("inspect", "log_read_sample.json"),
        (LMEVAL, "mock__dummy-seed0/results_2026-12-05T11-10-23.150187.json"),
        (LMEVAL, "mock__dummy-seed0/samples_tiny25_free_2026-12-05T11-10-23.150187.jsonl"),
        ("helm/real/tiny25", "tiny25_qa:model=simple_model1/per_instance_stats.json"),
        ("helm/real/tiny25", "tiny25_qa:model=simple_model1/run_spec.json"),
        ("promptfoo/real", "results.json"),
        ("promptfoo/real", "results.jsonl"),
        ("openai-evals/evals-3.0.1/records", "tiny25-match.tiny25-scripted.jsonl"),
    ],
)
def test_deep_nesting_is_one_error_or_a_run(tmp_path: Path, folder: str, file: str) -> None:
    """Fault 11: a document nested 200,000 deep ended in a RecursionError traceback."""
    source = DATA / folder
    if source.is_dir():
        copy = tmp_path / "copy"
        shutil.copytree(source, copy)
    else:
        copy = tmp_path / source.name
        shutil.copy(source, copy)
    target = copy / file
    target.write_text(_nest_first_object(target.read_text(encoding="utf-8")), encoding="utf-8")
    try:
        read_run(copy)
    except KagreportError as exc:
        message = str(exc)
    else:
        message = ""
    assert "\n" not in message


def test_deep_nesting_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    text = (DATA / "promptfoo" / "results.json").read_text(encoding="utf-8")
    target.write_text(_nest_first_object(text), encoding="utf-8")
    command = [sys.executable, "-m", "kagreport", "convert", str(target), "--from", "promptfoo"]
    output = tmp_path / "o.json"
    done = subprocess.run(
        [*command, "-o", str(output)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"kagreport: error: {target}: "), done.stderr
    assert not (tmp_path / "o.json").exists()


def test_an_integer_past_a_floats_range_is_one_error(tmp_path: Path) -> None:
    """Fault 12: 10**400 where lm-eval records a score ended in an OverflowError."""
    copy = tmp_path / "lm-eval"
    shutil.copytree(DATA / LMEVAL, copy)
    (samples,) = (copy / "mock__dummy-seed0").glob("samples_tiny25_free_*.jsonl")
    lines = samples.read_text(encoding="utf-8").split("\n")
    first = json.loads(lines[0])
    key = next(k for k in first if k.startswith("exact_match"))
    lines[0] = lines[0].replace(f'"{key}": {json.dumps(first[key])}', f'"{key}": {10**400}', 1)
    assert str(10**400) in lines[0]
    samples.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(KagreportError) as caught:
        read_run(copy)
    assert str(samples.parent.parent) in str(caught.value) or str(samples) in str(caught.value)
    assert "\n" not in str(caught.value)


# Peak resident memory of this process: VmHWM (ru_maxrss would count the high-water mark
# of the process that started it, kept across exec by Linux).
_READ_BIG = """
import sys, time
from kagreport import KagreportError, read_run
start = time.monotonic()
try:
    read_run(sys.argv[1], format="inspect")
except KagreportError as exc:
    print(exc)
print(time.monotonic() - start)
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))  # KiB
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_one_gigabyte_zip_entry_is_refused_without_reading_it(tmp_path: Path) -> None:
    """Fault 13: an .eval zip with a 1 GB entry (4.6 MB compressed) was read whole: 2.1 GB
    resident for one sample. It is refused in one line naming file, entry and limit, with
    peak memory under 200 MB."""
    log = tmp_path / "big.eval"
    shutil.copy(DATA / "inspect" / "log_formats.eval", log)
    entry = "samples/zz-big_epoch_1.json"
    block = b" " * (1 << 20)
    with (
        zipfile.ZipFile(log, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open(entry, "w", force_zip64=True) as member,
    ):
        for _ in range(1024):
            member.write(block)
    done = subprocess.run(
        [sys.executable, "-c", _READ_BIG, str(log)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    message, seconds, peak_kib = done.stdout.strip().split("\n")
    assert message == (
        f"{log}: {entry}: the entry holds 1,073,741,824 bytes decompressed, over the limit of "
        "268,435,456 (KAGREPORT_MAX_MEMBER_BYTES sets another)"
    )
    assert int(peak_kib) < 200 * 1024
    print(f"refused in {float(seconds):.2f} s, peak {int(peak_kib) / 1024:.0f} MiB")


def test_the_entry_limit_is_adjustable(monkeypatch: pytest.MonkeyPatch) -> None:
    log = DATA / "inspect" / "log_formats.eval"
    assert len(read_run(log)) == 1
    monkeypatch.setenv("KAGREPORT_MAX_MEMBER_BYTES", "4096")  # its sample holds 8,105 bytes
    with pytest.raises(KagreportError, match=r"samples/1_epoch_1\.json: the entry holds 8,105"):
        read_run(log)
    monkeypatch.setenv("KAGREPORT_MAX_MEMBER_BYTES", "lots")
    with pytest.raises(KagreportError, match="KAGREPORT_MAX_MEMBER_BYTES must be a number"):
        read_run(log)

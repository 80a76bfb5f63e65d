"""Property (issue 25, hostile files): every reader, fed a mutated real output, returns a
Run or raises one KagreportError whose message is one line naming the file, and its peak
memory stays under a stated bound.

The inputs are the tools' own outputs in tests/data/sources/ (and the EEE files kagreport
writes, whose ``kagreport_*`` hints are read back). Hypothesis draws the file of the case to
mutate, the mutation and a seed; the mutations: truncation, bit flips, a value swapped for
one of another type, an integer of 400 or 5,000 digits, ``1e400``, a value nested 200,000
levels deep, bytes that are not UTF-8, a key repeated with a value of another type, a raw
U+2028 in a string, a value swapped inside JSON text held in a string (EEE's hints), and,
in an Inspect ``.eval`` zip, any of these inside one entry.

Memory bound: every input here is under 200 kB; :mod:`tracemalloc` measures the peak of the
Python and NumPy allocations (msgspec's included) of one read, which must stay under
:data:`PEAK_LIMIT`, 16 MiB: the real files read in under 0.5 MiB and 1,500 mutants peaked at
4.6 MiB (a 200,000-level document is 400 kB of text). A reader that recursed through such a
document, or held a file's values many times over, would exceed it.
"""

from __future__ import annotations

import json
import random
import shutil
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kagreport import KagreportError
from kagreport.runs import Run
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
#: Peak traced memory of one read of a mutant (see the module docstring).
PEAK_LIMIT = 16 << 20
DEPTH = 200_000
_TEXT_TOKEN = "\x00kagreport-token\x00"
_KEY_TOKEN = "\x00kagreport-key\x00"


def _eee_written(root: Path) -> Path:
    """The EEE files kagreport writes for the promptfoo fixture (with kagreport_* hints)."""
    from kagreport.sources._eee_write import write_eee

    out = root / "eee-written"
    if not out.exists():
        write_eee(read_run(DATA / "promptfoo" / "results.json"), out)
    return out


_HELM_RUN = "tiny25_mc:model=simple_model1"


#: (format, fixture to copy, the path inside the copy to read: "." for itself); None for
#: the EEE files kagreport writes (made once per module).
CASES: list[tuple[str, Path | None, Path]] = [
    ("inspect", DATA / "inspect" / "log_read_sample.json", Path(".")),
    ("inspect", DATA / "inspect" / "log_formats.eval", Path(".")),
    (
        "inspect",
        DATA
        / "inspect"
        / "inspect-0.3.285"
        / "2026-12-05T10-58-46-00-00_tiny-mc_WZFQuP9WwCSf3VjD3ksd2o.eval",
        Path("."),
    ),
    ("lm-eval", DATA / "lm-eval" / "EleutherAI__pythia-14m", Path(".")),
    ("lm-eval", DATA / "lm-eval" / "lm-eval-0.4.13" / "output" / "mock__dummy-seed3", Path(".")),
    ("helm", DATA / "helm" / "v1" / "boolq:model=openai_gpt2", Path(".")),
    ("helm", DATA / "helm" / "real" / "tiny25", Path(_HELM_RUN)),
    ("promptfoo", DATA / "promptfoo" / "results.json", Path(".")),
    ("promptfoo", DATA / "promptfoo" / "two-prompts.jsonl", Path(".")),
    (
        "openai-evals",
        DATA / "openai-evals" / "evals-3.0.1" / "records" / "tiny25-match.dummy.jsonl",
        Path("."),
    ),
    ("openai-evals", DATA / "openai-evals" / "real" / "self_prompting-oriprompt.log", Path(".")),
    ("eee", DATA / "eee" / "converted" / "inspect" / "data" / "tiny_mc", Path(".")),
    ("eee", None, Path(".")),
]


def _cases(root: Path) -> list[tuple[str, Path, Path]]:
    return [(fmt, fixture or _eee_written(root), inside) for fmt, fixture, inside in CASES]


def _files(fixture: Path, inside: Path) -> list[Path]:
    """The files a mutation may hit, relative to the copied fixture (only the read run's
    files of a suite: HELM reads the run folder and the suite's schema.json)."""
    if fixture.is_file():
        return [Path(".")]
    base = fixture / inside
    found = [p for p in sorted(base.rglob("*")) if p.is_file() and p.suffix in {".json", ".jsonl"}]
    if inside != Path(".") and (fixture / "schema.json").is_file():
        found.append(fixture / "schema.json")
    return [p.relative_to(fixture) for p in found]


# -- mutations of one JSON document (or JSON Lines file) ---------------------------------


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) inside ``value`` (the first 20,000)."""
    slots: list[tuple[Any, Any]] = []
    stack = [value]
    while stack and len(slots) < 20_000:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item))
        for key in keys:
            slots.append((item, key))
            if isinstance(item[key], dict | list):
                stack.append(item[key])
    return slots


def _slot(value: Any, rng: random.Random) -> tuple[Any, Any]:
    """A (container, key) somewhere inside ``value``: half the time any slot alike (the
    top-level fields a reader reads are hit as often as deep ones), else a walk down."""
    if rng.random() < 0.5:
        slots = _slots(value) if isinstance(value, dict | list) else []
        return rng.choice(slots) if slots else (None, None)
    slot: tuple[Any, Any] = (None, None)
    while isinstance(value, dict | list) and value:
        key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
        slot = (value, key)
        if rng.random() < 0.25:
            break
        value = value[key]
    return slot


def _raw_values() -> list[str]:
    """JSON text put raw where a value was: what json.dumps cannot write."""
    return [
        str(10**400),
        "-" + str(10**400),
        "1" + "0" * 5000,
        "1e400",
        "NaN",
        "-Infinity",
        "[" * DEPTH + "]" * DEPTH,
        '{"a":' * DEPTH + "1" + "}" * DEPTH,
    ]


def _swap_values(old: Any) -> list[Any]:
    return [
        v
        for v in (1.5, -3, "x", [], {}, None, True, [1, "2"], {"k": 1})
        if type(v) is not type(old)
    ]


def _edit(doc: Any, kind: str, rng: random.Random) -> tuple[Any, str | None]:
    """``doc`` edited in place by ``kind``; the raw JSON text standing for the token."""
    if kind == "inner":
        # JSON text held in a string (EEE's kagreport_* details): swap a value inside it.
        texts = [(p, k) for p, k in _slots(doc) if _json_text(p[k]) is not None]
        if texts:
            parent, key = rng.choice(texts)
            holder = [_json_text(parent[key])]
            edited, raw = _edit(holder, "swap", rng)
            parent[key] = _dump(edited[0], raw).decode("utf-8", "surrogateescape")
            return doc, None
        kind = "swap"
    parent, key = _slot(doc, rng)
    if parent is None:
        return doc, None
    old = parent[key]
    if kind == "swap":
        parent[key] = rng.choice(_swap_values(old))
        return doc, None
    if kind == "raw":
        parent[key] = _TEXT_TOKEN
        return doc, rng.choice(_raw_values())
    if kind == "duplicate" and isinstance(parent, dict):
        # The key again, after the others, with a value of another type (the last wins).
        parent[_KEY_TOKEN] = _TEXT_TOKEN
        again = json.dumps(rng.choice(_swap_values(old)))
        return doc, f"{json.dumps(key, ensure_ascii=False)}: {again}"
    if kind == "separator" and isinstance(old, str):
        at = rng.randrange(len(old) + 1)
        parent[key] = old[:at] + rng.choice("\u2028\u2029\u0085") + old[at:]
        return doc, None
    if kind == "not-utf8":
        parent[key] = _TEXT_TOKEN
        return doc, '"\udcff\udcfe"'  # bytes 0xff 0xfe inside a string (see _dump)
    parent[key] = rng.choice(_swap_values(old))
    return doc, None


def _json_text(value: Any) -> Any:
    """The JSON value a string holds as text (an array, object or number); else None."""
    if not isinstance(value, str) or value[:1] not in ("[", "{", "-", *"0123456789"):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _dump(doc: Any, raw: str | None) -> bytes:
    text = json.dumps(doc, ensure_ascii=False, allow_nan=True)
    if raw is not None:
        quoted = json.dumps(_TEXT_TOKEN)
        key = json.dumps(_KEY_TOKEN)
        text = text.replace(f"{key}: {quoted}", raw).replace(quoted, raw)
    return text.encode("utf-8", "surrogateescape")


def _mutate_json(data: bytes, jsonl: bool, kind: str, rng: random.Random) -> bytes:
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    if kind == "flip":
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        return bytes(flipped)
    if kind == "bytes":  # a byte that is not UTF-8 anywhere
        at = rng.randrange(len(data) + 1)
        return data[:at] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80"]) + data[at:]
    if not jsonl:
        doc, raw = _edit(json.loads(data), kind, rng)
        return _dump(doc, raw)
    lines = data.decode("utf-8").split("\n")
    numbers = [i for i, line in enumerate(lines) if line.strip()]
    at = rng.choice(numbers)
    doc, raw = _edit(json.loads(lines[at]), kind, rng)
    lines[at] = _dump(doc, raw).decode("utf-8", "surrogateescape")
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def _mutate_zip(path: Path, kind: str, rng: random.Random) -> None:
    """Mutate the zip's bytes (truncation, flips) or one JSON entry, rewritten deflated."""
    if kind in ("truncate", "flip"):
        path.write_bytes(_mutate_json(path.read_bytes(), False, kind, rng))
        return
    entries = _entries(path)
    name = rng.choice(sorted(n for n in entries if n.endswith(".json")))
    entries[name] = _mutate_json(entries[name], False, kind, rng)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry, data in entries.items():
            archive.writestr(entry, data)


def _entries(path: Path) -> dict[str, bytes]:
    """Each entry of the zip, decompressed (zstd ones, method 93, with zstandard)."""
    out = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
        for info in archive.infolist():
            if info.compress_type != 93:
                out[info.filename] = archive.read(info)
                continue
            zstandard = pytest.importorskip("zstandard")
            handle.seek(info.header_offset + 26)
            lengths = handle.read(4)
            skip = int.from_bytes(lengths[:2], "little") + int.from_bytes(lengths[2:], "little")
            handle.seek(info.header_offset + 30 + skip)
            stored = handle.read(info.compress_size)
            reader = zstandard.ZstdDecompressor().stream_reader(stored, read_across_frames=True)
            out[info.filename] = reader.read()
    return out


KINDS = [
    "truncate",
    "flip",
    "bytes",
    "swap",
    "raw",
    "duplicate",
    "separator",
    "not-utf8",
    "inner",
]


def _read_measured(path: Path, fmt: str) -> tuple[str, int]:
    """("run" or the error's message, peak traced bytes) of reading ``path``."""
    tracemalloc.start()
    try:
        outcome = read_run(path, format=fmt)
    except KagreportError as error:
        outcome = error
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if isinstance(outcome, Run):
        return "run", peak
    return str(outcome), peak


def _check_case(
    work: Path, case: tuple[str, Path, Path], file_index: int, kind: str, seed: int
) -> None:
    fmt, fixture, inside = case
    copy = work / "case" / fixture.name
    shutil.rmtree(work / "case", ignore_errors=True)
    copy.parent.mkdir(parents=True)
    if fixture.is_dir():
        shutil.copytree(fixture, copy)
    else:
        shutil.copy(fixture, copy)
    files = _files(fixture, inside)
    target = copy / files[file_index % len(files)]
    rng = random.Random(seed)
    if target.suffix == ".eval":
        _mutate_zip(target, kind, rng)
    else:
        target.write_bytes(
            _mutate_json(target.read_bytes(), target.suffix in (".jsonl", ".log"), kind, rng)
        )
    outcome, peak = _read_measured(copy / inside, fmt)
    if outcome != "run":
        assert "\n" not in outcome, outcome
        assert str(copy) in outcome or target.name in outcome, outcome
    assert peak < PEAK_LIMIT, f"{peak:,} bytes at peak"


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path, Path]]:
    return _cases(tmp_path_factory.mktemp("fixtures"))


def _property(examples: int) -> Callable[..., None]:
    @_settings(examples)
    @given(
        case=st.integers(0, len(CASES) - 1),
        file_index=st.integers(0, 20),
        kind=st.sampled_from(KINDS),
        seed=st.integers(0, 2**32 - 1),
    )
    def check(
        cases: list[tuple[str, Path, Path]],
        tmp_path: Path,
        case: int,
        file_index: int,
        kind: str,
        seed: int,
    ) -> None:
        _check_case(tmp_path, cases[case], file_index, kind, seed)

    return check


test_mutants_are_a_run_or_one_line = _property(150)
# A long run (``make test-soak``): every reader, every mutation, many more files and seeds.
test_mutants_are_a_run_or_one_line_more = pytest.mark.soak(_property(1200))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_each_reader_meets_each_mutation(
    cases: list[tuple[str, Path, Path]], tmp_path: Path, case: int, kind: str, seed: int
) -> None:
    """Every (reader, mutation) pair twice, whatever Hypothesis draws."""
    _check_case(tmp_path, cases[case], file_index=case + seed, kind=kind, seed=seed)

"""The compiled scanner (kagreport/kag/_scan.c) against the pure-Python decoder.

The scanner may decline any file (None: the Python decoder decides); what it accepts it
must decode exactly as :func:`decode_python` does, and it must never accept a file that
decoder refuses. Checked on every result file in the test data, on generated records
(every field, key order, white space, escapes, numbers at the limits), and on thousands
of files mutated a byte at a time. The end-to-end outputs with the scanner off
(``KAGREPORT_DECODER=python``, the fallback) are compared in tests/grading/test_decoders.py.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kagreport.examples import mmlu_pro_philosophy
from kagreport.kag import _records
from kagreport.kag._records import decode_python
from kagreport.kag._simulate import write_simulated_run

SCANNER = _records._SCANNER

needs_scanner = pytest.mark.skipif(SCANNER is None, reason="the C scanner is not built")


def _python(data: bytes) -> Any:
    try:
        return decode_python(data)
    except ValueError as exc:
        return exc


def _agree(data: bytes) -> bool:
    """Whether the scanner declines ``data`` or decodes it as the Python decoder does;
    returns whether it accepted."""
    fast = SCANNER.decode(data)
    expected = _python(data)
    if fast is None:
        return False
    assert not isinstance(expected, Exception), (data, expected)
    assert fast == expected, data
    assert type(fast) is type(expected)
    assert type(fast.retrieval) is type(expected.retrieval)
    return True


def test_the_scanner_is_built_where_a_compiler_is() -> None:
    # make builds it (hatch_build.py); without a C compiler the Python decoder runs alone.
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.environ.get("KAGREPORT_DECODER") == "python" or shutil.which(compiler) is None:
        pytest.skip("no C compiler here, or the scanner is turned off")
    assert SCANNER is not None, "run make (or python hatch_build.py) to build the C scanner"


def _record(**overrides: Any) -> dict[str, Any]:
    """A success record as kag writes one (a KAG setup)."""
    record: dict[str, Any] = {
        "ok": {
            "result": "B",
            "stats": {
                "prompt": "Question?\nA) x\nB) y",
                "retrieval": {
                    "result": "(:Entity)-[:R]->(:Entity)",
                    "stats": {
                        "embedder": {
                            "embedding": {"document": "doc", "vec": [-0.0305, 0.0349, 1e-05]},
                            "database": {
                                "neo4j": {
                                    "vertices": 3,
                                    "relationships": 2,
                                    "properties": 5,
                                    "time": {"secs": 0, "nanos": 95739176},
                                }
                            },
                            "time": {"secs": 0, "nanos": 316621845},
                        }
                    },
                },
                "config": {
                    "augmented_generation": {"retriever": "embedder", "database": "neo4j"},
                    "provider": "openai",
                    "model": "gpt-4o-mini",
                    "temperature": 0.0,
                    "tokens": None,
                },
                "time": {"secs": 1, "nanos": 208481023},
            },
        }
    }
    record["ok"].update(overrides)
    return record


def _pretty(record: Any) -> bytes:
    return json.dumps(record, indent=2, ensure_ascii=False).encode()


@needs_scanner
def test_it_reads_kags_own_shape_and_agrees() -> None:
    assert _agree(_pretty(_record()))
    assert _agree(_pretty({"error": "timeout: the model did not answer"}))
    plain = _record()
    del plain["ok"]["stats"]["retrieval"]
    plain["ok"]["stats"]["config"]["augmented_generation"] = None
    assert _agree(_pretty(plain))


@pytest.fixture(scope="module")
def result_files(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The bundled MMLU-Pro run's result files and a simulated run's (its unparsable
    files included)."""
    sim = write_simulated_run(tmp_path_factory.mktemp("sim") / "run", questions=40, seed=3)
    roots = [Path(mmlu_pro_philosophy().results), Path(sim.results_path)]
    return [path.read_bytes() for root in roots for path in sorted(root.rglob("*.json"))]


@needs_scanner
def test_every_result_file_of_the_bundled_and_a_simulated_run(result_files: list[bytes]) -> None:
    accepted = sum(_agree(data) for data in result_files)
    refused = sum(isinstance(_python(data), Exception) for data in result_files)
    # Everything the Python decoder reads here is in kag's common shape.
    assert accepted == len(result_files) - refused > 3000, (accepted, refused)


# Field values at and beyond the scanner's limits (it must decline, or agree).
_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
) | st.sampled_from(["", "é", "\u2028", "\x00", "\x7f", '"\\/', "\U0001f600", "a:b"])
_INT = st.integers(0, 2**64 + 5) | st.sampled_from([0, 9, 10**17, 10**18 - 1, 10**18, 2**63])
_NANOS = st.integers(0, 2**32) | st.sampled_from([0, 999_999_999, 10**9])
_SECS = st.integers(0, 2**64) | st.sampled_from([0, 9_000_000_000, 9_000_000_001])
_FLOAT = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**5), 10**5)
    | st.integers(-(10**215), 10**215)  # integer literals where floats are read: 200+ digits
)
_NAME = st.sampled_from(["openai", "neo4j", "a-1", "", "Open", "né", "a b"])


@st.composite
def _duration(draw: st.DrawFn) -> Any:
    secs, nanos = draw(_SECS), draw(_NANOS)
    return [secs, nanos] if draw(st.booleans()) else {"nanos": nanos, "secs": secs}


@st.composite
def _records_drawn(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 9)) == 0:
        return {"error": draw(_TEXT)}
    record = _record(result=draw(_TEXT))
    stats = record["ok"]["stats"]
    stats["prompt"] = draw(_TEXT)
    stats["time"] = draw(_duration())
    config = stats["config"]
    config["provider"] = draw(_NAME)
    config["model"] = draw(_TEXT)
    config["temperature"] = draw(_FLOAT)
    config["tokens"] = draw(st.none() | _INT)
    augmented = config["augmented_generation"]
    augmented["retriever"] = draw(_NAME)
    choice = draw(st.integers(0, 3))
    if choice == 0:
        del config["tokens"]
    elif choice == 1:
        config["augmented_generation"] = None
    retrieval = stats["retrieval"]
    retrieval["result"] = draw(_TEXT)
    embedder = retrieval["stats"]["embedder"]
    embedder["time"] = draw(_duration())
    embedder["embedding"]["vec"] = draw(st.lists(_FLOAT, max_size=4))
    embedder["embedding"]["document"] = draw(_TEXT)
    neo4j = embedder["database"]["neo4j"]
    neo4j["vertices"] = draw(_INT)
    neo4j["time"] = draw(_duration())
    shape = draw(st.integers(0, 3))
    if shape == 0:
        del stats["retrieval"]
    elif shape == 1:
        stats["retrieval"] = None
    return record


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@needs_scanner
@settings(max_examples=400, deadline=None)
@given(record=_records_drawn(), seed=st.integers(0, 2**16), ascii_only=st.booleans())
def test_generated_records_agree(record: dict[str, Any], seed: int, ascii_only: bool) -> None:
    rng = random.Random(seed)
    shuffled = _shuffled(record, rng)
    indent = rng.choice([None, 0, 2, "\t", " \r\n"])
    text = json.dumps(shuffled, indent=indent, ensure_ascii=ascii_only)
    _agree(text.encode("utf-8", "surrogatepass"))


# A vector's numbers as text, at and around what the 16-byte path reads (an element that
# ends within the bytes it looks at) and what it leaves to the scalar path: long runs of
# digits, exponents, signs, white space before a comma; and at most one odd token
# (leading zeros, a bare sign or point, a plus), so that the rest of the vector still reads.
# (Exponents of at most two digits: the scanner declines a third, and one declined number
# would leave the whole vector to Python.)
_NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: "e" not in t),
    st.from_regex(r"-?(0|[1-9][0-9]{0,16})(\.[0-9]{1,16})?([eE][-+]?[0-9]{1,2})?", fullmatch=True),
)
_ODD = (
    [
        "-0", "01", "-", "1.", ".5", "+1", "1e", "--1", "0x1", "nan", "1.e5", "-.5", "0.1.2",
        # the bytes either side of the digits, '/' and ':', in each part of a number
        "1:", "9/", "/1", ":", "0.1:", "0./", "-:", "12:3", "0.5/",
    ]
)  # fmt: skip
_ODD_TEXT = st.sampled_from(_ODD)
_GAP = st.sampled_from(["", " ", "\n", "\n" + " " * 16, "\n" + " " * 15, " " * 40, "\t\r\n"])


@needs_scanner
@settings(max_examples=300, deadline=None)
@given(
    numbers=st.lists(st.tuples(_GAP, _NUMBER_TEXT, _GAP), min_size=1, max_size=60),
    odd=st.none() | st.tuples(st.integers(0, 60), _GAP, _ODD_TEXT, st.sampled_from(["", " "])),
)
def test_long_vectors_agree(
    numbers: list[tuple[str, str, str]], odd: tuple[int, str, str, str] | None
) -> None:
    if odd is not None:
        numbers.insert(odd[0], odd[1:])
    vector = ",".join(before + number + after for before, number, after in numbers)
    text = json.dumps(_record(), ensure_ascii=False)
    head, tail = text.encode().split(b"[-0.0305, 0.0349, 1e-05]")
    _agree(head + b"[" + vector.encode() + b"]" + tail)


@needs_scanner
@pytest.mark.parametrize("odd", _ODD)
@pytest.mark.parametrize("gap", ["", "\n" + " " * 16, " "])
def test_each_odd_number_where_the_16_byte_path_reads_it(odd: str, gap: str) -> None:
    text = json.dumps(_record(), ensure_ascii=False)
    head, tail = text.encode().split(b"[-0.0305, 0.0349, 1e-05]")
    for vector in (f"[0.5,{gap}{odd},0.25]", f"[{gap}{odd}]", f"[0.5,{gap}{odd}]"):
        _agree(head + vector.encode() + tail)


# Kag's layout (a newline and sixteen spaces before each element), with each odd token at
# each of the first elements, after numbers of each width: the token falls at every place
# of the 64 bytes the bulk path reads at once, and the rest of the vector still reads.
_KAG_GAP = "\n" + " " * 16
_ODD_IN_LAYOUT = [*_ODD, "1e5", "1 ", "\t1", "1\t", "1\r", " ", "", "0.5]", "[0.5"]


def _in_layout(numbers: list[str]) -> bytes:
    head, tail = (
        json.dumps(_record(), ensure_ascii=False).encode().split(b"[-0.0305, 0.0349, 1e-05]")
    )
    vector = ",".join(_KAG_GAP + number for number in numbers) + "\n" + " " * 14
    return head + b"[" + vector.encode() + b"]" + tail


@needs_scanner
@pytest.mark.parametrize("odd", _ODD_IN_LAYOUT)
def test_each_odd_number_at_each_place_of_the_64_byte_path(odd: str) -> None:
    for width in range(1, 13):
        for at in range(6):
            numbers = [f"-0.{'7' * width}" if k % 2 else f"0.{'3' * width}" for k in range(14)]
            assert _agree(_in_layout(numbers))  # the vector alone is read, as Python reads it
            numbers[at] = odd
            _agree(_in_layout(numbers))


@needs_scanner
def test_vectors_in_kags_layout_mutated_a_byte_at_a_time_agree() -> None:
    rng = random.Random(20261207)
    alphabet = b"0123456789-.,\n \t\r+eE]x"
    accepted = 0
    for _ in range(3000):
        widths = [rng.randrange(1, 18) for _ in range(12)]
        numbers = [
            rng.choice(["", "-"]) + rng.choice(["0", "1", "12", "305"]) + "." + "9" * w
            for w in widths
        ]
        data = bytearray(_in_layout(numbers))
        start = data.index(b"[" + _KAG_GAP.encode())
        for _ in range(rng.choice([1, 1, 2])):
            at = rng.randrange(start + 1, data.index(b"]", start))
            data[at] = alphabet[rng.randrange(len(alphabet))]
        accepted += _agree(bytes(data))
    assert accepted > 300  # mutants that are still kag's vectors are read, not declined


# Bytes that change a JSON document's meaning when put in at random.
_SIGNIFICANT = b'{}[],:"\\ \n-+.0123456789eEnulltrf/\x00\x1f\x7f\xc3\xa9\xed\xa0\x80\xef\xbb\xbf'


def _line_mutated(data: bytearray, rng: random.Random) -> bytearray:
    """A line of a pretty-printed file repeated, dropped or moved (keys given twice, missing
    or in another object), with or without a comma after it."""
    lines = bytes(data).split(b"\n")
    at = rng.randrange(len(lines))
    line = lines[at]
    action = rng.randrange(3)
    if action == 0:
        lines.insert(at, line if rng.randrange(2) else line.rstrip(b",") + b",")
    elif action == 1:
        del lines[at]
    else:
        del lines[at]
        lines.insert(rng.randrange(len(lines) + 1), line)
    return bytearray(b"\n".join(lines))


@needs_scanner
def test_files_mutated_a_byte_at_a_time_agree(result_files: list[bytes]) -> None:
    rng = random.Random(20261206)
    bases = [
        _pretty(_record()),
        json.dumps(_record(), separators=(",", ":")).encode(),
        _pretty({"error": "e"}),
        *rng.sample(result_files, 20),
    ]
    accepted = 0
    for _ in range(6000):
        data = bytearray(rng.choice(bases))
        if rng.randrange(4) == 0:
            data = _line_mutated(data, rng)
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            at = rng.randrange(len(data) + 1)
            action = rng.randrange(3)
            byte = _SIGNIFICANT[rng.randrange(len(_SIGNIFICANT))]
            if action == 0 and at < len(data):
                del data[at]
            elif action == 1:
                data.insert(at, byte)
            elif at < len(data):
                data[at] = byte
        accepted += _agree(bytes(data))
    assert accepted > 1000  # most mutations land in white space or strings, and still read


@needs_scanner
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b'{"ok":',
        b'{"error":"e"} x',
        b'{"error":"e","error":"f"}',
        b'{"error":"e\\ud800"}',
        b'{"error":"\xed\xa0\x80"}',
        b'{"error":"\xc0\xaf"}',
        b'\xef\xbb\xbf{"error":"e"}',
        b'{"error":"tab\there"}',
    ],
)
def test_what_it_must_leave_to_the_python_decoder(data: bytes) -> None:
    assert SCANNER.decode(data) is None
    assert isinstance(_python(data), Exception)


@needs_scanner
@pytest.mark.parametrize(
    ("old", "new", "field", "value"),
    [
        ('"vertices": 3', '"vertices": 1000000000000000000', "vertices", 10**18),
        ('"secs": 1,', '"secs": 9000000001,', "generation_ns", 9_000_000_001_208_481_023),
        ('"nanos": 208481023', '"nanos": 1208481023', "generation_ns", 2_208_481_023),
        ("1e-05", "1e-005", "generation_ns", 1_208_481_023),
        ('"error', '"err\\u006fr', "error", "e"),
    ],
)
def test_the_limits_it_declines_yet_python_reads(
    old: str, new: str, field: str, value: object
) -> None:
    # 19 digits, a duration past int64 nanoseconds, nanoseconds to carry, 3 exponent
    # digits, an escaped key: declined, and read by the Python decoder.
    text = _pretty({"error": "e"} if field == "error" else _record()).decode()
    assert old in text
    data = text.replace(old, new).encode()
    assert SCANNER.decode(data) is None
    record = decode_python(data)
    found = record.retrieval.vertices if field == "vertices" else getattr(record, field)
    assert found == value


@needs_scanner
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("1e-05", "1e400"),  # number out of range for an f64
        ("1e-05", "1" + "0" * 310),
        ('"temperature": 0.0', '"temperature": -1e999'),
        ('"vertices": 3', '"vertices": -0'),  # serde reads -0 as a float
        ('"vertices": 3', '"vertices": 3.0'),
        ('"vertices": 3', '"vertices": 18446744073709551616'),
        ('"provider": "openai"', '"provider": "OpenAI"'),  # not a component name
        ('"secs": 1,', '"secs": 1, "extra": 0,'),  # Duration refuses unknown keys
        ('"tokens": null', '"tokens": 1e3'),
        ('"result": "B"', '"result": "B", "result": "C"'),
    ],
)
def test_what_kag_refuses_it_declines(old: str, new: str) -> None:
    text = _pretty(_record()).decode()
    assert old in text
    data = text.replace(old, new, 1).encode()
    assert SCANNER.decode(data) is None
    assert isinstance(_python(data), Exception)


@needs_scanner
def test_the_folder_lister_gives_what_python_lists(tmp_path: Path) -> None:
    from kagreport.kag._records import list_results
    from kagreport.kag._tree import LocalTree
    from kagreport.kag._walk import result_files

    assert list_results is not None
    folder = tmp_path / "q1"
    folder.mkdir()
    names = [
        "kag.json", "base.json", "a-1.json", "p-kag.json", "p-.json", "Upper.json", "x.json.tmp",
        "notes.txt", ".json", "p-p-x.json", "é-kag.json", "p-sub.json",
    ]  # fmt: skip
    for name in names:
        (folder / name).write_text("{}")
    (folder / "link.json").symlink_to(folder / "kag.json")
    (folder / "dir.json").mkdir()
    os.mkfifo(folder / "fifo.json")
    os.close(os.open(os.fsencode(folder) + b"/\xff-bad.json", os.O_CREAT | os.O_WRONLY))
    tree = LocalTree("")
    spellings = [str(folder), str(folder) + "/", os.path.relpath(folder), str(folder) + "//"]
    for spelled in spellings:
        for prefix in ["", "p-", "é-", "\udcff-", "kag", "nothing-"]:
            expected = result_files(tree.list_dir(spelled), spelled, prefix, tree)
            assert list_results(spelled, prefix) == expected, (spelled, prefix)
    assert list_results(str(tmp_path / "missing"), "") is None
    assert list_results("", "") is None
    assert list_results(str(folder / "kag.json"), "") is None  # not a folder


@needs_scanner
def test_the_question_lister_gives_what_python_walks(
    tmp_path: Path, kag_log: list[logging.LogRecord]
) -> None:
    from kagreport.kag import _walk
    from kagreport.kag._records import list_questions
    from kagreport.kag._tree import LocalTree

    assert list_questions is not None
    results = tmp_path / "results"
    plain, odd = results / "ds", results / "odd"
    for name in ["q2", "q-1", "10", "q1", "a"]:
        (plain / name).mkdir(parents=True)
    (plain / "q3.json").write_text("{}")  # files, links and FIFOs are no question folders
    (plain / "link").symlink_to(plain / "q1")
    os.mkfifo(plain / "fifo")
    for name in ["q1", "Q2", "q 3", "é"]:  # folders kag ignores, with a warning
        (odd / name).mkdir(parents=True)
    walked = {
        dataset: names for dataset, _, names in _walk.iter_question_names(LocalTree(str(results)))
    }
    assert list_questions(str(plain)) == walked["ds"] == ["10", "a", "q-1", "q1", "q2"]
    assert list_questions(str(odd)) is None  # Python lists it, and warns
    assert walked["odd"] == ["q1"]
    assert sum("invalid question name" in r.getMessage() for r in kag_log) == 3
    assert list_questions(str(tmp_path / "missing")) is None
    assert list_questions(str(plain / "q3.json")) is None
    assert list_questions("") is None


@needs_scanner
def test_reading_a_file_whole_or_leaving_it_to_python(tmp_path: Path) -> None:
    from kagreport.kag._records import read_result, scan_file

    assert scan_file is not None
    small = tmp_path / "small.json"
    small.write_bytes(_pretty(_record()))
    assert scan_file(str(small)) == read_result(small)
    link = tmp_path / "link.json"
    link.symlink_to(small)  # followed, as read_bytes follows it
    assert scan_file(str(link)) == read_result(small)
    big = tmp_path / "big.json"  # over 1 MiB: the buffer stays small, Python reads it
    big.write_bytes(_pretty(_record(result="x" * (1 << 20))))
    assert scan_file(str(big)) is None
    assert read_result(big).result == "x" * (1 << 20)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opened non-blocking, refused: no writer needed
    for path in (fifo, tmp_path / "missing.json", tmp_path, tmp_path / "a\x00b"):
        assert scan_file(str(path)) is None

"""Malformed inputs: each reader returns a Run or one one-line KagreportError naming the file.

Mutants of real fixtures (tests/data/sources/<tool>/, and the files kagreport writes):
truncations, single-bit flips and JSON values swapped for another type, drawn with a fixed
seed, so every run tries the same inputs.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from kagreport import KagreportError
from kagreport.sources import read_run

DATA = Path(__file__).parent.parent / "data" / "sources"
CASES = [
    ("promptfoo", "promptfoo/real/results.json"),
    ("promptfoo", "promptfoo/real/results.jsonl"),
    ("openai-evals", "openai-evals/evals-3.0.1/records/tiny25-match.tiny25-scripted.jsonl"),
    ("inspect", "inspect/log_read_sample.json"),
    ("inspect", "inspect/log_formats.eval"),
]


def _mutants(data: bytes, seed: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    out = [("empty", b"")]
    for at in sorted(rng.sample(range(1, len(data)), 12)):
        out.append((f"cut{at}", data[:at]))
    for at in sorted(rng.sample(range(len(data)), 12)):
        flipped = bytearray(data)
        flipped[at] ^= 1 << rng.randrange(8)
        out.append((f"flip{at}", bytes(flipped)))
    return out


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_mutant_is_run_or_one_line_error(tmp_path: Path, fmt: str, name: str) -> None:
    source = DATA / name
    faults = []
    for label, data in _mutants(source.read_bytes(), seed=13):
        path = tmp_path / label / source.name
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            read_run(path, format=fmt)
        except KagreportError as error:
            message = str(error)
            if "\n" in message or source.name not in message:
                faults.append(f"{label}: message {message!r}")
        except Exception as error:  # the test collects what escapes
            faults.append(f"{label}: {type(error).__name__}: {error}")
        shutil.rmtree(path.parent)
    assert faults == []


@pytest.mark.parametrize("fmt", ["openai-evals"])
def test_empty_folder_is_one_line_error(tmp_path: Path, fmt: str) -> None:
    with pytest.raises(KagreportError, match=r"no OpenAI evals record log") as caught:
        read_run(tmp_path, format=fmt)
    assert str(tmp_path) in str(caught.value)


def _swaps(data: bytes, seed: int, jsonl: bool, count: int = 12) -> list[tuple[str, bytes]]:
    """JSON documents (or JSON lines) with one value replaced by one of another type."""
    rng = random.Random(seed)
    lines = data.decode("utf-8").splitlines() if jsonl else None
    documents = [json.loads(x) for x in lines if x.strip()] if lines else [json.loads(data)]
    out = []
    for number in range(count):
        docs = json.loads(json.dumps(documents))  # a deep copy
        target = rng.randrange(len(docs))
        parent, key = _random_slot(docs[target], rng)
        if parent is None:
            continue
        old = parent[key]
        parent[key] = rng.choice(
            [v for v in (1e308, "x", [], {}, None, True, -1) if type(v) is not type(old)]
        )
        body = "\n".join(json.dumps(d) for d in docs) if lines else json.dumps(docs[0])
        out.append((f"swap{number}", body.encode("utf-8")))
    return out


def _random_slot(value: Any, rng: random.Random) -> tuple[Any, Any]:
    """A (container, key) pair somewhere inside ``value``, the deeper the likelier."""
    slot: tuple[Any, Any] = (None, None)
    while isinstance(value, (dict, list)) and value:
        key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
        slot = (value, key)
        if rng.random() < 0.3:
            break
        value = value[key]
    return slot


def _folder_cases(tmp: Path) -> list[tuple[str, Path, str]]:
    """(format, folder or file to read, the file inside it to mutate) of every folder
    format, plus the two formats kagreport writes."""
    from kagreport.sources._eee_write import write_eee

    tmp.mkdir()
    run = read_run(DATA / "promptfoo" / "real" / "results.json")
    run.write(tmp / "run.json")
    write_eee(run, tmp / "eee")
    eee_files = sorted(p.relative_to(tmp / "eee") for p in (tmp / "eee").rglob("*.json*"))
    # The tools' own outputs (SOURCE.md beside each).
    helm = DATA / "helm" / "real" / "tiny25" / "tiny25_qa:model=simple_model1"
    lm = DATA / "lm-eval" / "lm-eval-0.4.13" / "output" / "mock__dummy-seed0"
    return [
        ("kagreport", tmp / "run.json", "run.json"),
        *[("eee", tmp / "eee", str(p)) for p in eee_files],
        *[
            ("helm", helm, name)
            for name in ("per_instance_stats.json", "scenario_state.json", "run_spec.json")
        ],
        *[("lm-eval", lm, p.name) for p in sorted(lm.iterdir())],
    ]


def _check(path: Path, fmt: str, names: tuple[str, ...]) -> str | None:
    try:
        read_run(path, format=fmt)
    except KagreportError as error:
        message = str(error)
        if "\n" in message or not any(n in message for n in names):
            return f"message {message!r}"
    except Exception as error:  # the test collects what escapes
        return f"{type(error).__name__}: {error}"
    return None


def test_folder_formats_mutants_and_type_swaps(tmp_path: Path) -> None:
    faults = []
    for fmt, where, inner in _folder_cases(tmp_path / "in"):
        data = (where / inner).read_bytes() if where.is_dir() else where.read_bytes()
        mutants = _mutants(data, seed=17)[::2] + _swaps(
            data, seed=19, jsonl=inner.endswith(".jsonl")
        )
        for label, body in mutants:
            copy = tmp_path / "m" / where.name
            if where.is_dir():
                shutil.copytree(where, copy)
                (copy / inner).write_bytes(body)
            else:
                copy.parent.mkdir(parents=True)
                copy.write_bytes(body)
            fault = _check(copy, fmt, (Path(inner).name, copy.name))
            if fault is not None:
                faults.append(f"{fmt} {inner} {label}: {fault}")
            shutil.rmtree(tmp_path / "m")
    assert faults == []


@pytest.mark.parametrize(("fmt", "name"), [c for c in CASES if not c[1].endswith(".eval")])
def test_single_file_type_swaps(tmp_path: Path, fmt: str, name: str) -> None:
    source = DATA / name
    faults = []
    for label, body in _swaps(source.read_bytes(), seed=23, jsonl=source.suffix == ".jsonl"):
        path = tmp_path / label / source.name
        path.parent.mkdir()
        path.write_bytes(body)
        fault = _check(path, fmt, (source.name,))
        if fault is not None:
            faults.append(f"{label}: {fault}")
    assert faults == []

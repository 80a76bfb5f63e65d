"""Shared builders for kag result trees written by hand, as PITFALLS.md's fixtures."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

# PITFALLS.md "S": the smallest ok.stats object kag parses.
S: dict[str, Any] = {
    "prompt": "p",
    "retrieval": None,
    "config": {
        "augmented_generation": None,
        "provider": "stub",
        "model": "m",
        "temperature": 0.0,
        "tokens": None,
    },
    "time": {"secs": 1, "nanos": 0},
}


def mcq(answer: str | None, options: dict[str, str] | None = None) -> dict[str, Any]:
    """A datasets entry: PITFALLS.md MCQ(key)."""
    return {
        "input": "Q?",
        "output": {
            "type": "MCQ",
            "options": options or {"A": "a", "B": "b", "C": "c", "D": "d"},
            "answer": answer,
        },
    }


def stats(
    *,
    prompt: str = "p",
    secs: int = 1,
    nanos: int = 0,
    retrieval: tuple[int, int, int, int, int] | None = None,
) -> dict[str, Any]:
    """An ok.stats object; ``retrieval`` is (ret_secs, ret_nanos, vertices, relationships, properties)."""
    body = json.loads(json.dumps(S))
    body["prompt"] = prompt
    body["time"] = {"secs": secs, "nanos": nanos}
    if retrieval is not None:
        rs, rn, v, r, p = retrieval
        body["config"]["augmented_generation"] = {"retriever": "embedder", "database": "neo4j"}
        body["retrieval"] = {
            "result": "ctx",
            "stats": {
                "embedder": {
                    "embedding": {"document": "Q?", "vec": [0.25, -0.5, 1e-3]},
                    "database": {
                        "neo4j": {
                            "vertices": v,
                            "relationships": r,
                            "properties": p,
                            "time": {"secs": 0, "nanos": 1},
                        }
                    },
                    "time": {"secs": rs, "nanos": rn},
                }
            },
        }
    return body


class Tree:
    """A kag run written under a temporary folder: ``datasets.json`` and ``results/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.results = root / "results"
        self.results.mkdir()
        self.datasets_path = root / "datasets.json"
        self.truth: dict[str, dict[str, Any]] = {}
        self.save_truth()

    def save_truth(self) -> None:
        self.datasets_path.write_text(json.dumps(self.truth, indent=2), encoding="utf-8")

    def question(self, dataset: str, question: str, entry: dict[str, Any]) -> None:
        self.truth.setdefault(dataset, {})[question] = entry
        self.save_truth()

    def raw(self, dataset: str, question: str, name: str, text: str | bytes) -> Path:
        folder = self.results / dataset / question
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def ok(self, dataset: str, question: str, setup: str, result: str, **kwargs: Any) -> Path:
        body = {"ok": {"result": result, "stats": stats(**kwargs)}}
        return self.raw(dataset, question, f"{setup}.json", json.dumps(body, indent=2))

    def error(self, dataset: str, question: str, setup: str, message: str = "boom") -> Path:
        return self.raw(dataset, question, f"{setup}.json", json.dumps({"error": message}))


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


@pytest.fixture(autouse=True)
def _no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("KAGREPORT_DEBUG", raising=False)


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None) -> Any:
    """Run the installed ``kagreport`` as a subprocess; return the CompletedProcess."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "kagreport", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        check=False,
    )


def brute_frontier(points: dict[str, tuple[float, float]]) -> dict[str, bool]:
    """The Pareto frontier by its definition, pair by pair (an oracle for the tests).

    ``points`` maps a name to (cost, accuracy). A point is on the frontier unless another
    has cost <= and accuracy >=, one of them strictly; NaN points are never on it and
    dominate nothing.
    """
    valid = {k: p for k, p in points.items() if not (math.isnan(p[0]) or math.isnan(p[1]))}

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] <= b[0] and a[1] >= b[1] and (a[0] < b[0] or a[1] > b[1])

    return {
        k: k in valid and not any(dominates(q, valid[k]) for j, q in valid.items() if j != k)
        for k in points
    }

"""Runs built in memory for the gate's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kagreport.runs import Run


def make_run(
    scores: Mapping[str, Mapping[tuple[str, str], float]],
    metric: str = "correct",
    metadata: Mapping[str, Any] | None = None,
) -> Run:
    """A run from ``{system: {(dataset, question): value}}`` (one metric)."""
    systems = list(scores)
    datasets: dict[str, int] = {}
    questions: dict[str, int] = {}
    rows: list[tuple[int, int, int, float]] = []
    for k, system in enumerate(systems):
        for (dataset, question), value in scores[system].items():
            d = datasets.setdefault(dataset, len(datasets))
            q = questions.setdefault(question, len(questions))
            rows.append((k, d, q, value))
    columns = np.array(rows, dtype=np.float64).reshape(-1, 4)
    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=tuple(datasets),
        question_names=tuple(questions),
        system=columns[:, 0].astype(np.int32),
        dataset=columns[:, 1].astype(np.int32),
        question=columns[:, 2].astype(np.int32),
        outcome=np.full(len(rows), -1, dtype=np.int8),
        metrics={metric: columns[:, 3].copy()},
        metadata=dict(metadata or {}),
    )


def one_system(
    system: str, values: Sequence[float], dataset: str = "ds", metric: str = "correct"
) -> Run:
    """One system scoring ``values`` on questions q0, q1, ... of one dataset."""
    return make_run({system: {(dataset, f"q{i}"): v for i, v in enumerate(values)}}, metric)

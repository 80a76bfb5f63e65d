"""``kagreport compare`` on two runs of any format: one system each, paired by item."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import DifferentItemsError, NoSharedItemsError, UsageError
from kagreport._format import plural
from kagreport.runs._columns import TEXTS
from kagreport.sources._registry import _FORMATS, read_run

if TYPE_CHECKING:
    from kagreport.evaluation import EvaluationComparison
    from kagreport.runs import Run

__all__ = ["compare_files", "join_runs"]


def join_runs(runs: Sequence[Run], labels: Sequence[str] | None = None) -> Run:
    """One run holding the systems of ``runs`` side by side, items matched by name.

    Items are identified by (dataset name, question name), so the same sample of two
    tools' logs is one item; a metric or cost one run lacks is NaN in its rows, texts
    one run lacks are None (the others are read whole: a lazy column is not kept lazy).

    Raises
    ------
    UsageError
        If the runs mix kinds, no run is given, or system names repeat (pass ``labels``,
        one per system of all runs, in order).
    """
    from kagreport.runs import Run

    if not runs:
        raise UsageError("joining runs needs at least one run")
    if len({r.kind for r in runs}) > 1:
        raise UsageError("runs of answers and of retrieval cannot be joined")
    systems = [s for r in runs for s in r.systems] if labels is None else list(labels)
    if len(systems) != sum(len(r.systems) for r in runs):
        total = sum(len(r.systems) for r in runs)
        raise UsageError(f"{plural(len(systems), 'label')} for {plural(total, 'system')}")
    if len(set(systems)) != len(systems):
        raise UsageError(f"system names repeat across the runs: {', '.join(systems)}")
    datasets = sorted({d for r in runs for d in r.dataset_names})
    questions = sorted({q for r in runs for q in r.question_names})
    d_code = {name: k for k, name in enumerate(datasets)}
    q_code = {name: k for k, name in enumerate(questions)}
    metrics = sorted({m for r in runs for m in r.metrics})
    costs = sorted({c for r in runs for c in r.costs})
    parts: dict[str, list[np.ndarray]] = {"system": [], "dataset": [], "question": []}
    parts["outcome"] = []
    metric_parts: dict[str, list[np.ndarray]] = {m: [] for m in metrics}
    cost_parts: dict[str, list[np.ndarray]] = {c: [] for c in costs}
    texts: dict[str, list[Any]] = {name: [] for name in TEXTS}
    offset = 0
    for r in runs:
        n = len(r)
        parts["system"].append(r.system.astype(np.int32) + offset)
        dataset_map = np.array([d_code[name] for name in r.dataset_names] or [0], np.int32)
        question_map = np.array([q_code[name] for name in r.question_names] or [0], np.int32)
        parts["dataset"].append(dataset_map[r.dataset] if n else np.zeros(0, np.int32))
        parts["question"].append(question_map[r.question] if n else np.zeros(0, np.int32))
        parts["outcome"].append(r.outcome.astype(np.int8))
        for name, out in ((m, metric_parts[m]) for m in metrics):
            out.append(r.metrics.get(name, np.full(n, np.nan)))
        for name, out in ((c, cost_parts[c]) for c in costs):
            out.append(r.costs.get(name, np.full(n, np.nan)))
        for name, column in texts.items():
            values = getattr(r, name)
            column.extend(values if values is not None else [None] * n)
        offset += len(r.systems)
    first = runs[0]
    return Run(
        kind=first.kind,
        systems=tuple(systems),
        dataset_names=tuple(datasets),
        question_names=tuple(questions),
        system=np.concatenate(parts["system"]).astype(np.int32),
        dataset=np.concatenate(parts["dataset"]).astype(np.int32),
        question=np.concatenate(parts["question"]).astype(np.int32),
        outcome=np.concatenate(parts["outcome"]).astype(np.int8),
        metrics={m: np.concatenate(v).astype(np.float64) for m, v in metric_parts.items()},
        costs={c: np.concatenate(v).astype(np.float64) for c, v in cost_parts.items()},
        metadata={"source": "joined", "runs": [dict(r.metadata) for r in runs]},
        **{
            name: None if all(getattr(r, name) is None for r in runs) else tuple(values)
            for name, values in texts.items()
        },
    )


def is_run_path(path: str | os.PathLike[str]) -> bool:
    """Whether some reader of :data:`FORMATS` recognises ``path``."""
    from pathlib import Path

    where = Path(path)
    return where.exists() and any(f.detect(where) for f in _FORMATS.values())


def compare_files(
    candidate: str | os.PathLike[str],
    baseline: str | os.PathLike[str],
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    shared_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Compare two files (``kagreport compare``): evaluation reports, or two runs.

    Two evaluation reports go to ``kagreport.evaluation.compare_report_files``. Two
    runs of any format :func:`read_run` reads, one system each, are joined by item name
    and compared with :func:`kagreport.runs.compare_setups` on the items both hold: runs
    whose items differ are refused unless ``shared_only``, and the comparison's metadata
    states the items each run holds, and how many of them only it holds (left out):
    ``items_in_candidate``, ``items_in_baseline``, ``items_only_in_candidate``,
    ``items_only_in_baseline``. ``metrics`` default every metric both hold.

    Raises
    ------
    NoSharedItemsError
        If the two runs (or reports) share no item: one line naming both files (a
        UsageError, exit code 2).
    DifferentItemsError
        If their items differ and ``shared_only`` is False: the message counts them.
    UsageError
        If a run holds more than one system, the runs share no metric, or one file is a
        run and the other an evaluation report.
    KagreportError
        As the readers and the comparison.
    """
    from kagreport.evaluation._files import compare_report_files
    from kagreport.runs import compare_setups

    runs = [is_run_path(candidate), is_run_path(baseline)]
    if not any(runs):
        return compare_report_files(
            candidate,
            baseline,
            n_resamples=n_resamples,
            seed=seed,
            shared_only=shared_only,
            metrics=metrics,
        )
    if not all(runs):
        raise UsageError(
            f"{candidate if not runs[0] else baseline} is not a run while the other file "
            "is: compare two evaluation reports or two runs"
        )
    pair = [read_run(candidate), read_run(baseline)]
    for path, run in zip((candidate, baseline), pair, strict=True):
        if len(run.systems) != 1:
            raise UsageError(
                f"{path} holds {len(run.systems)} systems ({', '.join(run.systems)}); "
                "compare needs one per file"
            )
    labels = [pair[0].systems[0], pair[1].systems[0]]
    if labels[0] == labels[1]:
        labels = [f"{labels[0]} ({os.fspath(candidate)})", f"{labels[1]} ({os.fspath(baseline)})"]
    items = [
        {
            (r.dataset_names[d], r.question_names[q])
            for d, q in zip(r.dataset.tolist(), r.question.tolist(), strict=True)
        }
        for r in pair
    ]
    if not items[0] & items[1]:
        raise NoSharedItemsError(
            f"cannot compare {os.fspath(candidate)} with {os.fspath(baseline)}: the runs share "
            "no item (items are paired by dataset and question name)",
            only_candidate=len(items[0]),
            only_baseline=len(items[1]),
        )
    counts = {
        "items_in_candidate": len(items[0]),
        "items_in_baseline": len(items[1]),
        "items_only_in_candidate": len(items[0] - items[1]),
        "items_only_in_baseline": len(items[1] - items[0]),
    }
    if (counts["items_only_in_candidate"] or counts["items_only_in_baseline"]) and not shared_only:
        raise DifferentItemsError(
            f"cannot compare {os.fspath(candidate)} with {os.fspath(baseline)}: they hold "
            f"different items ({counts['items_in_candidate']} in the candidate, "
            f"{counts['items_only_in_candidate']} of them only there; "
            f"{counts['items_in_baseline']} in the baseline, "
            f"{counts['items_only_in_baseline']} only there); --shared (shared_only=True) "
            f"compares the {len(items[0] & items[1])} items both hold",
            only_candidate=counts["items_only_in_candidate"],
            only_baseline=counts["items_only_in_baseline"],
        )
    joined = join_runs(pair, labels)
    shared = sorted(set(pair[0].metrics) & set(pair[1].metrics))
    chosen = list(metrics) if metrics is not None else shared
    missing = [m for m in chosen if m not in shared]
    if not chosen or missing:
        raise UsageError(
            f"the runs share no metric {', '.join(map(repr, missing))}"
            if missing
            else "the two runs share no metric"
        )
    if "correct" in chosen:  # the first metric decides the flipped items
        chosen.remove("correct")
        chosen.insert(0, "correct")
    found = compare_setups(
        joined, metrics=chosen, baseline=labels[1], n_resamples=n_resamples, seed=seed
    )
    comparison = found.comparisons[0].comparison
    return dataclasses.replace(comparison, metadata={**comparison.metadata, **counts})

"""kag's per-setup metrics (outcome counts, mean times, retrieval means) from a run.

``setup_metrics`` sums a run's columns per (system, dataset) into the
:class:`kagreport.grading.Metrics` that ``kag stats`` reports, so a table or chart of a
run built from evaluations shows the same numbers as one of the graded tree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kagreport._errors import KagreportError
from kagreport._format import plural
from kagreport.grading._grade import setup_reports
from kagreport.grading._report import SetupReport
from kagreport.kag._jsonfmt import dumps_pretty
from kagreport.runs._model import Run

__all__ = ["kag_stats_json", "setup_metrics"]

# Sums per (system, dataset) group, in the order Metrics and RetrievalMetrics take them.
_SUMS = (
    "correct",
    "incorrect",
    "errors",
    "generation_ns",
    "generation_samples",
    "context_bytes",
    "retrieval_ns",
    "vertices",
    "relationships",
    "properties",
    "retrieval_samples",
)


def _nanoseconds(seconds: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Whole nanoseconds of float seconds (0 where NaN).

    The item table holds integer nanoseconds and gives seconds as ``ns / 1e9``; for any
    time below 2**52 ns (52 days) rounding ``seconds * 1e9`` gives the integer back, so
    the sums are kag's integer sums and the means kag's ``Duration::div_f64``.
    """
    nanoseconds: np.ndarray[Any, Any] = np.rint(np.nan_to_num(seconds, nan=0.0) * 1e9)
    return nanoseconds.astype(np.int64)


def setup_metrics(run: Run) -> tuple[SetupReport, ...]:
    """kag's metrics of each system of ``run``, overall and per dataset.

    Per (system, dataset): ``correct``/``incorrect``/``errors`` count the rows of each
    outcome; the generation time and context length are summed over the committed
    answers (outcome correct or incorrect) where the run records them; a retrieval
    sample is a committed answer with a retrieval time, its graph elements summed
    alongside. A run without the ``retrieval_secs`` column has no retrieval metrics.
    For a run from :meth:`Run.from_stats` the result equals ``report.setups``
    (kag ``metric.rs``; times summed as integer nanoseconds).

    Returns
    -------
    tuple of SetupReport
        Ranked as kag ranks setups: accuracy descending (None last), then name;
        ``per_dataset`` sorted by dataset name. Systems without rows are left out.

    Raises
    ------
    KagreportError
        If a row has no outcome (code -1: an item of an evaluation without a
        ``correct`` score or error); the message names the system and item.
    """
    unknown = np.flatnonzero(run.outcome < 0)
    if len(unknown):
        row = int(unknown[0])
        why = (
            "its 'correct' is not 0 or 1 there"
            if "correct" in run.metrics
            else "the run has no metric 'correct'"
        )
        raise KagreportError(
            f"kag's metrics need each row's outcome (correct, incorrect or error); "
            f"{plural(len(unknown), 'row')} of the run {'has' if len(unknown) == 1 else 'have'} "
            "none, the first "
            f"{run.item_label(row)!r} of system {run.systems[run.system[row]]!r} "
            f"({why}; metrics: {', '.join(run.metrics) or 'none'})"
        )
    n_datasets = max(1, len(run.dataset_names))
    group = run.system.astype(np.int64) * n_datasets + run.dataset
    size = len(run.systems) * n_datasets
    committed = run.outcome <= 1
    sums = np.zeros((len(_SUMS), size), dtype=np.int64)
    for k in range(3):
        np.add.at(sums[k], group, run.outcome == k)
    generation = run.costs.get("generation_secs")
    if generation is not None:
        timed = committed & ~np.isnan(generation)
        np.add.at(sums[3], group[timed], _nanoseconds(generation[timed]))
        np.add.at(sums[4], group, timed)
    context = run.costs.get("context_bytes")
    if context is not None:
        sized = committed & ~np.isnan(context)
        np.add.at(sums[5], group[sized], np.rint(context[sized]).astype(np.int64))
    retrieval = run.costs.get("retrieval_secs")
    if retrieval is not None:
        sampled = committed & ~np.isnan(retrieval)
        np.add.at(sums[6], group[sampled], _nanoseconds(retrieval[sampled]))
        for k, name in zip(range(7, 10), ("vertices", "relationships", "properties"), strict=True):
            if name in run.costs:
                counts = np.nan_to_num(run.costs[name][sampled], nan=0.0)
                np.add.at(sums[k], group[sampled], np.rint(counts).astype(np.int64))
        np.add.at(sums[10], group, sampled)
    totals = sums[0] + sums[1] + sums[2]
    by_system: dict[str, dict[str, list[int]]] = {}
    for s, system in enumerate(run.systems):
        present = [d for d in range(len(run.dataset_names)) if totals[s * n_datasets + d] > 0]
        if present:
            by_system[system] = {
                run.dataset_names[d]: sums[:, s * n_datasets + d].tolist() for d in present
            }
    return tuple(setup_reports(by_system))


def kag_stats_json(run: Run) -> str | None:
    """``kag stats --format json`` of a kag run, byte for byte: the counts kept in its
    metadata and ``kagreport.runs.setup_metrics`` of its rows; None for a run that did
    not come from a kag tree (no ``kag_stats`` metadata).
    """
    counts = run.metadata.get("kag_stats")
    if not isinstance(counts, dict):
        return None
    document = {
        "datasets": counts["datasets"],
        "scorable_questions": counts["scorable_questions"],
        "skipped_files": counts["skipped_files"],
        "setups": [s.to_dict() for s in setup_metrics(run)],
    }
    return dumps_pretty(document) + "\n"

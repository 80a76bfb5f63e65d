"""HELM runs (as :mod:`kagreport.sources._helm` reads them) into one :class:`Run`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["MAIN_METRICS", "HelmRun", "Item", "build_run", "is_bookkeeping"]

#: The metrics ``correct`` is taken from: the first a run records with 0/1 values.
MAIN_METRICS = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
)
#: HELM's token-count stats and the cost columns they become.
_TOKENS = {"num_prompt_tokens": "input_tokens", "num_output_tokens": "output_tokens"}
#: Stats HELM records beside the scores (its general-information and efficiency stats, the
#: request's bookkeeping, and the inputs of metrics it derives over a whole run: perplexity
#: and bits per byte from logprob and num_bytes, calibration error from max_prob). Not scores:
#: never tested or ranked.
_BOOKKEEPING_PREFIXES = ("num_", "max_num_", "finish_reason_", "training_")
_BOOKKEEPING = frozenset({"batch_size", "prompt_truncated", "logprob", "max_prob"})


def is_bookkeeping(stat: str) -> bool:
    """Whether HELM's per-instance stat ``stat`` is bookkeeping rather than a score: a
    count (``num_*``, ``max_num_*``, ``batch_size``, ``prompt_truncated``), a finish reason
    (``finish_reason_*``), a cost (``training_co2_cost``, ``training_energy_cost``, a
    ``*_runtime``), or an input of a run-level metric (``logprob``, ``max_prob``)."""
    return (
        stat.startswith(_BOOKKEEPING_PREFIXES) or stat.endswith("_runtime") or stat in _BOOKKEEPING
    )


#: Run.outcome codes (indices into kagreport.runs.OUTCOMES).
_CORRECT, _INCORRECT, _ERROR = 0, 1, 2
_CONVENTION = (
    "items are the instances of the split HELM evaluates (test, else valid); a perturbed "
    "instance is an item of the dataset '<dataset> [<perturbation name>]'; a metric is the "
    "instance's stat mean, averaged over its train trials (stats.json holds, per metric, the "
    "mean over trials of the mean over instances, the instances summed in file order)"
)


@dataclass
class Item:
    """One (instance, perturbation) of a run: per-trial stat values and request data."""

    instance_id: str
    perturbation: dict[str, Any] | None
    trials: dict[int, dict[str, float]] = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)
    failed: str | None = None
    any_failed: bool = False
    response: str | None = None
    reference: str | None = None
    question_text: str | None = None

    def metrics(self) -> dict[str, float]:
        """Each stat's value, the mean over the train trials when there are several."""
        names = dict.fromkeys(n for values in self.trials.values() for n in values)
        out = {}
        for name in names:
            values = [v.get(name, math.nan) for v in self.trials.values()]
            out[name] = values[0] if len(values) == 1 else sum(values) / len(values)
        return out

    def generation_secs(self) -> float:
        """The item's summed request_time, averaged over trials (NaN without requests)."""
        if not self.seconds:
            return math.nan
        return sum(self.seconds.values()) / len(self.seconds)


@dataclass
class HelmRun:
    """One run folder as read."""

    folder: str
    name: str
    model: str
    model_deployment: str
    num_train_trials: int
    dataset: str
    split: str | None
    items: list[Item]
    has_requests: bool
    has_stats: bool


def _main_metric(rows: list[dict[str, float]]) -> str | None:
    for name in MAIN_METRICS:
        values = {row[name] for row in rows if name in row}
        if values and all(math.isnan(v) or v in (0.0, 1.0) for v in values):
            return name
    return None


def _perturbation_labels(run: HelmRun) -> dict[str, str]:
    """Dataset suffix of each perturbation: its name, plus its fields if the name repeats."""
    described = {
        msgspec.json.encode(dict(sorted(i.perturbation.items()))).decode(): i.perturbation
        for i in run.items
        if i.perturbation is not None
    }
    names = [str(p.get("name")) for p in described.values()]
    return {
        key: str(p.get("name")) if names.count(str(p.get("name"))) == 1 else key
        for key, p in described.items()
    }


def _system_names(runs: list[HelmRun]) -> list[str]:
    """A system per model; a run whose model already has its dataset gets its run name."""
    names = []
    taken: set[tuple[str, str]] = set()
    for run in runs:
        name = run.model or run.model_deployment or run.folder
        if (name, run.dataset) in taken:
            name = f"{name} [{run.name}]"
        taken.add((name, run.dataset))
        names.append(name)
    return names


def build_run(runs: list[HelmRun]) -> Run:
    """The runs as one :class:`Run` (rows: runs in order, items in file order)."""
    system_names = _system_names(runs)
    systems = list(dict.fromkeys(system_names))
    datasets: dict[str, int] = {}
    questions: dict[str, int] = {}
    codes: list[tuple[int, int, int]] = []
    rows: list[dict[str, float]] = []
    kept: list[Item] = []
    outcome: list[int] = []
    metadata: dict[str, Any] = {
        "tool": "helm",
        "convention": _CONVENTION,
        "correct_from": list(MAIN_METRICS),
        "runs": {},
    }
    for run, system in zip(runs, system_names, strict=True):
        labels = _perturbation_labels(run)
        values = [item.metrics() for item in run.items]
        main = _main_metric(
            [v for v, i in zip(values, run.items, strict=True) if not i.perturbation]
        )
        metadata["runs"][run.folder] = {
            "run_spec": run.name,
            "system": system,
            "model": run.model,
            "model_deployment": run.model_deployment,
            "dataset": run.dataset,
            "split": run.split,
            "num_train_trials": run.num_train_trials,
            "correct": main,
            "stats_json": run.has_stats,
            "scenario_state_json": run.has_requests,
        }
        for item, row in zip(run.items, values, strict=True):
            dataset = run.dataset
            if item.perturbation is not None:
                key = msgspec.json.encode(dict(sorted(item.perturbation.items()))).decode()
                dataset = f"{dataset} [{labels[key]}]"
            if main is not None:
                row["correct"] = row.get(main, math.nan)
            code = -1
            if item.any_failed:
                code = _ERROR
            elif row.get("correct") == 1.0:
                code = _CORRECT
            elif row.get("correct") == 0.0:
                code = _INCORRECT
            d = datasets.setdefault(dataset, len(datasets))
            q = questions.setdefault(item.instance_id, len(questions))
            codes.append((systems.index(system), d, q))
            rows.append(row)
            kept.append(item)
            outcome.append(code)
    return _assemble(systems, datasets, questions, codes, rows, kept, outcome, metadata, runs)


def _mean(values: np.ndarray[Any, Any]) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else None


def _assemble(
    systems: list[str],
    datasets: dict[str, int],
    questions: dict[str, int],
    codes: list[tuple[int, int, int]],
    rows: list[dict[str, float]],
    items: list[Item],
    outcome: list[int],
    metadata: dict[str, Any],
    runs: list[HelmRun],
) -> Run:
    names = list(dict.fromkeys(n for row in rows for n in row))
    columns = {n: np.array([r.get(n, math.nan) for r in rows], dtype=np.float64) for n in names}
    costs = {_TOKENS[n]: columns.pop(n) for n in _TOKENS if n in columns}
    with_requests = any(run.has_requests for run in runs)
    if "inference_runtime" in columns:  # HELM's own per-instance request time
        costs["generation_secs"] = columns["inference_runtime"]
    elif with_requests:
        costs["generation_secs"] = np.array([i.generation_secs() for i in items], dtype=np.float64)
    kept = {n: v for n, v in columns.items() if not is_bookkeeping(n)}
    system = np.array([c[0] for c in codes], dtype=np.int64)
    # The rest, per system: the mean over its items (null where it never recorded one).
    metadata["bookkeeping"] = {
        name: {s: _mean(values[system == index]) for index, s in enumerate(systems)}
        for name, values in columns.items()
        if name not in kept
    }
    columns = kept
    from kagreport.runs import Run

    code = np.array(codes, dtype=np.int32).reshape(-1, 3)
    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=tuple(datasets),
        question_names=tuple(questions),
        system=code[:, 0].copy(),
        dataset=code[:, 1].copy(),
        question=code[:, 2].copy(),
        outcome=np.array(outcome, dtype=np.int8),
        metrics=columns,
        costs=costs,
        responses=tuple(i.response for i in items) if with_requests else None,
        references=tuple(i.reference for i in items) if with_requests else None,
        question_texts=tuple(i.question_text for i in items) if with_requests else None,
        errors=tuple(i.failed for i in items) if with_requests else None,
        metadata=metadata,
    )

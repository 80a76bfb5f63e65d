"""HELM runs (as :mod:`kagreport.sources._helm` reads them) into one :class:`Run`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["MAIN_METRICS", "HelmRun", "Item", "build_run", "is_bookkeeping", "stat_label"]

#: The metrics ``correct`` is taken from: the first a run records with 0/1 values.
MAIN_METRICS = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
)
#: HELM's token-count stats and the cost columns they become.
_TOKENS = {"num_prompt_tokens": "input_tokens", "num_output_tokens": "output_tokens"}
#: The stats HELM records beside the scores, by the shape of their names: counts
#: (``num_*``, ``max_num_*``, ``batch_size``), the request's bookkeeping
#: (``finish_reason_*``, ``prompt_truncated``, ``predicted_index``), costs (``training_*``,
#: ``*_runtime``, ``*_cost``), and the inputs of metrics HELM derives over a whole run
#: (perplexity and bits per byte from ``logprob`` and ``num_bytes``, calibration error from
#: ``max_prob``). HELM's own schemas list these as its "infrastructure" metrics and show
#: them in the "efficiency" and "general information" metric groups, never as accuracy.
_BOOKKEEPING_PREFIXES = ("num_", "max_num_", "finish_reason_", "training_")
_BOOKKEEPING_SUFFIXES = ("_runtime", "_cost")
_BOOKKEEPING = frozenset(
    {"batch_size", "prompt_truncated", "predicted_index", "logprob", "max_prob"}
)


def is_bookkeeping(stat: str, not_scores: frozenset[str] = frozenset()) -> bool:
    """Whether HELM's per-instance stat ``stat`` is bookkeeping rather than a score.

    Bookkeeping is a count (``num_*``, ``max_num_*``, ``batch_size``), the request's
    bookkeeping (``finish_reason_*``, ``prompt_truncated``, ``predicted_index``), a cost
    (``training_*``, ``*_runtime``, ``*_cost``), an input of a run-level metric
    (``logprob``, ``max_prob``), or a stat named in ``not_scores``: the metrics a suite's
    ``schema.json`` (written by ``helm-summarize``) puts in its ``efficiency`` and
    ``general_information`` metric groups. Anything else is a score.
    """
    return (
        stat in not_scores
        or stat.startswith(_BOOKKEEPING_PREFIXES)
        or stat.endswith(_BOOKKEEPING_SUFFIXES)
        or stat in _BOOKKEEPING
    )


def stat_label(name: str, perturbation: dict[str, Any] | None) -> str:
    """A stats.json entry's name: the stat, with ``[<perturbation>/<computed_on>]`` when it
    is computed on perturbed instances (``f1_score [robustness/worst]``)."""
    if perturbation is None:
        return name
    return f"{name} [{perturbation.get('name')}/{perturbation.get('computed_on')}]"


#: Run.outcome codes (indices into runs._columns.OUTCOMES).
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
    options: tuple[tuple[str, str], ...] | None = None

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
    groups: list[str] = field(default_factory=list)
    #: stats.json's entries of the evaluated split: label (:func:`stat_label`) -> (sum, count)
    stats: dict[str, tuple[float, int]] = field(default_factory=dict)


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


def _stated(run: HelmRun, not_scores: frozenset[str]) -> dict[str, float]:
    """stats.json's means of the run's scores and costs (the numbers HELM states)."""
    return {
        label: total / count
        for label, (total, count) in run.stats.items()
        if count and _shown(label.partition(" [")[0], not_scores)
    }


def _shown(stat: str, not_scores: frozenset[str]) -> bool:
    return not is_bookkeeping(stat, not_scores) or stat in _TOKENS or stat == "inference_runtime"


def _groups(
    runs: list[HelmRun],
    system_names: list[str],
    not_scores: frozenset[str],
    main_names: dict[str, str],
) -> dict[str, Any]:
    """helm-summarize's numbers per run group and system: each stat merged over the
    group's runs of the system the way HELM merges a ``Stat`` (sums and counts added, the
    mean their quotient), so a run with 3 train trials weighs 3 times one with 1."""
    pooled: dict[str, dict[str, dict[str, list[float]]]] = {}
    for run, system in zip(runs, system_names, strict=True):
        for group in run.groups:
            stats = pooled.setdefault(group, {}).setdefault(system, {})
            for label, (total, count) in run.stats.items():
                if _shown(label.partition(" [")[0], not_scores):
                    sums = stats.setdefault(label, [0.0, 0.0])
                    sums[0] += total
                    sums[1] += count
    return {
        group: {
            "main": main_names.get(group),
            "systems": {
                system: {label: t / c for label, (t, c) in stats.items() if c}
                for system, stats in by_system.items()
            },
        }
        for group, by_system in pooled.items()
    }


def build_run(
    runs: list[HelmRun],
    not_scores: frozenset[str] = frozenset(),
    main_names: dict[str, str] | None = None,
) -> Run:
    """The runs as one :class:`Run` (rows: runs in order, items in file order).

    ``not_scores`` are stats a schema puts among the non-scores (:func:`is_bookkeeping`),
    ``main_names`` each run group's main metric (a schema's ``environment.main_name``).
    """
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
    groups = _groups(runs, system_names, not_scores, main_names or {})
    if groups:
        metadata["groups"] = groups
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
            "groups": run.groups,
            "stats": _stated(run, not_scores),
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
    # The headline: HELM's accuracy metric (the first of MAIN_METRICS) where every item of
    # every run has it, a mean over trials as stats.json's; ``correct`` is defined only for
    # the runs whose values are 0 or 1, so ranking by it would rank systems on other items.
    headline = next((m for m in MAIN_METRICS if rows and all(m in r for r in rows)), None)
    if headline is not None:
        metadata["headline"] = headline
    return _assemble(
        systems, datasets, questions, codes, rows, kept, outcome, metadata, runs, not_scores
    )


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
    not_scores: frozenset[str],
) -> Run:
    names = list(dict.fromkeys(n for row in rows for n in row))
    columns = {n: np.array([r.get(n, math.nan) for r in rows], dtype=np.float64) for n in names}
    costs = {_TOKENS[n]: columns.pop(n) for n in _TOKENS if n in columns}
    with_requests = any(run.has_requests for run in runs)
    if "inference_runtime" in columns:  # HELM's own per-instance request time
        costs["generation_secs"] = columns["inference_runtime"]
    elif with_requests:
        costs["generation_secs"] = np.array([i.generation_secs() for i in items], dtype=np.float64)
    kept = {n: v for n, v in columns.items() if not is_bookkeeping(n, not_scores)}
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
        options=tuple(i.options for i in items) if any(i.options for i in items) else None,
        metadata=metadata,
    )

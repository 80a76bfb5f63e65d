"""Inspect AI eval logs (format name ``"inspect"``): ``.eval`` and ``.json`` logs of log
format version 2, or a folder of them, read into a :class:`Run`.

Mapping: one system per log (``eval.model``; ``"<model> (<task_id>)"`` when several
logs share a model), an item per (``eval.task``, sample ``id``). Each scorer gives a
metric named as the scorer (a dict or list score gives ``"<scorer>/<key>"``), the value
mapped by inspect's ``value_to_float`` (``C``/yes/true 1, ``P`` 0.5, ``I``/``N``/no/false
0, numbers as they are, numeric strings parsed, anything else 0). Samples of several
epochs are reduced as inspect reduced them: the log's own ``reductions`` (its first
reducer per scorer) when it has them, else the reducer of ``eval.config.epochs_reducer``
(mean by default); run metadata ``epochs`` records which. Every epoch's score is
kept too: metadata ``systems[<name>]["epoch_scores"]`` maps each item (``"task/id"``) to
its metrics' scores, one per epoch (null where unscored): the epochs of a sample are
repeats of it, one cluster (:func:`kagreport.runs.repeat_scores`). ``correct`` is the first
scorer's metric when its values are all 0 or 1 (no partial credit), and the outcome
follows it; a sample with an ``error`` (any epoch) has outcome ``error`` and the
message in ``errors``. Costs (the mean over epochs): ``input_tokens`` and
``output_tokens`` summed over the sample's models, ``cost_usd`` (``total_cost``) when
the log has it, ``generation_secs`` = ``total_time`` (wall clock) and ``working_secs`` =
``working_time`` (without waits). The response is the first epoch's first output
choice, the reference the target; the first scorer's answer and explanation are in
metadata ``systems[<name>]["answers"]`` (question -> [answer, explanation]).
"""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import DocumentError
from kagreport.sources._inspect_log import Log, Sample, is_log, read_log

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["is_inspect", "read_inspect", "value_to_float"]

_CORRECT, _INCORRECT, _ERROR = 0, 1, 2
_COSTS = ("input_tokens", "output_tokens", "cost_usd", "generation_secs", "working_secs")


_CONVENTION = (
    "one system per log; an item per (task, sample id); epochs reduced per scorer as the "
    "log's reductions say (else its epochs_reducer, default mean); correct from the first "
    "scorer where its values are 0 or 1; Inspect's stderr is the sample standard deviation "
    "over the square root of n"
)


def value_to_float(value: Any) -> float:
    """A score value as inspect's default ``value_to_float()`` maps it."""
    if isinstance(value, bool | int | float):
        return float(value)
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value in ("I", "N"):
        return 0.0
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(value)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    return 0.0  # inspect warns and counts 0 for a list, dict or None


def _flat(scorer: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {f"{scorer}/{key}": v for key, v in value.items()}
    if isinstance(value, list):
        return {f"{scorer}/{i}": v for i, v in enumerate(value)}
    return {scorer: value}


def _pass_at(k: int, values: list[float]) -> float:
    total, passed = len(values), sum(v >= 1.0 for v in values)
    if k > total:
        return math.nan
    if total - passed < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(total - passed + 1, total + 1)))


def _reducer(name: str) -> Callable[[list[Any]], float] | None:
    """inspect's reducer ``name`` on scalar values (None for one kagreport lacks)."""
    floats: dict[str, Callable[[list[float]], float]] = {
        "mean": statistics.mean,
        "median": statistics.median,
        "max": max,
    }
    if name in floats:
        return lambda raw: float(floats[name]([value_to_float(v) for v in raw]))
    if name == "mode":  # of the values as they are; a list or dict counts as its float
        return lambda raw: value_to_float(
            Counter(
                v if isinstance(v, str | int | float) else value_to_float(v) for v in raw
            ).most_common(1)[0][0]
        )
    head, _, k = name.rpartition("_")
    if head == "at_least" and k.isdigit():
        return lambda raw: float(sum(value_to_float(v) >= 1.0 for v in raw) >= int(k))
    if head == "pass_at" and k.isdigit():
        return lambda raw: _pass_at(int(k), [value_to_float(v) for v in raw])
    return None


def is_inspect(path: Path) -> bool:
    """Whether ``path`` is an inspect log or a folder holding one (never raises)."""
    if path.is_dir():
        try:
            return any(is_log(child) for child in sorted(path.iterdir())[:50])
        except OSError:
            return False
    return is_log(path)


def _text(content: Any) -> str | None:
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return str(content)


def _input(sample: Sample) -> str | None:
    """The sample's input as a text: the string, or its user messages' text."""
    given = sample.input
    if isinstance(given, list):
        parts = [
            _text(m.get("content"))
            for m in given
            if isinstance(m, dict) and m.get("role", "user") == "user"
        ]
        return "\n\n".join(p for p in parts if p) or None
    return _text(given)


def _options(sample: Sample) -> tuple[tuple[str, str], ...] | None:
    """A multiple-choice sample's choices, lettered A, B, ... as Inspect letters them."""
    if not sample.choices:
        return None
    return tuple((chr(ord("A") + k), str(c)) for k, c in enumerate(sample.choices[:26]))


def _explanation(sample: Sample) -> str | None:
    """The first scorer's explanation of the sample, as Inspect's viewer shows it."""
    first = next(iter((sample.scores or {}).values()), None)
    return None if first is None else first.explanation


def _error(sample: Sample) -> str | None:
    error = sample.error
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return None if error is None else str(error)


class _Item:
    """One sample id of a log: its epochs and reduced values."""

    def __init__(self, epochs: list[Sample]) -> None:
        self.epochs = sorted(epochs, key=lambda s: s.epoch)
        self.values: dict[str, float] = {}
        #: Each metric's score in every epoch (in epoch order; NaN where unscored).
        self.per_epoch: dict[str, list[float]] = {}


def _group(log: Log) -> dict[int | str, _Item]:
    by_id: dict[int | str, list[Sample]] = {}
    seen: set[tuple[int | str, int]] = set()
    for sample in log.samples:
        if (sample.id, sample.epoch) in seen:
            raise DocumentError(
                f"{log.path}: sample {sample.id!r} epoch {sample.epoch} appears twice",
                path=log.path,
            )
        seen.add((sample.id, sample.epoch))
        by_id.setdefault(sample.id, []).append(sample)
    order = sorted(by_id, key=lambda i: (isinstance(i, str), i))
    return {i: _Item(by_id[i]) for i in order}


def _reduce(log: Log, items: dict[int | str, _Item]) -> dict[str, Any]:
    """Fill each item's metric values; the convention used, for metadata."""
    reducers = log.header.eval.config.epochs_reducer or ["mean"]
    name = reducers[0] if isinstance(reducers, list) else reducers
    epochs = max((len(item.epochs) for item in items.values()), default=1)
    used: dict[str, Any] = {"epochs": epochs, "reducer": name}
    reduced: dict[str, dict[int | str | None, Any]] = {}
    for reduction in log.reductions or []:
        if reduction.scorer not in reduced:  # the first reducer of each scorer
            reduced[reduction.scorer] = {s.sample_id: s.value for s in reduction.samples}
    if reduced and epochs > 1:
        used["source"] = "the log's reductions"
    elif epochs > 1:
        used["source"] = "eval.config.epochs_reducer"
    reduce = _reducer(name)
    if epochs > 1 and not reduced and reduce is None:
        where = f"{log.path}: eval.config.epochs_reducer"
        raise DocumentError(f"{where}: reducer {name!r} is not one kagreport applies")
    for sample_id, item in items.items():
        per_epoch: dict[str, list[Any]] = {}
        for at, sample in enumerate(item.epochs):
            for scorer, score in (sample.scores or {}).items():
                for key, value in _flat(scorer, score.value).items():
                    per_epoch.setdefault(key, []).append(value)
                    scores = item.per_epoch.setdefault(key, [math.nan] * len(item.epochs))
                    scores[at] = value_to_float(value)
        for key, raw in per_epoch.items():
            item.values[key] = value_to_float(raw[0])
            if len(item.epochs) > 1 and reduce is not None:
                item.values[key] = reduce(raw)
        for scorer, by_sample in reduced.items():
            if sample_id in by_sample:
                for key, value in _flat(scorer, by_sample[sample_id]).items():
                    item.values[key] = value_to_float(value)
    return used


def _scorers(log: Log, items: dict[int | str, _Item]) -> list[str]:
    names: dict[str, None] = {}
    if log.header.results is not None:
        names.update((s.scorer, None) for s in log.header.results.scores)
    for item in items.values():
        for sample in item.epochs:
            names.update(dict.fromkeys(sample.scores or {}))
    return list(names)


def read_inspect(path: str | os.PathLike[str], *, summaries_only: bool = False) -> Run:
    """Read an inspect log (``.eval`` or ``.json``, log format 2), or a folder of them
    (one system per log), into a :class:`Run`.

    Parameters
    ----------
    path : str or path-like
        A log, or a folder whose ``*.eval`` and ``*.json`` logs are read.
    summaries_only : bool
        Read a ``.eval`` log's header, summaries and reductions only (no sample
        entries): the metrics, outcomes and references come through, costs only
        where the summaries record them, the responses and scorer explanations not.

    Raises
    ------
    DocumentError
        For a corrupt or truncated log, another log format version, a field not shaped
        like inspect's, a sample id and epoch repeated in a log, a folder with no log.
    MissingExtraError
        For a zstd-compressed entry without Python 3.14 or ``kagreport[zstd]``.
    """
    path = Path(path)
    # In a folder every *.eval is a log (an empty or broken one is refused, not skipped);
    # a *.json is one when it looks like one.
    files = (
        sorted(p for p in path.iterdir() if p.suffix == ".eval" or is_log(p))
        if path.is_dir()
        else [path]
    )
    if not files:
        raise DocumentError(f"{path}: no inspect log (*.eval, *.json)", path=path)
    logs = [read_log(file, summaries_only=summaries_only) for file in files]
    models = Counter(log.header.eval.model for log in logs)
    systems: dict[str, int] = {}
    metadata: dict[str, Any] = {"tool": "inspect_ai", "convention": _CONVENTION, "systems": {}}
    rows: list[tuple[int, str, str, _Item, str | None]] = []
    metric_names: dict[str, None] = {}
    for log in logs:
        spec = log.header.eval
        name = spec.model
        if models[name] > 1:
            name = f"{name} ({spec.task_id or spec.run_id})"
        if name in systems:
            raise DocumentError(f"{log.path}: a second log of system {name!r}", path=log.path)
        systems[name] = len(systems)
        items = _group(log)
        convention = _reduce(log, items)
        scorers = _scorers(log, items)
        keys = [k for s in scorers for item in items.values() for k in item.values if _of(k, s)]
        metric_names.update(dict.fromkeys(keys))
        main = _main(scorers, items)
        if scorers:  # Inspect's headline: the first scorer's first metric (of the first log)
            first = next((k for k in keys if _of(k, scorers[0])), None)
            metadata.setdefault("headline", first)
        for sample_id, item in items.items():
            rows.append((systems[name], spec.task, str(sample_id), item, main))
        metadata["systems"][name] = _log_metadata(log, convention, main, items)
    from kagreport.runs._times import latest_time

    created = latest_time(log.header.eval.created for log in logs)
    if created is not None:  # the run's time: when its last log was started (eval.created)
        metadata["created"] = created
    return _build(tuple(systems), rows, list(metric_names), metadata, logs)


def _of(key: str, scorer: str) -> bool:
    return key == scorer or key.startswith(f"{scorer}/")


def _main(scorers: list[str], items: dict[int | str, _Item]) -> str | None:
    """The first scorer, when its (reduced) values are all 0 or 1."""
    if not scorers:
        return None
    values = [item.values.get(scorers[0], math.nan) for item in items.values()]
    values = [v for v in values if not math.isnan(v)]  # an unscored sample says nothing
    if values and all(v in (0.0, 1.0) for v in values):
        return scorers[0]
    return None


def _log_metadata(
    log: Log, convention: dict[str, Any], main: str | None, items: dict[int | str, _Item]
) -> dict[str, Any]:
    spec = log.header.eval
    results = log.header.results
    meta: dict[str, Any] = {
        "file": log.path.name,
        "task": spec.task,
        "task_id": spec.task_id,
        "run_id": spec.run_id,
        "model": spec.model,
        "created": spec.created,
        "status": log.header.status,
        "inspect_ai": spec.packages.get("inspect_ai"),
        "epochs": convention,
        "correct_from": main,
        "results": {
            s.name: {m.name: m.value for m in s.metrics.values()}
            for s in (results.scores if results else [])
        },
    }
    if max((len(item.epochs) for item in items.values()), default=1) > 1:
        # Every epoch's score: the epochs of a sample are repeats, one cluster.
        keys = dict.fromkeys(k for item in items.values() for k in item.per_epoch)
        meta["epoch_scores"] = {
            f"{spec.task}/{sample_id}": {
                key: [
                    None if math.isnan(v) else v
                    for v in item.per_epoch.get(key, [math.nan] * len(item.epochs))
                ]
                for key in keys
            }
            for sample_id, item in items.items()
        }
    if log.texts:
        answers = {}
        for sample_id, item in items.items():
            scores = item.epochs[0].scores or {}
            first = next(iter(scores.values()), None)
            if first is not None and (first.answer or first.explanation):
                answers[str(sample_id)] = [first.answer, first.explanation]
        meta["answers"] = answers
    return {k: v for k, v in meta.items() if v is not None}


def _costs(item: _Item) -> dict[str, float]:
    per: dict[str, list[float]] = {}
    for sample in item.epochs:
        usage = sample.model_usage
        if usage:
            per.setdefault("input_tokens", []).append(sum(u.input_tokens for u in usage.values()))
            per.setdefault("output_tokens", []).append(sum(u.output_tokens for u in usage.values()))
            costs = [u.total_cost for u in usage.values()]
            if any(c is not None for c in costs):
                per.setdefault("cost_usd", []).append(sum(c or 0.0 for c in costs))
        if sample.total_time is not None:
            per.setdefault("generation_secs", []).append(sample.total_time)
        if sample.working_time is not None:
            per.setdefault("working_secs", []).append(sample.working_time)
    return {name: statistics.fmean(values) for name, values in per.items()}


def _build(
    systems: tuple[str, ...],
    rows: list[tuple[int, str, str, _Item, str | None]],
    metric_names: list[str],
    metadata: dict[str, Any],
    logs: list[Log],
) -> Run:
    from kagreport.runs import Run

    tasks = list(dict.fromkeys(row[1] for row in rows))
    questions = list(dict.fromkeys(row[2] for row in rows))
    task_code = {t: i for i, t in enumerate(tasks)}
    question_code = {q: i for i, q in enumerate(questions)}
    metrics = {
        m: np.array([row[3].values.get(m, math.nan) for row in rows], dtype=np.float64)
        for m in metric_names
    }
    correct = np.array(
        [row[3].values.get(row[4], math.nan) if row[4] else math.nan for row in rows],
        dtype=np.float64,
    )
    errors = [next(filter(None, map(_error, row[3].epochs)), None) for row in rows]
    outcome = np.full(len(rows), -1, dtype=np.int8)
    outcome[correct == 1.0] = _CORRECT
    outcome[correct == 0.0] = _INCORRECT
    outcome[[e is not None for e in errors]] = _ERROR
    if not np.isnan(correct).all():
        metrics["correct"] = correct
    costs_of = [_costs(row[3]) for row in rows]
    costs = {
        name: np.array([c.get(name, math.nan) for c in costs_of], dtype=np.float64)
        for name in _COSTS
        if any(name in c for c in costs_of)
    }
    texts = all(log.texts for log in logs)
    responses = question_texts = options = None
    if texts:
        responses = tuple(_response(row[3].epochs[0]) for row in rows)
        question_texts = tuple(_input(row[3].epochs[0]) for row in rows)
        options = tuple(_options(row[3].epochs[0]) for row in rows)
        if all(o is None for o in options):
            options = None
    references = tuple(_reference(row[3].epochs[0].target) for row in rows)
    explanations = tuple(_explanation(row[3].epochs[0]) for row in rows)
    return Run(
        kind="answers",
        systems=systems,
        dataset_names=tuple(tasks),
        question_names=tuple(questions),
        system=np.array([row[0] for row in rows], dtype=np.int32),
        dataset=np.array([task_code[row[1]] for row in rows], dtype=np.int32),
        question=np.array([question_code[row[2]] for row in rows], dtype=np.int32),
        outcome=outcome,
        metrics=metrics,
        costs=costs,
        responses=responses,
        references=references,
        errors=tuple(errors) if any(e is not None for e in errors) else None,
        metadata=metadata,
        question_texts=question_texts,
        options=options,
        explanations=explanations if any(e is not None for e in explanations) else None,
    )


def _response(sample: Sample) -> str | None:
    if sample.output is None or not sample.output.choices:
        return None
    return _text(sample.output.choices[0].message.content)


def _reference(target: str | list[str]) -> str:
    # Inspect's scorers compare the target stripped (" Yes" is "Yes"): shown as they see it.
    return target.strip() if isinstance(target, str) else "\n".join(t.strip() for t in target)

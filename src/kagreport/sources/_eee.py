"""Every Eval Ever (EEE) schema 0.3 files, read and written (format name ``"eee"``).

Reading (:func:`read_eee`): an aggregate ``<uuid>.json`` or a folder of them (searched up
to four levels down, as in an EEE datastore's ``data/<collection>/<developer>/<model>/``);
each needs its instance-level ``<uuid>_samples.jsonl`` beside it. One system per
``model_info.id`` (aggregates of one model join); one item per (instance
``evaluation_name``, ``sample_id``); one metric per aggregate result the instance lines
point to (``evaluation_result_id``), named by its ``metric_id`` (else ``metric_name``, else
the evaluation's name; the result id where two such results of one evaluation share that
name, or where the aggregate holds no result of that id), holding ``evaluation.score``.
Several lines of one sample for one result are repeats of the sample (Inspect's epochs,
HELM's train trials and perturbed variants): the item holds their mean, and the aggregate's
entry in ``metadata["aggregates"]`` the most repeats met (``repeats``) and the aggregate
scores as the file states them (``scores``, by result id). An aggregate of a HELM run with
perturbations (results whose ``score_details.details.perturbation`` names one beside HELM's
``robustness``/``fairness`` summaries) is the dataset ``"<evaluation_name> [<names>]"``, as
kagreport's HELM reader names perturbed instances. A failed line pointing to no result (EEE's
Inspect conversion of an errored sample) holds no score. ``correct`` is ``is_correct`` of the
item's first line, and the outcome ``error`` when ``error`` is set. Costs: ``input_tokens``
and ``output_tokens`` from ``token_usage``, ``generation_secs`` from
``performance.generation_time_ms`` (else ``latency_ms``) / 1000. The response is the first
``output.raw`` (multi-turn and agentic lines: the last assistant message), the reference
``input.reference`` joined by newlines, the question text ``input.raw``, the explanation the
final ``answer_attribution`` entries (``regex: B``; kagreport's own in the line's metadata).

:func:`kagreport.sources._eee_write.write_eee` writes runs that read back whole.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import numpy as np

from kagreport._errors import DocumentError
from kagreport.sources._common import json_lines
from kagreport.sources._eee_schema import (
    OUTCOMES,
    SCHEMA_VERSION,
    TEXTS,
    Aggregate,
    EvaluationResult,
    Instance,
    decode_checked,
    instance_file,
)
from kagreport.sources._load import convert, decode, read_document

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["is_eee", "read_eee"]

_DEPTHS = ("*.json", "*/*.json", "*/*/*.json", "*/*/*/*.json", "*/*/*/*/*.json")
_HEAD = (re.compile(rb'"schema_version"\s*:\s*"'), re.compile(rb'"evaluation_id"\s*:\s*"'))


def _looks_like_aggregate(path: Path) -> bool:
    if path.suffix != ".json" or path.name.startswith("."):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    # Field names followed by string values: the schema file itself names them too.
    return all(pattern.search(head) for pattern in _HEAD)


def _aggregates(path: Path, limit: int | None = None) -> list[Path]:
    if path.is_file():
        return [path] if _looks_like_aggregate(path) else []
    found: list[Path] = []
    looked = 0
    for pattern in _DEPTHS:
        # Detection (a limit) looks at the first files met; reading takes all, sorted.
        files = path.glob(pattern) if limit is not None else sorted(path.glob(pattern))
        for file in files:
            looked += 1
            if limit is not None and looked > limit:
                return found
            if file.is_file() and _looks_like_aggregate(file):
                found.append(file)
                if limit is not None:
                    return found
    return found


def is_eee(path: Path) -> bool:
    """Whether ``path`` is an EEE aggregate file, or a folder holding one (a few KB read)."""
    try:
        return bool(_aggregates(path, limit=50))
    except OSError:
        return False


class _Reader:
    """Rows gathered across aggregates: one per (system, dataset, question)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], int] = {}
        self.outcome: list[int] = []
        self.metrics: dict[str, dict[int, float]] = {}
        self.costs: dict[str, dict[int, float]] = {}
        self.texts: dict[str, list[str | None]] = {name: [] for name in TEXTS}

    def row(self, key: tuple[str, str, str], line: Instance, hints: dict[str, Any]) -> int:
        if key in self.rows:
            return self.rows[key]
        row = self.rows[key] = len(self.outcome)
        meta = line.metadata or {}
        outcome = meta.get("kagreport_outcome")
        if outcome is not None and "kagreport_metrics" in hints:
            self.outcome.append(OUTCOMES.index(outcome) if outcome in OUTCOMES else -1)
        else:
            self.outcome.append(
                2 if line.error is not None else int(not line.evaluation.is_correct)
            )
            if "kagreport_metrics" not in hints:
                self.metrics.setdefault("correct", {})[row] = float(line.evaluation.is_correct)
        reference = line.input.reference
        self.texts["responses"].append(line.response)
        self.texts["references"].append("\n".join(reference) if reference else None)
        self.texts["errors"].append(line.error)
        self.texts["question_texts"].append(line.input.raw or None)
        self.texts["explanations"].append(line.explanation)
        for name, value in _costs(line, hints).items():
            self.costs.setdefault(name, {})[row] = value
        return row


def _costs(line: Instance, hints: dict[str, Any]) -> dict[str, float]:
    details = (line.performance.additional_details if line.performance else None) or {}
    if "kagreport_costs" in hints:  # written by kagreport: the exact values
        found = {}
        for name in hints["kagreport_costs"]:
            if name in details:
                try:
                    found[name] = float(details[name])
                except ValueError:
                    raise DocumentError(
                        f"sample {line.sample_id}: performance.additional_details.{name} "
                        f"is {details[name]!r}, not a number"
                    ) from None
        return found
    costs: dict[str, float] = {}
    if line.token_usage is not None:
        costs["input_tokens"] = float(line.token_usage.input_tokens)
        costs["output_tokens"] = float(line.token_usage.output_tokens)
    if line.performance is not None:
        ms = line.performance.generation_time_ms
        ms = ms if ms is not None else line.performance.latency_ms
        if ms is not None:
            costs["generation_secs"] = ms / 1000
    return costs


class _Hints(msgspec.Struct):
    """The types of the ``kagreport_*`` details :mod:`~kagreport.sources._eee_write` writes."""

    kagreport_kind: Literal["answers", "retrieval"] = "answers"
    kagreport_rank: int = 0
    kagreport_system: str = ""
    kagreport_metrics: list[str] = []
    kagreport_costs: list[str] = []
    kagreport_texts: list[str] = []
    kagreport_metadata: dict[str, Any] = {}


def _hints(aggregate: Aggregate, where: Path) -> dict[str, Any]:
    details = aggregate.eval_library.additional_details or {}
    hints: dict[str, Any] = {}
    for key, value in details.items():
        if key.startswith("kagreport_"):
            at = f"{where}: eval_library.additional_details.{key}"
            hints[key] = decode(value, Any, f"{at} (JSON text)", path=where)
    # A hint of the wrong type (a list for the rank) is one line, not a TypeError later.
    convert(hints, _Hints, f"{where}: eval_library.additional_details", path=where)
    return hints


#: HELM's worst-case summaries over a run's perturbations, which every HELM run reports.
_HELM_SUMMARIES = frozenset({"", "robustness", "fairness"})


def _metric_names(results: list[EvaluationResult], pointed: set[str]) -> dict[str, str]:
    """Each result id's metric name: its :attr:`EvaluationResult.metric`, or the result id
    where two results the lines point to share that name on one evaluation (Inspect's
    ``match:accuracy`` and ``includes:accuracy`` are both ``accuracy``)."""
    used = [
        (r.evaluation_name, r.metric)
        for r in results
        if r.evaluation_result_id is not None and r.evaluation_result_id in pointed
    ]
    names = {}
    for r in results:
        if r.evaluation_result_id is not None:
            shared = used.count((r.evaluation_name, r.metric)) > 1
            names[r.evaluation_result_id] = r.evaluation_result_id if shared else r.metric
    return names


def _dataset_suffix(results: list[EvaluationResult]) -> str:
    """`` [<perturbations>]`` for an aggregate of a HELM run with perturbations (EEE's HELM
    converter states each result's ``score_details.details.perturbation``), else ``""``:
    such a run's instances repeat those of the run without them, so it is its own dataset,
    named as kagreport's HELM reader names a perturbed instance's."""
    found = {
        str((r.score_details.details or {}).get("perturbation", "")) for r in results
    } - _HELM_SUMMARIES
    return f" [{', '.join(sorted(found))}]" if found else ""


def _metric_of(line: Instance, results: list[EvaluationResult], names: dict[str, str]) -> str:
    if line.evaluation_result_id is not None:
        # A line may point to a metric the aggregate does not summarise (EEE's lm-eval
        # conversion: acc_norm lines beside an acc-only group): the id names it.
        return names.get(line.evaluation_result_id, line.evaluation_result_id)
    named = [r for r in results if r.evaluation_name == line.evaluation_name]
    return named[0].metric if len(named) == 1 else "score"


def _read_one(path: Path, reader: _Reader, ranks: dict[str, Any]) -> dict[str, Any]:
    aggregate: Aggregate = decode_checked(_read(path), Aggregate, str(path))
    samples = instance_file(aggregate, path)
    hints = _hints(aggregate, path)
    named = hints.get("kagreport_system")  # kagreport's own spelling, where it wrote the file
    system = named if isinstance(named, str) and named else aggregate.model_info.id
    ranks.setdefault(system, hints.get("kagreport_rank", len(ranks)))
    lines: list[tuple[str, Instance]] = []
    for number, text in json_lines(_read(samples)):
        where = f"{samples}:{number}"
        line: Instance = decode_checked(text, Instance, where)
        if line.evaluation_id != aggregate.evaluation_id:
            raise DocumentError(
                f"{where}: evaluation_id {line.evaluation_id!r} is not its aggregate's "
                f"({aggregate.evaluation_id!r})"
            )
        lines.append((where, line))
    results = aggregate.evaluation_results
    names = _metric_names(
        results, {x.evaluation_result_id for _, x in lines if x.evaluation_result_id}
    )
    suffix = _dataset_suffix(results)
    written = "kagreport_metrics" in hints
    # Lines of one sample and metric beyond the first are repeats of the sample (Inspect's
    # epochs, HELM's train trials and perturbed variants): the item's value is their mean.
    sums: dict[tuple[str, int], list[float]] = {}
    for where, line in lines:
        metric = _metric_of(line, results, names)
        try:
            key = (system, line.evaluation_name + suffix, line.sample_id)
            row = reader.row(key, line, hints)
        except DocumentError as exc:
            raise DocumentError(f"{where}: {exc}") from None
        if line.error is not None and line.evaluation_result_id is None and not written:
            continue  # a failed sample scored by no metric: its score is EEE's placeholder
        undefined = (line.metadata or {}).get("kagreport_score") == "undefined"
        value = math.nan if undefined else line.evaluation.score
        if written and (metric, row) in sums:
            raise DocumentError(
                f"{where}: sample_id {line.sample_id!r} of {line.evaluation_name!r} is "
                f"scored for {metric!r} twice (model {system!r})"
            )
        sums.setdefault((metric, row), []).append(value)
    repeats = 1
    for (metric, row), values in sums.items():
        reader.metrics.setdefault(metric, {})[row] = sum(values) / len(values)
        repeats = max(repeats, len(values))
    detailed = aggregate.detailed_evaluation_results
    if (
        detailed is not None
        and detailed.total_rows is not None
        and detailed.total_rows != len(lines)
    ):
        raise DocumentError(
            f"{path}: detailed_evaluation_results.total_rows is {detailed.total_rows}, "
            f"but {samples.name} holds {len(lines)} lines"
        )
    return {
        "aggregate": str(path),
        "evaluation_id": aggregate.evaluation_id,
        "model": system,
        "eval_library": f"{aggregate.eval_library.name} {aggregate.eval_library.version}",
        "repeats": repeats,
        "scores": {r.evaluation_result_id or r.metric: r.score_details.score for r in results},
        "hints": hints,
        "created": aggregate.evaluation_timestamp or aggregate.retrieved_timestamp,
    }


def _read(path: Path) -> bytes:
    return read_document(path)


def read_eee(path: Path) -> Run:
    """Read EEE aggregate(s) and their instance-level JSONL into a :class:`Run`.

    Parameters
    ----------
    path : Path
        An aggregate ``.json`` or a folder of them (up to four levels down).

    Raises
    ------
    DocumentError
        One line naming the file (and line) and the field: a schema version other than
        0.3.x, a missing instance-level file, a malformed line, an instance whose
        ``evaluation_id`` does not match its aggregate, a sample scored twice for one
        metric in files kagreport wrote, a ``total_rows`` that disagrees.
    """
    from kagreport.runs import Run

    files = _aggregates(path)
    if not files:
        raise DocumentError(f"{path}: no EEE aggregate file (*.json with schema_version)")
    reader, ranks = _Reader(), dict[str, Any]()
    sources = [_read_one(file, reader, ranks) for file in files]
    hints = sources[0]["hints"]
    written = {"written_from": hints["kagreport_metadata"]} if "kagreport_metadata" in hints else {}
    from kagreport.runs._times import latest_time

    # When each evaluation was run (else, when its record was made); of several, the latest.
    created = latest_time(s.pop("created") for s in sources)
    recorded = {} if created is None else {"created": created}
    systems = tuple(sorted(ranks, key=lambda s: (ranks[s], s)))
    keys = list(reader.rows)
    datasets = tuple(dict.fromkeys(k[1] for k in keys))
    questions = tuple(dict.fromkeys(k[2] for k in keys))
    n = len(keys)
    wanted = hints.get("kagreport_metrics", list(reader.metrics))
    texts = hints.get("kagreport_texts", list(TEXTS))
    costs = hints.get("kagreport_costs", sorted(reader.costs))

    def column(values: dict[int, float]) -> np.ndarray[Any, np.dtype[np.float64]]:
        out = np.full(n, math.nan)
        out[list(values)] = list(values.values())
        return out

    return Run(
        kind=str(hints.get("kagreport_kind", "answers")),
        systems=systems,
        dataset_names=datasets,
        question_names=questions,
        system=np.array([systems.index(k[0]) for k in keys], dtype=np.int32),
        dataset=np.array([datasets.index(k[1]) for k in keys], dtype=np.int32),
        question=np.array([questions.index(k[2]) for k in keys], dtype=np.int32),
        outcome=np.array(reader.outcome, dtype=np.int8),
        metrics={m: column(reader.metrics.get(m, {})) for m in wanted},
        costs={c: column(reader.costs.get(c, {})) for c in costs},
        responses=tuple(reader.texts["responses"]) if "responses" in texts else None,
        references=tuple(reader.texts["references"]) if "references" in texts else None,
        errors=tuple(reader.texts["errors"]) if "errors" in texts else None,
        question_texts=(
            tuple(reader.texts["question_texts"])
            if "question_texts" in texts and any(reader.texts["question_texts"])
            else None
        ),
        explanations=(
            tuple(reader.texts["explanations"])
            if "explanations" in texts and any(reader.texts["explanations"])
            else None
        ),
        metadata={
            "tool": "every_eval_ever",
            "schema_version": SCHEMA_VERSION,
            "aggregates": [{k: v for k, v in s.items() if k != "hints"} for s in sources],
            "convention": "correct is is_correct of each sample's first line; a metric is "
            "the mean of a sample's lines (repeats: epochs, trials, perturbed variants); "
            "the aggregates' own scores are in aggregates[].scores, as the files state them",
            **recorded,
            **written,
        },
    )

"""Every Eval Ever (EEE) schema 0.3 files, read and written (format name ``"eee"``).

Reading (:func:`read_eee`): an aggregate ``<uuid>.json`` or a folder of them (searched up
to four levels down, as in an EEE datastore's ``data/<collection>/<developer>/<model>/``);
each needs its instance-level ``<uuid>_samples.jsonl`` beside it. One system per
``model_info.id`` (aggregates of one model join); one item per (instance
``evaluation_name``, ``sample_id``); one metric per aggregate result the instance lines
point to (``evaluation_result_id``), named by its ``metric_id`` (else ``metric_name``, else
the evaluation's name), holding ``evaluation.score``; ``correct`` is ``is_correct`` of the
item's first line, and the outcome ``error`` when ``error`` is set. Costs: ``input_tokens``
and ``output_tokens`` from ``token_usage``, ``generation_secs`` from
``performance.generation_time_ms`` (else ``latency_ms``) / 1000. The response is the first
``output.raw``, the reference ``input.reference`` joined by newlines.

Writing (:func:`write_eee`): a folder laid out as an EEE datastore, one aggregate per
system. kagreport's own columns travel in the schema's string maps, so a written run reads
back whole: the run's metric, cost and text names, kind and rank in
``eval_library.additional_details`` (``kagreport_*``), exact costs (retrieval seconds,
graph elements, context bytes, ...) in each line's ``performance.additional_details``, the
outcome in its ``metadata``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import DocumentError, UsageError
from kagreport.sources._eee_schema import (
    SCHEMA_VERSION,
    Aggregate,
    EvaluationResult,
    Instance,
    check_version,
    decode,
    instance_file,
)

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["check_output", "is_eee", "read_eee", "write_eee"]

_OUTCOMES = ("correct", "incorrect", "error")
_DEPTHS = ("*.json", "*/*.json", "*/*/*.json", "*/*/*/*.json", "*/*/*/*/*.json")
_TEXTS = ("responses", "references", "errors")
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
        for file in sorted(path.glob(pattern)):
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
        self.texts: dict[str, list[str | None]] = {name: [] for name in _TEXTS}

    def row(self, key: tuple[str, str, str], line: Instance, hints: dict[str, Any]) -> int:
        if key in self.rows:
            return self.rows[key]
        row = self.rows[key] = len(self.outcome)
        meta = line.metadata or {}
        outcome = meta.get("kagreport_outcome")
        if outcome is not None and "kagreport_metrics" in hints:
            self.outcome.append(_OUTCOMES.index(outcome) if outcome in _OUTCOMES else -1)
        else:
            self.outcome.append(
                2 if line.error is not None else int(not line.evaluation.is_correct)
            )
            if "kagreport_metrics" not in hints:
                self.metrics.setdefault("correct", {})[row] = float(line.evaluation.is_correct)
        output = line.output.raw if line.output is not None else []
        reference = line.input.reference
        self.texts["responses"].append(output[0] if output else None)
        self.texts["references"].append("\n".join(reference) if reference else None)
        self.texts["errors"].append(line.error)
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


def _hints(aggregate: Aggregate, where: Path) -> dict[str, Any]:
    details = aggregate.eval_library.additional_details or {}
    hints: dict[str, Any] = {}
    for key, value in details.items():
        if key.startswith("kagreport_"):
            try:
                hints[key] = json.loads(value)
            except ValueError:
                raise DocumentError(
                    f"{where}: eval_library.additional_details.{key} is not JSON text"
                ) from None
    return hints


def _metric_of(line: Instance, results: list[EvaluationResult], where: str) -> str:
    if line.evaluation_result_id is not None:
        for result in results:
            if result.evaluation_result_id == line.evaluation_result_id:
                return result.metric
        raise DocumentError(
            f"{where}: evaluation_result_id {line.evaluation_result_id!r} is not an "
            "evaluation_results[].evaluation_result_id of its aggregate"
        )
    named = [r for r in results if r.evaluation_name == line.evaluation_name]
    return named[0].metric if len(named) == 1 else "score"


def _read_one(path: Path, reader: _Reader, ranks: dict[str, Any]) -> dict[str, Any]:
    aggregate: Aggregate = decode(_read(path), Aggregate, str(path))
    check_version(aggregate.schema_version, str(path))
    samples = instance_file(aggregate, path)
    hints = _hints(aggregate, path)
    system = aggregate.model_info.id
    ranks.setdefault(system, hints.get("kagreport_rank", len(ranks)))
    count = 0
    for number, text in enumerate(_read(samples).splitlines(), 1):
        if not text.strip():
            continue
        where = f"{samples}:{number}"
        line: Instance = decode(text, Instance, where)
        check_version(line.schema_version, where)
        if line.evaluation_id != aggregate.evaluation_id:
            raise DocumentError(
                f"{where}: evaluation_id {line.evaluation_id!r} is not its aggregate's "
                f"({aggregate.evaluation_id!r})"
            )
        metric = _metric_of(line, aggregate.evaluation_results, where)
        try:
            row = reader.row((system, line.evaluation_name, line.sample_id), line, hints)
        except DocumentError as exc:
            raise DocumentError(f"{where}: {exc}") from None
        values = reader.metrics.setdefault(metric, {})
        if row in values and not (metric == "correct" and "kagreport_metrics" not in hints):
            raise DocumentError(
                f"{where}: sample_id {line.sample_id!r} of {line.evaluation_name!r} is "
                f"scored for {metric!r} twice (model {system!r})"
            )
        undefined = (line.metadata or {}).get("kagreport_score") == "undefined"
        values[row] = math.nan if undefined else line.evaluation.score
        count += 1
    detailed = aggregate.detailed_evaluation_results
    if detailed is not None and detailed.total_rows is not None and detailed.total_rows != count:
        raise DocumentError(
            f"{path}: detailed_evaluation_results.total_rows is {detailed.total_rows}, "
            f"but {samples.name} holds {count} lines"
        )
    return {
        "aggregate": str(path),
        "evaluation_id": aggregate.evaluation_id,
        "model": system,
        "eval_library": f"{aggregate.eval_library.name} {aggregate.eval_library.version}",
        "hints": hints,
    }


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read ({exc.strerror})") from None


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
        ``evaluation_id`` or ``evaluation_result_id`` does not match its aggregate, a
        sample scored twice for one metric, a ``total_rows`` that disagrees.
    """
    from kagreport.runs import Run

    files = _aggregates(path)
    if not files:
        raise DocumentError(f"{path}: no EEE aggregate file (*.json with schema_version)")
    reader, ranks = _Reader(), dict[str, Any]()
    sources = [_read_one(file, reader, ranks) for file in files]
    hints = sources[0]["hints"]
    systems = tuple(sorted(ranks, key=lambda s: (ranks[s], s)))
    keys = list(reader.rows)
    datasets = tuple(dict.fromkeys(k[1] for k in keys))
    questions = tuple(dict.fromkeys(k[2] for k in keys))
    n = len(keys)
    wanted = hints.get("kagreport_metrics", list(reader.metrics))
    texts = hints.get("kagreport_texts", list(_TEXTS))
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
        metadata={
            "tool": "every_eval_ever",
            "schema_version": SCHEMA_VERSION,
            "aggregates": [{k: v for k, v in s.items() if k != "hints"} for s in sources],
            "convention": "correct is is_correct of each sample's first line; "
            "aggregate scores are not re-read (the per-sample lines are)",
        },
    )


# ---------------------------------------------------------------------------- writing

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _component(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._") or "unknown"


def _uuid4_like(text: str) -> str:
    # Deterministic, but shaped as version 4: the schema's file_path pattern wants one.
    return str(uuid.UUID(bytes=hashlib.sha256(text.encode()).digest()[:16], version=4))


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _system_files(run: Run, index: int, stamp: str, collection: str) -> tuple[str, bytes, bytes]:
    system = run.systems[index]
    rows = np.flatnonzero(run.system == index)
    developer, _, model = system.rpartition("/")
    evaluation_id = f"{collection}/{system}/{stamp}"
    name = _uuid4_like(evaluation_id)
    folder = f"data/{_component(collection)}/{_component(developer)}/{_component(model)}"
    metrics = list(run.metrics)
    results: list[dict[str, Any]] = []
    ids: dict[tuple[int, str], str] = {}
    for d in dict.fromkeys(int(x) for x in run.dataset[rows]):
        dataset = run.dataset_names[d]
        in_dataset = rows[run.dataset[rows] == d]
        for metric in metrics:
            values = run.metrics[metric][in_dataset]
            finite = values[np.isfinite(values)]
            ids[d, metric] = result_id = f"{dataset}/{metric}#{len(results)}"
            score: dict[str, Any] = {
                "score": float(finite.mean()) if finite.size else 0.0,
                "uncertainty": {"num_samples": int(finite.size)},
            }
            if not finite.size:
                score["details"] = {"kagreport_score": "undefined: no sample has a value"}
            binary = metric == "correct"
            results.append(
                {
                    "evaluation_result_id": result_id,
                    "evaluation_name": dataset,
                    "source_data": {"dataset_name": dataset, "source_type": "other"},
                    "metric_config": {
                        "metric_id": metric,
                        "metric_name": metric,
                        "lower_is_better": False,
                        "score_type": "binary" if binary else "continuous",
                        **({} if binary else {"min_score": None, "max_score": None}),
                    },
                    "score_details": score,
                }
            )
    lines = []
    for row in rows:
        lines.extend(_lines(run, int(row), evaluation_id, ids))
    jsonl = "".join(json.dumps(x, ensure_ascii=False, allow_nan=False) + "\n" for x in lines)
    samples = jsonl.encode()
    hints = {
        "kagreport_kind": run.kind,
        "kagreport_rank": index,
        "kagreport_metrics": metrics,
        "kagreport_costs": list(run.costs),
        "kagreport_texts": [t for t in _TEXTS if getattr(run, t) is not None],
    }
    tool = run.metadata.get("tool", run.metadata.get("source"))
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": stamp,
        "source_metadata": {
            "source_name": collection,
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "other",
        },
        "model_info": {
            "name": system,
            "id": system,
            **({"developer": developer} if developer else {}),
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "eval_library": {
            "name": tool if isinstance(tool, str) and tool else "kagreport",
            "version": "unknown",
            "additional_details": {k: json.dumps(v) for k, v in hints.items()},
        },
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": f"{folder}/{name}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples).hexdigest(),
            "total_rows": len(lines),
        },
    }
    text = json.dumps(aggregate, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return f"{folder}/{name}", text.encode(), samples


def _lines(
    run: Run, row: int, evaluation_id: str, ids: dict[tuple[int, str], str]
) -> list[dict[str, Any]]:
    d = int(run.dataset[row])
    outcome = int(run.outcome[row])
    response = run.responses[row] if run.responses is not None else None
    reference = run.references[row] if run.references is not None else None
    costs = {name: float(values[row]) for name, values in run.costs.items()}
    known = {name: value for name, value in costs.items() if math.isfinite(value)}
    performance: dict[str, Any] = {"additional_details": {k: repr(v) for k, v in known.items()}}
    if "generation_secs" in known:
        performance["generation_time_ms"] = known["generation_secs"] * 1000
    common: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": run.systems[int(run.system[row])],
        "evaluation_name": run.dataset_names[d],
        "sample_id": run.question_names[int(run.question[row])],
        "interaction_type": "single_turn",
        "input": {"raw": "", "reference": [] if reference is None else [reference]},
        "output": {"raw": [] if response is None else [response]},
        "answer_attribution": [],
        "performance": performance,
        "error": run.errors[row] if run.errors is not None else None,
    }
    tokens = (known.get("input_tokens"), known.get("output_tokens"))
    if all(t is not None and t >= 0 and t.is_integer() for t in tokens):
        given = [int(t) for t in tokens if t is not None]
        common["token_usage"] = {
            "input_tokens": given[0],
            "output_tokens": given[1],
            "total_tokens": sum(given),
        }
    label = _OUTCOMES[outcome] if outcome >= 0 else "unknown"
    scored = [m for m in run.metrics if math.isfinite(run.metrics[m][row])]
    lines = []
    for metric in scored or list(run.metrics)[:1]:
        value = float(run.metrics[metric][row])
        metadata = {"kagreport_outcome": label}
        if not math.isfinite(value):
            metadata["kagreport_score"] = "undefined"
        lines.append(
            {
                **common,
                "evaluation_result_id": ids[d, metric],
                "evaluation": {
                    "score": _number(value) if math.isfinite(value) else 0,
                    "is_correct": outcome == 0,
                },
                "metadata": metadata,
            }
        )
    return lines


def check_output(target: Path) -> None:
    """Raise UsageError unless ``target`` is new or a folder of an earlier EEE write."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file; EEE output is a folder")
    if target.is_dir() and {p.name for p in target.iterdir()} - {"data"}:
        raise UsageError(f"{target} holds other files than data/; choose a new folder")


def write_eee(run: Run, path: str | os.PathLike[str], timestamp: float | None = None) -> Path:
    """Write ``run`` as an EEE 0.3 datastore folder; :func:`read_eee` reads it back.

    Each system becomes ``path/data/<collection>/<developer>/<model>/<uuid>.json`` (its
    per-dataset, per-metric means as ``evaluation_results``) and ``<uuid>_samples.jsonl``
    (one line per row and metric with a value; a row with none gets one line marked
    ``kagreport_score: undefined``). ``<collection>`` is the run's ``metadata["name"]``,
    else ``kagreport``; a system ``"org/model"`` gives developer ``org``. The folder is
    built beside ``path`` and moved into place, so a crash leaves no partial folder.

    Parameters
    ----------
    run : Run
    path : str or path-like
        The folder to write; an existing one must hold an earlier EEE write (only ``data``).
    timestamp : float, optional
        ``retrieved_timestamp`` (Unix seconds); now when omitted.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    UsageError
        If ``path`` is a file, or a folder holding anything but ``data``.
    OSError
        If the folder cannot be written; ``path`` is then as it was.
    """
    target = Path(path)
    check_output(target)
    stamp = f"{time.time() if timestamp is None else timestamp:.0f}"
    name = run.metadata.get("name")
    collection = name if isinstance(name, str) and name else "kagreport"
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    try:
        for index in range(len(run.systems)):
            stem, aggregate, samples = _system_files(run, index, stamp, collection)
            (building / stem).parent.mkdir(parents=True, exist_ok=True)
            (building / f"{stem}_samples.jsonl").write_bytes(samples)
            (building / f"{stem}.json").write_bytes(aggregate)
        if target.exists():
            os.replace(target, old)
        os.replace(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        if old.exists() and not target.exists():
            os.replace(old, target)  # put the earlier write back
        raise
    with contextlib.suppress(OSError):
        shutil.rmtree(old)
    return target

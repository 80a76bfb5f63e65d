"""Writing a run as Every Eval Ever (EEE) schema 0.3 files (``write_eee``).

A folder laid out as an EEE datastore, one aggregate per system. kagreport's own columns
travel in the schema's string maps, so :func:`kagreport.sources._eee.read_eee` reads a
written run back whole: the run's metric, cost and text names, kind, rank and metadata in
``eval_library.additional_details`` (``kagreport_*``, JSON text), exact costs (retrieval
seconds, graph elements, context bytes, ...) in each line's
``performance.additional_details``, the outcome and explanation in its ``metadata``.
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

from kagreport._errors import UsageError
from kagreport._format import json_safe
from kagreport.sources._eee_schema import OUTCOMES, SCHEMA_VERSION, TEXTS

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["check_output", "write_eee"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _component(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._") or "unknown"


def _uuid4_like(text: str) -> str:
    # Deterministic, but shaped as version 4: the schema's file_path pattern wants one.
    return str(uuid.UUID(bytes=hashlib.sha256(text.encode()).digest()[:16], version=4))


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def bounds(values: np.ndarray) -> tuple[float | int, float | int]:
    """A continuous metric's ``(min_score, max_score)`` for EEE's ``metric_config``.

    EEE's validator requires numeric bounds on every ``continuous`` score. kagreport
    does not know each tool's metric ranges, so they come from the values: ``(0, 1)``
    when every finite value of the metric in the run lies there (accuracies, rates,
    F1, exact match: the range such metrics are defined on), else the observed
    ``(min, max)`` over all systems, so that every system's aggregate states the same
    bounds; ``(0, 1)`` when no value is finite.
    """
    finite = values[np.isfinite(values)]
    if not finite.size or (finite.min() >= 0 and finite.max() <= 1):
        return 0, 1
    return _number(float(finite.min())), _number(float(finite.max()))


def _developer(system: str) -> tuple[str, str]:
    """``(developer, model)`` of a system: ``org/model``, else ``provider:model``
    (promptfoo's and Inspect's provider ids), else no developer."""
    developer, _, model = system.rpartition("/")
    if not developer:
        provider, _, rest = system.partition(":")
        if rest and provider:
            return provider, system
    return developer, model


def _system_files(run: Run, index: int, stamp: str, collection: str) -> tuple[str, bytes, bytes]:
    system = run.systems[index]
    rows = np.flatnonzero(run.system == index)
    developer, model = _developer(system)
    # The id addresses the folder (EEE's datastore is queried by path); the system's own
    # spelling travels in model_info.name and the kagreport_system hint.
    model_id = f"{_component(developer)}/{_component(model)}" if "/" in system else system
    evaluation_id = f"{collection}/{system}/{stamp}"
    name = _uuid4_like(evaluation_id)
    folder = f"data/{_component(collection)}/{_component(developer)}/{_component(model)}"
    metrics = list(run.metrics)
    ranges = {metric: bounds(run.metrics[metric]) for metric in metrics}
    results: list[dict[str, Any]] = []
    ids: dict[tuple[int, str], str] = {}
    for d in dict.fromkeys(int(x) for x in run.dataset[rows]):
        dataset = run.dataset_names[d]
        in_dataset = rows[run.dataset[rows] == d]
        for metric in metrics:
            values = run.metrics[metric][in_dataset]
            finite = values[np.isfinite(values)]
            ids[d, metric] = result_id = f"{dataset}/{metric}#{len(results)}"
            binary = metric == "correct"
            low, high = (0, 1) if binary else ranges[metric]
            score: dict[str, Any] = {
                # An undefined mean is written as the lower bound (the schema wants a
                # number) and marked so in the details.
                "score": float(finite.mean()) if finite.size else low,
                "uncertainty": {"num_samples": int(finite.size)},
            }
            if not finite.size:
                score["details"] = {"kagreport_score": "undefined: no sample has a value"}
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
                        **({} if binary else {"min_score": low, "max_score": high}),
                    },
                    "score_details": score,
                }
            )
    lines = []
    for row in rows:
        lines.extend(_lines(run, int(row), evaluation_id, ids, model_id))
    jsonl = "".join(json.dumps(x, ensure_ascii=False, allow_nan=False) + "\n" for x in lines)
    samples = jsonl.encode()
    hints = {
        "kagreport_kind": run.kind,
        "kagreport_system": system,
        "kagreport_rank": index,
        "kagreport_metrics": metrics,
        "kagreport_costs": list(run.costs),
        "kagreport_texts": [t for t in TEXTS if getattr(run, t) is not None],
        "kagreport_metadata": json_safe(run.metadata),
    }
    tool = run.metadata.get("tool", run.metadata.get("source"))
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": stamp,
        **_evaluated(run),
        "source_metadata": {
            "source_name": collection,
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "other",
        },
        "model_info": {
            "name": system,
            "id": model_id,
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
    run: Run, row: int, evaluation_id: str, ids: dict[tuple[int, str], str], model_id: str
) -> list[dict[str, Any]]:
    d = int(run.dataset[row])
    outcome = int(run.outcome[row])
    response = run.responses[row] if run.responses is not None else None
    reference = run.references[row] if run.references is not None else None
    question = run.question_texts[row] if run.question_texts is not None else None
    explanation = run.explanations[row] if run.explanations is not None else None
    costs = {name: float(values[row]) for name, values in run.costs.items()}
    known = {name: value for name, value in costs.items() if math.isfinite(value)}
    performance: dict[str, Any] = {"additional_details": {k: repr(v) for k, v in known.items()}}
    if "generation_secs" in known:
        performance["generation_time_ms"] = known["generation_secs"] * 1000
    common: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": run.dataset_names[d],
        "sample_id": run.question_names[int(run.question[row])],
        "interaction_type": "single_turn",
        "input": {"raw": question or "", "reference": [] if reference is None else [reference]},
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
    label = OUTCOMES[outcome] if outcome >= 0 else "unknown"
    scored = [m for m in run.metrics if math.isfinite(run.metrics[m][row])]
    lines = []
    for metric in scored or list(run.metrics)[:1]:
        value = float(run.metrics[metric][row])
        metadata = {"kagreport_outcome": label}
        if explanation is not None:
            metadata["kagreport_explanation"] = explanation
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


def _evaluated(run: Run) -> dict[str, str]:
    """``evaluation_timestamp`` (Unix seconds, as EEE's converters write it) of the run's
    recorded time (``metadata["created"]``), when it has one."""
    from kagreport.runs._times import created_time

    moment = created_time(run.metadata)
    return {} if moment is None else {"evaluation_timestamp": f"{moment.timestamp():.6f}"}


def write_eee(run: Run, path: str | os.PathLike[str], timestamp: float | None = None) -> Path:
    """Write ``run`` as an EEE 0.3 datastore folder; ``read_eee`` reads it back.

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
    if not run.metrics:
        raise UsageError("a run without metrics cannot be written as EEE: a sample needs a score")
    stamp = f"{time.time() if timestamp is None else timestamp:.0f}"
    name = run.metadata.get("name")
    collection = name if isinstance(name, str) and name else "kagreport"
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)  # left by a crash of an earlier write
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

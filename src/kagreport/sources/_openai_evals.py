"""OpenAI evals' record log (``oaieval ... --record_path run.jsonl``): JSON lines, a
``{"spec": RunSpec}`` line, a ``{"final_report": ..., "run_id": ...}`` line, and event
lines ``{"run_id", "event_id", "sample_id", "type", "data", "created_by",
"created_at"}`` in any order.

The shapes follow ``evals/record.py`` (``Event``, ``LocalRecorder``) and
``evals/base.py`` (``RunSpec``) of github.com/openai/evals. A system per completion
function (the spec's ``completion_fns`` joined with ``,``), whatever the number of its
logs (one per eval); an item is (``spec.eval_name``,
``sample_id``); ``correct`` is the mean of the sample's ``match`` events'
``data.correct`` (``evals.metrics.get_accuracy`` counts every match event, so it is
the file's ``accuracy`` when each sample has one); NaN for a sample with no match.
Each numeric value of a sample's ``metrics`` events (``evals.record.record_metrics``:
FuzzyMatch's ``f1_score``) is the metric of its key, the mean over the sample's events (as
the eval's report takes ``np.mean(recorder.get_scores(key))``), NaN on a sample without
it; ``accuracy`` there is the match's own result, already ``correct``. The response is the
sample's last ``sampling`` event's ``data.sampled`` (else its first match's ``sampled``), the
question text the sampling prompt's user messages (for a log without sampling events,
the prompt another completion function's log recorded for the same eval and sample), the
reference the match's ``data.expected`` (several accepted answers one a line).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kagreport._errors import DocumentError, decode_utf8
from kagreport.sources._common import file_head, json_lines
from kagreport.sources._load import convert, decode, read_document

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["is_openai_evals", "read_openai_evals"]


_CONVENTION = (
    "one system per record log; an item per (eval_name, sample_id); correct is the mean of "
    "the sample's match events (evals' accuracy counts every match event)"
)


class _Spec(msgspec.Struct):
    completion_fns: list[str]
    eval_name: str
    base_eval: str | None = None
    split: str | None = None
    run_id: str | None = None
    created_at: str | None = None


class _Event(msgspec.Struct):
    run_id: str
    event_id: int
    sample_id: str | None
    type: str
    data: dict[str, Any] | None = None
    created_by: str = ""
    created_at: str = ""


def is_openai_evals(path: Path) -> bool:
    """Whether ``path`` looks like an OpenAI evals record log, or a folder holding some."""
    if path.is_dir():
        try:
            return any(_is_log(child) for child in sorted(path.iterdir())[:50])
        except OSError:
            return False
    return _is_log(path)


def _is_log(path: Path) -> bool:
    head = file_head(path, (".jsonl", ".log"))
    if head is None:
        return False
    # A byte-order mark is not JSON: the log is taken, then refused in one line (not skipped).
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b'{"spec"') and (
        b'"completion_fns"' in head
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)  # several accepted answers, one a line (as Inspect, HELM)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _fail(path: Path, number: int, what: str) -> DocumentError:
    return DocumentError(f"{path}: line {number}: {what}", path=path)


def read_openai_evals(path: Path) -> Run:
    """Read an OpenAI evals record log, or a folder of them (``oaieval`` writes one per
    completion function and eval), into one :class:`Run`: a system per completion
    function, an item per (eval, sample).

    Raises
    ------
    DocumentError
        For a line that is not JSON or not shaped like a spec, final report or event
        (naming the line and the field), a missing or repeated spec line, two logs of
        one system on one eval.
    """
    from kagreport.runs import Run

    files = sorted(p for p in path.iterdir() if _is_log(p)) if path.is_dir() else [path]
    if not files:
        raise DocumentError(f"{path}: no OpenAI evals record log (*.jsonl, *.log) in the folder")
    parts = [_read_log(file) for file in files]
    systems: dict[str, int] = {}
    datasets: dict[str, int] = {}
    questions: dict[str, int] = {}
    codes: list[tuple[int, int, int]] = []
    logs: set[tuple[str, str]] = set()
    for file, (name, eval_name, samples, *_) in zip(files, parts, strict=True):
        if (name, eval_name) in logs:
            raise DocumentError(
                f"{file}: a second log of system {name!r} on eval {eval_name!r}", path=file
            )
        logs.add((name, eval_name))
        systems.setdefault(name, len(systems))
        data = datasets.setdefault(eval_name, len(datasets))
        codes += [(systems[name], data, questions.setdefault(s, len(questions))) for s in samples]
    table = np.array(codes, dtype=np.int32).reshape(-1, 3)
    metadata: dict[str, Any] = {"tool": "openai-evals", "convention": _CONVENTION}
    if len(parts) == 1:
        metadata.update(parts[0][7])
    else:
        metadata["logs"] = {file.name: part[7] for file, part in zip(files, parts, strict=True)}
    from kagreport.runs._times import latest_time

    # The spec's created_at (evals writes str(datetime.utcnow()): UTC without an offset).
    created = latest_time(part[7].get("created_at") for part in parts)
    if created is not None:
        metadata["created"] = created
    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=tuple(datasets),
        question_names=tuple(questions),
        system=table[:, 0].copy(),
        dataset=table[:, 1].copy(),
        question=table[:, 2].copy(),
        outcome=np.concatenate([part[4] for part in parts]).astype(np.int8),
        metrics=_metrics(parts),
        responses=tuple(t for part in parts for t in part[5]),
        references=tuple(t for part in parts for t in part[6]),
        metadata=metadata,
        question_texts=_shared_questions(table, [t for part in parts for t in part[8]]),
    )


def _shared_questions(
    table: np.ndarray[Any, Any], texts: list[str | None]
) -> tuple[str | None, ...]:
    """Each row's question text; a row without one (a completion function whose log has no
    sampling event, such as ``dummy``) takes the prompt another system's log recorded for
    the same (eval, sample): the sample's input, which the eval renders alike for all."""
    known: dict[tuple[int, int], str] = {}
    for (_, data, question), text in zip(table.tolist(), texts, strict=True):
        if text is not None:
            known.setdefault((data, question), text)
    return tuple(
        text if text is not None else known.get((data, question))
        for (_, data, question), text in zip(table.tolist(), texts, strict=True)
    )


def _metrics(parts: list[_Log]) -> dict[str, np.ndarray[Any, Any]]:
    """``correct`` and each metrics-event key across the logs (NaN where a log lacks it)."""
    names = dict.fromkeys(key for part in parts for key in part[9] if key != "correct")
    columns = {"correct": np.concatenate([part[3] for part in parts])}
    for key in names:
        columns[key] = np.concatenate(
            [part[9].get(key, np.full(len(part[2]), math.nan)) for part in parts]
        )
    return columns


_Log = tuple[
    str,
    str,
    tuple[str, ...],
    "np.ndarray[Any, Any]",
    "np.ndarray[Any, Any]",
    list[str | None],
    list[str | None],
    dict[str, Any],
    list[str | None],
    dict[str, "np.ndarray[Any, Any]"],
]

#: A metrics event's key that repeats the match events' result (``correct``).
_CORRECT_KEYS = frozenset({"accuracy"})


def _read_log(path: Path) -> _Log:
    data = read_document(path)
    decode_utf8(data, path, "OpenAI evals log")  # the offset of a byte that is not UTF-8
    spec: _Spec | None = None
    report: Any = None
    matches: dict[str, list[dict[str, Any]]] = {}
    sampled: dict[str, Any] = {}
    scores: dict[str, dict[str, list[float]]] = {}
    prompts: dict[str, str | None] = {}
    order: dict[str, None] = {}
    for number, line in json_lines(data):
        raw = decode(line, Any, f"{path}: line {number}", path=path)
        if not isinstance(raw, dict):
            raise _fail(path, number, "not a JSON object")
        shape = f"{path}: line {number}: not an evals record line"
        if "spec" in raw:
            if spec is not None:
                raise _fail(path, number, "a second spec line")
            spec = convert(raw["spec"], _Spec, shape, path=path)
            continue
        if "final_report" in raw:
            report = raw["final_report"]
            continue
        event = convert(raw, _Event, shape, path=path)
        if event.sample_id is None:
            continue
        order.setdefault(event.sample_id, None)
        if event.type == "match":
            match = event.data or {}
            if not isinstance(match.get("correct"), bool):
                raise _fail(path, number, "data.correct is not true or false")
            matches.setdefault(event.sample_id, []).append(match)
        elif event.type == "metrics":
            for key, value in (event.data or {}).items():
                if key in _CORRECT_KEYS or isinstance(value, bool):
                    continue
                if isinstance(value, int | float):
                    scores.setdefault(key, {}).setdefault(event.sample_id, []).append(value)
        elif event.type == "sampling":
            sampled[event.sample_id] = (event.data or {}).get("sampled")
            prompts.setdefault(event.sample_id, _prompt((event.data or {}).get("prompt")))
    if spec is None:
        raise DocumentError(f"{path}: no spec line (an OpenAI evals record log)", path=path)
    samples = tuple(order)
    n = len(samples)
    correct = np.full(n, math.nan)
    outcome = np.full(n, -1, dtype=np.int8)
    references: list[str | None] = []
    for row, sample in enumerate(samples):
        events = matches.get(sample, [])
        if events:
            correct[row] = sum(e["correct"] for e in events) / len(events)
            outcome[row] = 0 if correct[row] == 1.0 else 1
        references.append(_text(events[0].get("expected")) if events else None)
    meta: dict[str, Any] = {
        "file": path.name,
        "eval_name": spec.eval_name,
        "base_eval": spec.base_eval,
        "split": spec.split,
        "run_id": spec.run_id,
        "created_at": spec.created_at,
        "completion_fns": spec.completion_fns,
        "final_report": report,
    }
    # Without sampling events, a match event's own sampled text is the response.
    responses = [
        _text(sampled[s]) if s in sampled else _text((matches.get(s) or [{}])[0].get("sampled"))
        for s in samples
    ]
    meta = {k: v for k, v in meta.items() if v is not None}
    name = ",".join(spec.completion_fns)
    questions = [prompts.get(s) for s in samples]
    metrics = {
        key: np.array(
            [sum(v) / len(v) if (v := by_sample.get(s)) else math.nan for s in samples],
            dtype=np.float64,
        )
        for key, by_sample in scores.items()
    }
    return (
        name,
        spec.eval_name,
        samples,
        correct,
        outcome,
        responses,
        references,
        meta,
        questions,
        metrics,
    )


def _prompt(prompt: Any) -> str | None:
    """A sampling event's prompt as a text: a string, or its user messages' content."""
    if isinstance(prompt, list):
        parts = [
            m.get("content")
            for m in prompt
            if isinstance(m, dict) and m.get("role", "user") == "user"
        ]
        return "\n\n".join(p for p in parts if isinstance(p, str)) or None
    return prompt if isinstance(prompt, str) else None

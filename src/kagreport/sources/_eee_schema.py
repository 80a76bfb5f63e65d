"""Every Eval Ever (EEE) schema 0.3 files, as typed structs (the fields kagreport reads).

EEE (github.com/evaleval/every_eval_ever, ``eval.schema.json`` and
``instance_level_eval.schema.json``, version 0.3.0) stores one model's results on one
evaluation run as an aggregate ``<uuid>.json`` (``model_info``, ``eval_library``,
``evaluation_results[]`` with ``metric_config`` and ``score_details.score``) and, when
per-sample data exists, a companion ``<uuid>_samples.jsonl`` in the same folder, named by
the aggregate's ``detailed_evaluation_results.file_path`` (a ``data/<collection>/
<developer>/<model>/<uuid>_samples.jsonl`` path relative to the datastore root). Each line
is one sample scored for one aggregate result (``evaluation_result_id``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from kagreport._errors import DocumentError
from kagreport.sources import _load

__all__ = [
    "OUTCOMES",
    "SCHEMA_VERSION",
    "TEXTS",
    "Aggregate",
    "Attribution",
    "Instance",
    "check_version",
    "decode",
    "decode_checked",
    "instance_file",
]

#: Run.outcome labels by code (runs._columns.OUTCOMES), and the Run's text columns.
OUTCOMES = ("correct", "incorrect", "error")
TEXTS = ("responses", "references", "errors", "question_texts", "explanations")
#: The schema version kagreport writes; it reads any 0.3.x.
SCHEMA_VERSION = "0.3.0"
_VERSION = re.compile(r"0\.3(\.\d+)?")


class Versioned(msgspec.Struct):
    schema_version: str


class ModelInfo(msgspec.Struct):
    name: str
    id: str


class EvalLibrary(msgspec.Struct):
    name: str
    version: str
    additional_details: dict[str, str] | None = None


class MetricConfig(msgspec.Struct):
    lower_is_better: bool
    metric_id: str | None = None
    metric_name: str | None = None


class ScoreDetails(msgspec.Struct):
    score: float
    details: dict[str, Any] | None = None


class EvaluationResult(msgspec.Struct):
    evaluation_name: str
    metric_config: MetricConfig
    score_details: ScoreDetails
    evaluation_result_id: str | None = None

    @property
    def metric(self) -> str:
        """The metric's stable name: ``metric_id``, else ``metric_name``, else the evaluation's."""
        config = self.metric_config
        return config.metric_id or config.metric_name or self.evaluation_name


class DetailedResults(msgspec.Struct):
    format: str
    file_path: str
    total_rows: int | None = None


class Aggregate(msgspec.Struct):
    schema_version: str
    evaluation_id: str
    model_info: ModelInfo
    eval_library: EvalLibrary
    evaluation_results: list[EvaluationResult]
    detailed_evaluation_results: DetailedResults | None = None
    evaluation_timestamp: str | None = None  # when the evaluation was run
    retrieved_timestamp: str | None = None  # when the record was made (Unix seconds)


class Input(msgspec.Struct):
    raw: str
    reference: list[str]


class Output(msgspec.Struct):
    raw: list[str]


class Attribution(msgspec.Struct):
    """How an answer was taken from the output (``regex``, ``exact_match``,
    ``llm_judge``, ...) and what was taken."""

    extracted_value: str | None = None
    extraction_method: str | None = None
    is_terminal: bool = True


class Message(msgspec.Struct):
    role: str
    content: str | None = None


class Evaluation(msgspec.Struct):
    score: float
    is_correct: bool


class TokenUsage(msgspec.Struct):
    input_tokens: int
    output_tokens: int
    total_tokens: int


class Performance(msgspec.Struct):
    latency_ms: float | None = None
    generation_time_ms: float | None = None
    additional_details: dict[str, str] | None = None


class Instance(msgspec.Struct):
    schema_version: str
    evaluation_id: str
    model_id: str
    evaluation_name: str
    sample_id: str
    input: Input
    evaluation: Evaluation
    evaluation_result_id: str | None = None
    output: Output | None = None
    token_usage: TokenUsage | None = None
    performance: Performance | None = None
    error: str | None = None
    metadata: dict[str, str] | None = None
    messages: list[Message] | None = None
    answer_attribution: list[Attribution] | None = None

    @property
    def response(self) -> str | None:
        """The first ``output.raw``, else (multi-turn, agentic) the last assistant turn."""
        if self.output is not None:
            return self.output.raw[0] if self.output.raw else None
        said = [m.content for m in self.messages or () if m.role == "assistant"]
        return said[-1] if said else None

    @property
    def explanation(self) -> str | None:
        """How the line was scored: what kagreport wrote (``metadata``'s
        ``kagreport_explanation``), else the final answers extracted from the output as
        ``method: value`` lines (``regex: B``)."""
        written = (self.metadata or {}).get("kagreport_explanation")
        if written is not None:
            return written
        lines = [
            f"{a.extraction_method or 'extracted'}: {a.extracted_value}"
            for a in self.answer_attribution or ()
            if a.is_terminal and a.extracted_value is not None
        ]
        return "\n".join(lines) or None


def decode(data: bytes | bytearray | str, kind: type[Any], where: str) -> Any:
    """``data`` decoded as ``kind``; DocumentError naming ``where`` and the field otherwise."""
    return _load.decode(data, kind, where)


def decode_checked(data: bytes | bytearray | str, kind: type[Any], where: str) -> Any:
    """:func:`decode`, after refusing a schema version other than 0.3.x (whose fields
    may differ) in one line."""
    check_version(decode(data, Versioned, where).schema_version, where)
    return decode(data, kind, where)


def check_version(version: str, where: str) -> None:
    """Refuse a schema version other than 0.3.x, in one line."""
    if not _VERSION.fullmatch(version):
        raise DocumentError(
            f"{where}: schema_version {version!r} is not 0.3 (kagreport reads EEE schema 0.3.x)"
        )


def instance_file(aggregate: Aggregate, path: Path) -> Path:
    """The instance-level JSONL of the aggregate at ``path``.

    The companion lives beside the aggregate (EEE keeps both in one folder), named by the
    last part of ``detailed_evaluation_results.file_path``, else (absent, or no such file)
    ``<stem>_samples.jsonl``.

    Raises
    ------
    DocumentError
        If the aggregate has no instance-level file: a run needs per-sample rows.
    """
    detailed = aggregate.detailed_evaluation_results
    sibling = path.with_name(f"{path.stem}_samples.jsonl")
    found = sibling
    if detailed is not None:
        if detailed.format != "jsonl":
            raise DocumentError(
                f"{path}: detailed_evaluation_results.format is {detailed.format!r}, not 'jsonl'"
            )
        last = detailed.file_path.replace("\\", "/").rsplit("/", 1)[-1]
        # A path ending in "/" (or ".") names no file: Path.with_name would raise.
        named = path.with_name(last) if last not in ("", ".") else sibling
        found = named if named.is_file() or not sibling.is_file() else sibling
    if not found.is_file():
        raise DocumentError(
            f"{path}: detailed_evaluation_results: no instance-level file {found.name} beside "
            "it; a run needs per-sample rows (aggregate scores alone make no items)"
        )
    return found

"""The formats :func:`read_run` knows, and how it tells them apart."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from kagreport._errors import UsageError
from kagreport.sources import _inspect, _openai_evals, _promptfoo
from kagreport.sources._common import file_head
from kagreport.sources._eee import is_eee, read_eee
from kagreport.sources._helm import is_helm, read_helm
from kagreport.sources._lmeval import is_lmeval, read_lmeval

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["FORMATS", "SourceFormat", "detect_format", "read_run"]


@dataclass(frozen=True)
class SourceFormat:
    """One readable format.

    Attributes
    ----------
    name : str
        The name ``read_run(path, format=name)`` takes (``"kagreport"``).
    description : str
        What the format is, for messages.
    detect : callable
        ``detect(path) -> bool``: whether ``path`` (a file or folder) looks like this
        format. It reads at most a few kilobytes and never raises for an unreadable path.
    read : callable
        ``read(path) -> Run``; raises :class:`kagreport.KagreportError` naming the file
        and the field for a file it cannot read.
    """

    name: str
    description: str
    detect: Callable[[Path], bool]
    read: Callable[[Path], Run]


def _is_run_document(path: Path) -> bool:
    head = file_head(path, (".json",))
    return head is not None and b'"kagreport.run"' in head


def _read_run_document(path: Path) -> Run:
    from kagreport.runs import Run

    return Run.read(path)


_FORMATS: dict[str, SourceFormat] = {
    "kagreport": SourceFormat(
        "kagreport",
        "a kagreport.run document (Run.write)",
        _is_run_document,
        _read_run_document,
    ),
    "lm-eval": SourceFormat(
        "lm-eval",
        "an lm-evaluation-harness --log_samples output folder (results_*.json, samples_*.jsonl)",
        is_lmeval,
        read_lmeval,
    ),
    "helm": SourceFormat(
        "helm",
        "a HELM run folder (run_spec.json, per_instance_stats.json) or a suite folder of them",
        is_helm,
        read_helm,
    ),
    "promptfoo": SourceFormat(
        "promptfoo",
        "promptfoo eval -o results.json (results version 3) or its JSONL output",
        _promptfoo.is_promptfoo,
        _promptfoo.read_promptfoo,
    ),
    "openai-evals": SourceFormat(
        "openai-evals",
        "an OpenAI evals record log (oaieval --record_path, JSON lines)",
        _openai_evals.is_openai_evals,
        _openai_evals.read_openai_evals,
    ),
    "inspect": SourceFormat(
        "inspect",
        "Inspect AI eval logs (.eval or .json, log format 2), or a folder of them",
        _inspect.is_inspect,
        _inspect.read_inspect,
    ),
    # Last: its folder search looks several levels down.
    "eee": SourceFormat(
        "eee",
        "Every Eval Ever schema 0.3: aggregate <uuid>.json with its <uuid>_samples.jsonl, "
        "or a folder of them",
        is_eee,
        read_eee,
    ),
}
#: The formats by name, in the order :func:`detect_format` tries them.
FORMATS: Mapping[str, SourceFormat] = MappingProxyType(_FORMATS)


def detect_format(path: str | os.PathLike[str]) -> SourceFormat:
    """The format of ``path`` (a file or folder).

    Raises
    ------
    UsageError
        If no known format matches; the message lists the formats.
    """
    where = Path(path)
    if not where.exists():
        raise UsageError(f"{where}: no such file or folder")
    for source in _FORMATS.values():
        if source.detect(where):
            return source
    known = ", ".join(f"{s.name} ({s.description})" for s in _FORMATS.values())
    raise UsageError(f"{where}: not a run of any format kagreport reads; formats: {known}")


def read_run(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """Read another tool's run (or a kagreport.run document) into a :class:`Run`.

    Parameters
    ----------
    path : str or path-like
        The run's file or folder.
    format : str, optional
        A name of :data:`FORMATS`; detected from the path when omitted.

    Raises
    ------
    UsageError
        For an unknown format name, or a path no format matches.
    KagreportError
        For a file the reader cannot read (one line naming the file and the field).
    """
    if format is None:
        source = detect_format(path)
    elif format in _FORMATS:
        source = _FORMATS[format]
    else:
        raise UsageError(f"unknown run format {format!r}; formats: {', '.join(_FORMATS)}")
    return source.read(Path(path))

"""The formats :func:`read_run` knows, and how it tells them apart."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kagreport._errors import UsageError
from kagreport.sources import _inspect, _openai_evals, _promptfoo
from kagreport.sources._common import file_head
from kagreport.sources._eee import is_eee, read_eee
from kagreport.sources._helm import is_helm, read_helm
from kagreport.sources._kag import KAG_OPTIONS, read_kag
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
        ``read(path, **options) -> Run``; raises :class:`kagreport.KagreportError` naming
        the file and the field for a file it cannot read.
    options : tuple of str
        The keyword options ``read`` takes (``datasets`` for a kag tree); empty for most.
    """

    name: str
    description: str
    detect: Callable[[Path], bool]
    read: Callable[..., Run]
    options: tuple[str, ...] = ()


def _never(path: Path) -> bool:
    return False


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
    # Detected only when a datasets file is given (a results tree holds no marker).
    "kag": SourceFormat(
        "kag",
        "a kag benchmark result tree (<results>/<dataset>/<question>/<setup>.json), "
        "read with its datasets file (datasets=...)",
        _never,
        read_kag,
        KAG_OPTIONS,
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


def read_run(path: str | os.PathLike[str], format: str | None = None, **options: Any) -> Run:
    """Read a run of any format into a :class:`Run`: a kag result tree, another tool's
    run, or a kagreport.run document.

    Parameters
    ----------
    path : str or path-like
        The run's file or folder (a kag tree's results root may be a URL).
    format : str, optional
        A name of :data:`FORMATS`; detected from the path when omitted (a kag tree is
        recognised by its ``datasets`` option).
    **options
        The format's options (:attr:`SourceFormat.options`): for ``"kag"``, ``datasets``
        (required), ``prefix``, ``storage_options`` and ``engine_options``
        (:class:`kagreport.EngineOptions`).

    Raises
    ------
    UsageError
        For an unknown format name, a path no format matches, or an option the format
        does not take.
    KagreportError
        For a file the reader cannot read (one line naming the file and the field).
    """
    if format is None:
        source = _FORMATS["kag"] if "datasets" in options else detect_format(path)
    elif format in _FORMATS:
        source = _FORMATS[format]
    else:
        raise UsageError(f"unknown run format {format!r}; formats: {', '.join(_FORMATS)}")
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        takes = f"it takes {', '.join(source.options)}" if source.options else "it takes none"
        raise UsageError(
            f"the {source.name} format takes no option {', '.join(map(repr, unknown))} ({takes})"
        )
    if source.options:
        return source.read(path, **options)
    return source.read(Path(path))

"""Inspect AI eval logs (log format version 2): the files, decoded into typed structs.

A ``.eval`` log is a zip holding ``header.json`` (the :class:`Header`: eval spec,
results, stats), ``samples/<id>_epoch_<n>.json`` (one :class:`Sample` each),
``summaries.json`` (a list of :class:`Sample` without output; an unfinished log keeps
them in chunks ``_journal/summaries/<n>.json``), ``reductions.json`` (the epoch
reductions, :class:`Reduction`) and ``_journal/*``. Entries are deflated or, since
inspect 0.3.206, zstd-compressed (zip method 93), which the standard library reads
from Python 3.14 and the ``zstandard`` package otherwise (extra ``[zstd]``). A
``.json`` log is the same EvalLog as one object (header fields, ``samples``,
``reductions``). inspect writes NaN and infinities bare (``NaN``, ``Infinity``).

Entries and ``.json`` logs are read through :mod:`kagreport.sources._load`: an entry larger
than :data:`~kagreport.sources._load.MEMBER_LIMIT` bytes once decompressed (256 MiB;
``KAGREPORT_MAX_MEMBER_BYTES``) or a ``.json`` log over
:data:`~kagreport.sources._load.DOCUMENT_LIMIT` (1 GiB; ``KAGREPORT_MAX_DOCUMENT_BYTES``) is
refused in one line naming the file, the entry and the limit: a sample of a real log is a
few megabytes, and a hostile zip can declare gigabytes that compress to almost nothing.

The shapes follow ``inspect_ai/log/_log.py`` and ``log/_recorders/eval.py`` of
github.com/UKGovernmentBEIS/inspect_ai (only the fields read are declared).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from kagreport._errors import DocumentError
from kagreport.sources._common import file_head
from kagreport.sources._load import MEMBER_LIMIT, Archive, decode, read_document

__all__ = ["MEMBER_LIMIT", "Header", "Log", "Reduction", "Sample", "Score", "read_log"]

#: The log format version read (EvalLog.version).
VERSION = 2


class Score(msgspec.Struct):
    value: Any = None
    answer: str | None = None
    explanation: str | None = None


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    total_cost: float | None = None


class _Message(msgspec.Struct):
    content: Any = None


class _Choice(msgspec.Struct):
    message: _Message


class _Output(msgspec.Struct):
    choices: list[_Choice] = []


class Sample(msgspec.Struct):
    """An EvalSample, or an EvalSampleSummary (no ``output``; ``error`` a string)."""

    id: int | str
    epoch: int
    input: Any = None  # a string, or the chat messages given to the model
    choices: list[str] | None = None  # a multiple-choice sample's options
    target: str | list[str] = ""
    scores: dict[str, Score] | None = None
    output: _Output | None = None
    model_usage: dict[str, _Usage] = {}
    total_time: float | None = None
    working_time: float | None = None
    error: Any = None  # EvalError {message, traceback} in a sample, str in a summary


class _ReducedScore(Score):
    sample_id: int | str | None = None


class Reduction(msgspec.Struct):
    scorer: str
    samples: list[_ReducedScore]
    reducer: str | None = None


class _Metric(msgspec.Struct):
    name: str
    value: float
    params: dict[str, Any] = {}


class _EvalScore(msgspec.Struct):
    name: str
    scorer: str
    reducer: str | None = None
    params: dict[str, Any] = {}
    metrics: dict[str, _Metric] = {}


class _Results(msgspec.Struct):
    total_samples: int = 0
    completed_samples: int = 0
    scores: list[_EvalScore] = []


class _Config(msgspec.Struct):
    epochs_reducer: list[str] | str | None = None  # EvalConfig: list[str]


class _Dataset(msgspec.Struct):
    name: str | None = None


class _Spec(msgspec.Struct):
    task: str
    model: str
    run_id: str = ""
    task_id: str = ""
    eval_id: str = ""
    created: str = ""
    dataset: _Dataset = msgspec.field(default_factory=_Dataset)
    config: _Config = msgspec.field(default_factory=_Config)
    packages: dict[str, Any] = {}


class Header(msgspec.Struct):
    version: int
    eval: _Spec
    status: str = ""
    results: _Results | None = None
    stats: dict[str, Any] = {}


class _JsonLog(Header):
    samples: list[Sample] | None = None
    reductions: list[Reduction] | None = None


class _Version(msgspec.Struct):
    version: int | None = None


@dataclass(frozen=True)
class Log:
    """One log: its header, samples (summaries when ``texts`` is False), reductions."""

    path: Path
    header: Header
    samples: list[Sample]
    reductions: list[Reduction] | None
    texts: bool


def _check_version(version: int | None, where: str) -> None:
    if version != VERSION:
        raise DocumentError(
            f"{where}: $.version: inspect log format version {version}, "
            f"kagreport reads version {VERSION}"
        )


def _chunk_number(name: str) -> int:
    found = re.search(r"(\d+)\.json$", name)
    return int(found.group(1)) if found else 0


def _read_eval(path: Path, summaries_only: bool) -> Log:
    with Archive(path, ".eval zip") as archive:
        if "header.json" in archive.names:
            head = archive.read("header.json")
        elif "_journal/start.json" in archive.names:  # a log still being written
            head = archive.read("_journal/start.json")
        else:
            raise DocumentError(f"{path}: no header.json (an inspect .eval log)", path=path)
        where = f"{path}: header.json"
        _check_version(decode(head, _Version, where, path=path).version, str(path))
        header = decode(head, Header, where, path=path)
        reductions = None
        if "reductions.json" in archive.names:
            where = f"{path}: reductions.json"
            reductions = decode(archive.read("reductions.json"), list[Reduction], where, path=path)
        if summaries_only:
            return Log(path, header, _summaries(archive), reductions, texts=False)
        names = sorted(n for n in archive.names if re.fullmatch(r"samples/[^/]+\.json", n))
        samples = [decode(archive.read(n), Sample, f"{path}: {n}", path=path) for n in names]
        return Log(path, header, samples, reductions, texts=True)


def _summaries(archive: Archive) -> list[Sample]:
    if "summaries.json" in archive.names:
        chunks = ["summaries.json"]
    else:  # one chunk per flush, numbered from 1
        pattern = r"(_journal/)?summaries/\d+\.json"
        chunks = sorted((n for n in archive.names if re.fullmatch(pattern, n)), key=_chunk_number)
    found: dict[tuple[int | str, int], Sample] = {}
    for name in chunks:
        where = f"{archive.path}: {name}"
        for summary in decode(archive.read(name), list[Sample], where, path=archive.path):
            found[summary.id, summary.epoch] = summary  # a later chunk supersedes (a retry)
    return list(found.values())


def _read_json(path: Path, summaries_only: bool) -> Log:
    data = read_document(path)
    _check_version(decode(data, _Version, str(path), path=path).version, str(path))
    log = decode(data, _JsonLog, str(path), path=path)
    header = Header(log.version, log.eval, log.status, log.results, log.stats)
    return Log(path, header, log.samples or [], log.reductions, texts=not summaries_only)


def read_log(path: Path, *, summaries_only: bool = False) -> Log:
    """Read one ``.eval`` or ``.json`` log.

    Raises
    ------
    DocumentError
        For a corrupt or truncated zip, a log format version other than 2, or an entry
        not shaped like inspect's (one line naming the file, the entry and the field).
    MissingExtraError
        For a zstd-compressed entry without Python 3.14 or the ``zstandard`` package.
    """
    if path.suffix == ".eval":
        return _read_eval(path, summaries_only)
    return _read_json(path, summaries_only)


def is_log(path: Path) -> bool:
    """Whether ``path`` looks like an inspect log (reads at most 4 KB, never raises)."""
    head = file_head(path, (".eval", ".json"))
    if head is None:
        return False
    if path.suffix == ".eval":
        return head.startswith(b"PK\x03\x04")
    return b'"version"' in head and b'"eval"' in head and b'"status"' in head

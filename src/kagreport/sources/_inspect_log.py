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

An entry larger than :data:`MEMBER_LIMIT` bytes once decompressed (256 MiB; the
environment variable ``KAGREPORT_MAX_MEMBER_BYTES`` sets another) is refused before it is
read, naming the file, the entry and the limit: a sample of a real log is a few megabytes,
and a hostile zip can declare gigabytes that compress to almost nothing.

The shapes follow ``inspect_ai/log/_log.py`` and ``log/_recorders/eval.py`` of
github.com/UKGovernmentBEIS/inspect_ai (only the fields read are declared).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from kagreport._errors import DocumentError, UsageError
from kagreport._optional import optional
from kagreport.sources._common import file_head

__all__ = ["Header", "Log", "Reduction", "Sample", "Score", "read_log"]

#: The log format version read (EvalLog.version).
VERSION = 2
_ZSTD = 93  # zip compression method of zstd (APPNOTE 4.4.5)
#: Bytes an entry of a ``.eval`` zip may hold once decompressed (see the module docstring).
MEMBER_LIMIT = 256 * 1024 * 1024


def member_limit() -> int:
    """:data:`MEMBER_LIMIT`, or the byte count ``KAGREPORT_MAX_MEMBER_BYTES`` gives."""
    value = os.environ.get("KAGREPORT_MAX_MEMBER_BYTES", "")
    try:
        return int(value) if value.strip() else MEMBER_LIMIT
    except ValueError:
        raise UsageError(
            f"KAGREPORT_MAX_MEMBER_BYTES must be a number of bytes, not {value!r}"
        ) from None


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
    config: dict[str, Any] = {}
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


def _decode(data: bytes, kind: Any, where: str) -> Any:
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as exc:
        raise DocumentError(f"{where}: {exc}") from None
    except msgspec.DecodeError:
        pass
    # msgspec rejects the bare NaN/Infinity inspect writes; the stdlib reads them.
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise DocumentError(f"{where}: not valid JSON ({exc})") from None
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise DocumentError(f"{where}: {exc}") from None


def _check_version(version: int | None, where: str) -> None:
    if version != VERSION:
        raise DocumentError(
            f"{where}: $.version: inspect log format version {version}, "
            f"kagreport reads version {VERSION}"
        )


def _zstd_decompress(data: bytes) -> bytes:
    try:  # Python 3.14's compression.zstd reads concatenated frames
        stdlib: Any = importlib.import_module("compression.zstd")
    except ImportError:
        with optional("zstandard"):
            zstandard: Any = importlib.import_module("zstandard")
        out = bytearray()
        try:
            while data:  # inspect caps each frame, so a large entry holds several
                reader = zstandard.ZstdDecompressor().decompressobj()
                out += reader.decompress(data)
                if len(reader.unused_data) >= len(data):
                    raise ValueError("zstd frame made no progress")
                data = reader.unused_data
        except zstandard.ZstdError as exc:
            raise ValueError(f"zstd: {exc}") from None
        return bytes(out)
    try:
        return bytes(stdlib.decompress(data))
    except stdlib.ZstdError as exc:
        raise ValueError(f"zstd: {exc}") from None


def _raw_entry(path: Path, info: zipfile.ZipInfo) -> bytes:
    """The stored bytes of a zip entry (zipfile before 3.14 does not open method 93)."""
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("bad local file header")
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        handle.seek(info.header_offset + 30 + skip)
        data = handle.read(info.compress_size)
    if len(data) < info.compress_size:
        raise zipfile.BadZipFile("entry cut short")
    return data


class _Zip:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise DocumentError(f"{path}: not a readable .eval zip ({exc})", path=path) from None
        self.names = set(self.zip.namelist())

    def read(self, name: str) -> bytes:
        where = f"{self.path}: {name}"
        try:
            info = self.zip.getinfo(name)
            limit = member_limit()
            # zipfile reads a deflated or stored entry up to its declared size at most (and
            # checks the CRC); the zstd path checks the size it got against the same figure.
            if info.file_size > limit:
                raise DocumentError(
                    f"{where}: the entry holds {info.file_size:,} bytes decompressed, over "
                    f"the limit of {limit:,} (KAGREPORT_MAX_MEMBER_BYTES sets another)",
                    path=self.path,
                )
            if info.compress_type == _ZSTD:
                data = _zstd_decompress(_raw_entry(self.path, info))
                if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
                    raise zipfile.BadZipFile("CRC check failed")
                return data
            return self.zip.read(name)
        except DocumentError:
            raise  # the size limit (a ValueError too): said as it is
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
            raise DocumentError(f"{where}: corrupt zip entry ({exc})", path=self.path) from None
        except NotImplementedError as exc:
            raise DocumentError(f"{where}: {exc}", path=self.path) from None


def _chunk_number(name: str) -> int:
    found = re.search(r"(\d+)\.json$", name)
    return int(found.group(1)) if found else 0


def _read_eval(path: Path, summaries_only: bool) -> Log:
    archive = _Zip(path)
    with archive.zip:
        if "header.json" in archive.names:
            head = archive.read("header.json")
        elif "_journal/start.json" in archive.names:  # a log still being written
            head = archive.read("_journal/start.json")
        else:
            raise DocumentError(f"{path}: no header.json (an inspect .eval log)", path=path)
        _check_version(_decode(head, _Version, f"{path}: header.json").version, str(path))
        header = _decode(head, Header, f"{path}: header.json")
        reductions = None
        if "reductions.json" in archive.names:
            where = f"{path}: reductions.json"
            reductions = _decode(archive.read("reductions.json"), list[Reduction], where)
        if summaries_only:
            return Log(path, header, _summaries(archive), reductions, texts=False)
        names = sorted(n for n in archive.names if re.fullmatch(r"samples/[^/]+\.json", n))
        samples = [_decode(archive.read(n), Sample, f"{path}: {n}") for n in names]
        return Log(path, header, samples, reductions, texts=True)


def _summaries(archive: _Zip) -> list[Sample]:
    if "summaries.json" in archive.names:
        chunks = ["summaries.json"]
    else:  # one chunk per flush, numbered from 1
        pattern = r"(_journal/)?summaries/\d+\.json"
        chunks = sorted((n for n in archive.names if re.fullmatch(pattern, n)), key=_chunk_number)
    found: dict[tuple[int | str, int], Sample] = {}
    for name in chunks:
        for summary in _decode(archive.read(name), list[Sample], f"{archive.path}: {name}"):
            found[summary.id, summary.epoch] = summary  # a later chunk supersedes (a retry)
    return list(found.values())


def _read_json(path: Path, summaries_only: bool) -> Log:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read ({exc.strerror})", path=path) from None
    _check_version(_decode(data, _Version, str(path)).version, str(path))
    log = _decode(data, _JsonLog, str(path))
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

"""Result files: the envelope ``kag benchmark`` writes for each (question, setup).

A file holds exactly one of ``{"ok": {"result": str, "stats": {...}}}`` and
``{"error": str}`` (kag ``src/subcommand/benchmark/result.rs``,
``src/generation/config.rs``, ``src/retrieval/``). Decoding is strict about
required keys and lenient about unknown ones, like kag's serde types, and it
never builds the embedding vector (``vec`` is kept as raw JSON bytes).
"""

from __future__ import annotations

import os
from typing import Annotated, NamedTuple

import msgspec

from kagreport._errors import ResultFileError

__all__ = [
    "ResultRecord",
    "RetrievalSample",
    "decode_result",
    "read_bytes",
    "read_result",
]

# msgspec cannot bound ints beyond int64 in a constraint: values above 2**64 - 1
# (u64/usize in kag) are rejected after decoding.
_U64 = Annotated[int, msgspec.Meta(ge=0)]
_U64_MAX = 2**64 - 1
_U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]
_NANOS_PER_SEC = 1_000_000_000
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


class _DurationObject(msgspec.Struct, forbid_unknown_fields=True):
    # serde's Duration rejects unknown fields.
    secs: _U64
    nanos: _U32


# serde accepts a Duration as a map or as a [secs, nanos] sequence.
_Duration = _DurationObject | tuple[_U64, _U32]


class _Neo4j(msgspec.Struct):
    vertices: _U64
    relationships: _U64
    properties: _U64
    time: _Duration


class _Database(msgspec.Struct, forbid_unknown_fields=True):
    # An externally tagged enum: exactly one variant key.
    neo4j: _Neo4j


class _Embedding(msgspec.Struct):
    document: str
    vec: msgspec.Raw  # required, but never materialised as floats


class _Embedder(msgspec.Struct):
    embedding: _Embedding
    database: _Database
    time: _Duration


class _RetrievalStats(msgspec.Struct, forbid_unknown_fields=True):
    embedder: _Embedder


class _Retrieval(msgspec.Struct):
    result: str
    stats: _RetrievalStats


class _AugmentedGeneration(msgspec.Struct):
    retriever: str
    database: str


class _Config(msgspec.Struct):
    provider: str
    model: str
    temperature: float
    tokens: _U32 | None = None
    augmented_generation: _AugmentedGeneration | None = None


class _Stats(msgspec.Struct):
    prompt: str
    time: _Duration
    config: _Config
    retrieval: _Retrieval | None = None


class _Ok(msgspec.Struct):
    result: str
    stats: _Stats


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    ok: _Ok | msgspec.UnsetType = msgspec.UNSET
    error: str | msgspec.UnsetType = msgspec.UNSET


_decoder = msgspec.json.Decoder(_Envelope)
_UNSET = msgspec.UNSET


class RetrievalSample(NamedTuple):
    """What one KAG result reports about its retrieval.

    Attributes
    ----------
    time_ns : int
        Wall time of the whole retrieval (``retrieval.stats.embedder.time``), ns.
    vertices, relationships, properties : int
        Graph elements rendered into the context (neo4j counts).
    """

    time_ns: int
    vertices: int
    relationships: int
    properties: int


class ResultRecord(NamedTuple):
    """One decoded result file, reduced to what grading and search need.

    Attributes
    ----------
    result : str or None
        The raw model response (``ok.result``); ``None`` for an error record.
    error : str or None
        The benchmark error message; ``None`` for a success record.
    generation_ns : int or None
        Wall time of the generation call (it includes retrieval), ns.
    context_bytes : int or None
        UTF-8 length of the rendered prompt, bytes.
    retrieval : RetrievalSample or None
        Present for KAG setups (setups with a retriever).
    provider, model : str or None
        The generation configuration.
    context : str or None
        The retrieved context rendered into the prompt (``retrieval.result``).
    """

    result: str | None
    error: str | None
    generation_ns: int | None = None
    context_bytes: int | None = None
    retrieval: RetrievalSample | None = None
    provider: str | None = None
    model: str | None = None
    context: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether this file records a benchmark execution error."""
        return self.error is not None


class _Invalid(ValueError):
    pass


def _nanos(duration: _DurationObject | tuple[int, int]) -> int:
    if type(duration) is _DurationObject:
        secs, nanos = duration.secs, duration.nanos
    else:
        secs, nanos = duration  # type: ignore[misc]
    if secs > _U64_MAX:
        raise _Invalid("Duration secs does not fit in 64 bits")
    if nanos >= _NANOS_PER_SEC:
        secs += nanos // _NANOS_PER_SEC  # serde carries excess nanoseconds
        nanos %= _NANOS_PER_SEC
        if secs > _U64_MAX:
            raise _Invalid("overflow deserializing Duration")
    return secs * _NANOS_PER_SEC + nanos


def decode_result(data: bytes | memoryview | str) -> ResultRecord:
    """Decode the bytes of one result file.

    Parameters
    ----------
    data : bytes
        The file's content (UTF-8 JSON).

    Returns
    -------
    ResultRecord

    Raises
    ------
    ValueError
        If the content is not a valid kag result envelope (the message says why).
    """
    try:
        envelope = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise _Invalid(str(exc)) from None
    except RecursionError:
        raise _Invalid("JSON nested too deeply") from None
    ok, error = envelope.ok, envelope.error
    if ok is _UNSET:
        if error is _UNSET:
            raise _Invalid("the envelope has neither 'ok' nor 'error'")
        return ResultRecord(None, error)
    if error is not _UNSET:
        raise _Invalid("the envelope has both 'ok' and 'error'")
    assert isinstance(ok, _Ok)
    stats = ok.stats
    prompt = stats.prompt
    context = len(prompt) if prompt.isascii() else len(prompt.encode("utf-8", "surrogatepass"))
    retrieval = context_text = None
    if stats.retrieval is not None:
        context_text = stats.retrieval.result
        embedder = stats.retrieval.stats.embedder
        neo4j = embedder.database.neo4j
        _nanos(neo4j.time)  # validated as kag does (overflow), though not reported
        if max(neo4j.vertices, neo4j.relationships, neo4j.properties) > _U64_MAX:
            raise _Invalid("a neo4j count does not fit in 64 bits")
        retrieval = RetrievalSample(
            _nanos(embedder.time), neo4j.vertices, neo4j.relationships, neo4j.properties
        )
    config = stats.config
    return ResultRecord(
        ok.result,
        None,
        _nanos(stats.time),
        context,
        retrieval,
        config.provider,
        config.model,
        context_text,
    )


_READ_SIZE = 1 << 16  # most result files fit in one read (below malloc's mmap threshold)


def read_bytes(path: str) -> bytes:
    """Read a whole file with as few system calls as possible (no ``fstat``).

    A read shorter than asked ends a regular file; only a file of 64 KiB or
    more needs a second read.

    Raises
    ------
    OSError
        As :func:`os.open` and :func:`os.read` do.
    """
    fd = os.open(path, _OPEN_FLAGS)
    try:
        data = os.read(fd, _READ_SIZE)
        if len(data) < _READ_SIZE:
            return data
        chunks = [data]
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_result(path: str | os.PathLike[str]) -> ResultRecord:
    """Read and decode one result file.

    Raises
    ------
    ResultFileError
        If the file cannot be read or is not a kag result envelope; the
        message names the file.
    """
    name = os.fspath(path)
    try:
        data = read_bytes(name)
    except OSError as exc:
        raise ResultFileError(f"cannot read {name}: {exc.strerror or exc}", path=name) from None
    try:
        return decode_result(data)
    except ValueError as exc:
        raise ResultFileError(f"{name} is not a kag result file: {exc}", path=name) from None

"""The serde types of a result file, as msgspec structs, and what they share.

kag's ``src/subcommand/benchmark/result.rs``, ``src/generation/config.rs`` and
``src/retrieval/`` define what a result file holds; these structs read the same fields,
strict about required keys and lenient about unknown ones as serde is (Duration and the
externally tagged enums refuse an unknown key). ``vec`` is kept as raw JSON bytes, never
built. :mod:`kagreport.kag._records` decodes with them.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from kagreport._errors import KagreportError

# msgspec cannot bound ints beyond int64 in a constraint: values above 2**64 - 1
# (u64/usize in kag) are rejected after decoding.
_U64 = Annotated[int, msgspec.Meta(ge=0)]
_U64_MAX = 2**64 - 1
_U32 = Annotated[int, msgspec.Meta(ge=0, le=2**32 - 1)]  # Duration's nanos
_NANOS_PER_SEC = 1_000_000_000


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
    # UNSET when absent: the duplicate-key check counts the keys present.
    tokens: _U64 | msgspec.UnsetType | None = msgspec.UNSET  # Option<u64> (cli/generation.rs:85)
    augmented_generation: _AugmentedGeneration | msgspec.UnsetType | None = msgspec.UNSET


class _Stats(msgspec.Struct):
    prompt: str
    time: _Duration
    config: _Config
    retrieval: _Retrieval | msgspec.UnsetType | None = msgspec.UNSET


class _Ok(msgspec.Struct):
    result: str
    stats: _Stats


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    ok: _Ok | msgspec.UnsetType = msgspec.UNSET
    error: str | msgspec.UnsetType = msgspec.UNSET


_decoder = msgspec.json.Decoder(_Envelope)
_UNSET = msgspec.UNSET


class _Invalid(KagreportError, ValueError):
    """Content that is not a valid kag result envelope (a ValueError, as the decoder's own)."""


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

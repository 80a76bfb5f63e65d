"""Duplicate keys in a result file: what kag's serde refuses and msgspec keeps silently.

serde's derived structs (and Duration) reject a field given twice
("duplicate field `result`") and its externally tagged enums (the envelope, the
retrieval and database stats) accept exactly one key, while maps keep the last value
and ignored (unknown) fields are never looked into. msgspec keeps the last value
silently. The check is exact and costs little: every key is followed by one colon,
so a file whose colons, the embedding vector's aside (found from the end, where kag
writes little after it), number exactly the typed keys present plus the colons of the
decoded strings has no repeated and no unknown key (provided no colon is written
as an escape, ``\\u003a``). Any other file is parsed again, slowly, to find out.
"""

from __future__ import annotations

import msgspec

from kagreport.kag._envelope import _Invalid


def _check_unique_keys(
    text: bytes,
    keys: int,
    colons: int,
    vec: msgspec.Raw | None,
    bounds: tuple[int, int] | None,
) -> None:
    if vec is None:
        found = text.count(b":")
        head = tail = len(text)
    elif bounds is None:
        found = -1
        head = tail = len(text)
    else:  # leave the vector out: it is most of the file, and has no key
        head, tail = bounds
        found = text.count(b":", 0, head) + text.count(b":", tail)
    if found == keys or (
        found == keys + colons
        and text.find(b"\\u003", 0, head) < 0
        and (text.find(b"\\", tail) < 0 or text.find(b"\\u003", tail) < 0)  # memchr first
    ):
        return
    problem = _repeated_key(text)
    if problem is not None:
        raise _Invalid(problem)


class _Pairs(list[tuple[str, object]]):
    """A JSON object as its (key, value) pairs, repeats kept."""


_Schema = tuple[bool, dict[str, "_Schema | None"]]  # (an enum: one key only, its fields)
_DURATION: _Schema = (False, {"secs": None, "nanos": None})
_NEO4J: _Schema = (
    False,
    {"vertices": None, "relationships": None, "properties": None, "time": _DURATION},
)
_EMBEDDER: _Schema = (
    False,
    {
        "embedding": (False, {"document": None, "vec": None}),
        "database": (True, {"neo4j": _NEO4J}),
        "time": _DURATION,
    },
)
_CONFIG: _Schema = (
    False,
    {
        "provider": None,
        "model": None,
        "temperature": None,
        "tokens": None,
        "augmented_generation": (False, {"retriever": None, "database": None}),
    },
)
_STATS: _Schema = (
    False,
    {
        "prompt": None,
        "time": _DURATION,
        "config": _CONFIG,
        "retrieval": (False, {"result": None, "stats": (True, {"embedder": _EMBEDDER})}),
    },
)
_ENVELOPE: _Schema = (True, {"ok": (False, {"result": None, "stats": _STATS}), "error": None})


def _repeated_key(text: bytes) -> str | None:
    """Where kag's serde would reject a key given twice (or an enum given two), if anywhere."""
    import json

    try:
        tree = json.loads(text, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):  # msgspec parsed it: leave it to msgspec
        return None
    return _walk(tree, _ENVELOPE, "the envelope")


def _walk(value: object, schema: _Schema, where: str) -> str | None:
    if not isinstance(value, _Pairs):  # null, a [secs, nanos] pair: nothing to check
        return None
    one_key, fields = schema
    if one_key and len(value) > 1:
        names = ", ".join(repr(key) for key, _ in value)
        return f"{where} must have exactly one key, not {len(value)} ({names})"
    last: dict[str, object] = {}
    for key, item in value:
        if key in fields:
            if key in last:
                return f"duplicate field `{key}` in {where}"
            last[key] = item
    for key, item in last.items():
        inner = fields[key]
        if inner is not None:
            found = _walk(item, inner, key if where == "the envelope" else f"{where}.{key}")
            if found is not None:
                return found
    return None

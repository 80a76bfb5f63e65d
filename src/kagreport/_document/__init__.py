"""Serialised documents: JSON, JSONL, YAML and TOML, NaN- and None-aware, and
:class:`Document`, the base of every versioned kagreport document (the evaluations, the
comparison, the run), with :func:`convert`, which checks a parsed mapping against a
:mod:`msgspec` shape and names the path of a bad field (``items[3].scores.correct``).

Conventions (ANSWER_EVALUATION_SPEC.md, PITFALLS.md B11):

- JSON/JSONL have no NaN or infinity: undefined numbers are written ``null``.
- YAML is UTF-8 (``allow_unicode``); NaN is written ``.nan``, ``None`` as ``null``.
- TOML has no null: keys whose value is ``None`` are omitted (reading them back
  gives ``None`` again, as every such field defaults to ``None``). NaN is written
  ``nan``. ``None`` inside an array cannot be written in TOML and raises ``ValueError``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from kagreport._atomic import write_atomic
from kagreport._document._convert import _shown, convert
from kagreport._errors import DocumentError, MissingExtraError
from kagreport._format import json_safe
from kagreport._io import read_regular_file
from kagreport._optional import optional

__all__ = [
    "FORMATS",
    "MALFORMED",
    "Document",
    "canonical",
    "convert",
    "dumps_document",
    "format_for",
    "jsonable",
    "loads_document",
    "write_document",
]

FORMATS = ("json", "jsonl", "yaml", "toml")
_SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


def format_for(path: str | os.PathLike[str], format: str | None) -> str:
    """The format to use for ``path``: ``format`` if given, else from the suffix.

    Raises
    ------
    ValueError
        For an unknown format or suffix.
    """
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
        return format
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in _SUFFIXES:
        raise ValueError(
            f"cannot tell the format of {os.fspath(path)!r} from its suffix "
            "(.json, .jsonl, .yaml, .yml or .toml)"
        )
    return _SUFFIXES[suffix]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_text(value: Any, indent: int | None = None, *, compact: bool = False) -> str:
    separators = (",", ":") if compact else None
    text = json.dumps(
        value, ensure_ascii=False, indent=indent, allow_nan=False, separators=separators
    )
    # U+2028/U+2029 are line breaks to str.splitlines() and to old JavaScript: escape them
    # (they can only occur inside JSON strings, where the escape means the same).
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    # A lone surrogate (a file name read with surrogateescape) cannot be encoded as UTF-8:
    # its JSON escape is valid JSON and reads back as the same string.
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _yaml_dumper() -> Any:
    with optional("yaml"):
        import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> Any:
        # PyYAML folds some unprintable characters (NEL U+0085) in plain and single-quoted
        # scalars; double quotes escape them, so they survive a round trip.
        style = None if value.isprintable() else '"'
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return Dumper


def jsonable(value: Any) -> Any:
    """Deep copy with mappings as dicts (string keys) and tuples as lists."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def canonical(value: Any) -> Any:
    """:func:`jsonable` with NaN and infinities as None: equal reports compare equal."""
    return json_safe(jsonable(value))


def _drop_none(value: Any, where: str = "$") -> Any:
    if isinstance(value, Mapping):
        return {str(k): _drop_none(v, f"{where}.{k}") for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        if any(v is None for v in value):
            raise ValueError(f"TOML cannot hold None inside an array (at {where})")
        return [_drop_none(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def dumps_document(
    document: Mapping[str, Any],
    format: str,
    *,
    items_key: str = "items",
    compact: bool = False,
    plain: Mapping[str, Any] | None = None,
) -> str:
    """Serialise a report document (the output of a ``to_dict``).

    ``jsonl`` writes a header line (every key but ``items_key``, with
    ``"record": "header"``) followed by one line per item (``"record": "item"``).
    ``compact`` JSON is one line without spaces (a columnar document), else indented by 2.
    ``plain`` is ``document`` already as JSON holds it (:func:`json_safe`), if known.

    Raises
    ------
    ValueError
        For an unknown format, or a value the format cannot hold.
    """
    if format in ("json", "jsonl") and plain is None:
        plain = json_safe(document)
    if format == "json":
        if compact:
            return _json_text(plain, compact=True)
        return _json_text(plain, indent=2) + "\n"
    if format == "jsonl":
        assert plain is not None
        header = {"record": "header", **{k: v for k, v in plain.items() if k != items_key}}
        lines = [_json_text(header)]
        lines += [_json_text({"record": "item", **item}) for item in plain.get(items_key, [])]
        return "\n".join(lines) + "\n"
    if format == "yaml":
        with optional("yaml"):
            import yaml

        return str(
            yaml.dump(
                jsonable(document),
                Dumper=_yaml_dumper(),
                allow_unicode=True,
                sort_keys=False,
                default_flow_style=False,
            )
        )
    if format == "toml":
        with optional("tomli_w"):
            import tomli_w

        return tomli_w.dumps(_drop_none(jsonable(document)))
    raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")


def loads_document(text: str, format: str, *, items_key: str = "items") -> dict[str, Any]:
    """Parse a document written by :func:`dumps_document`.

    Raises
    ------
    ValueError
        If the text does not parse in that format, or is not a mapping.
    """
    try:
        if format == "json":
            data = json.loads(text)
        elif format == "jsonl":
            lines = [json.loads(line) for line in text.split("\n") if line.strip()]
            if not lines or lines[0].get("record") != "header":
                raise ValueError("the first JSONL line is not a report header")
            data = {k: v for k, v in lines[0].items() if k != "record"}
            data[items_key] = [
                {k: v for k, v in line.items() if k != "record"} for line in lines[1:]
            ]
        elif format == "yaml":
            with optional("yaml"):
                import yaml

            data = yaml.safe_load(text)
        elif format == "toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    except (ValueError, MissingExtraError):
        raise
    except Exception as exc:  # yaml.YAMLError, tomllib.TOMLDecodeError subclass ValueError or not
        raise ValueError(f"not valid {format.upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"a report must be a mapping, not {type(data).__name__}")
    return data


def write_document(
    document: Mapping[str, Any],
    path: str | os.PathLike[str],
    format: str | None,
    *,
    items_key: str = "items",
) -> None:
    """Serialise and write atomically (the old file survives any failure)."""
    text = dumps_document(document, format_for(path, format), items_key=items_key)
    write_atomic(path, text)


# ------------------------------------------------------------------ the base

#: What a wrongly shaped mapping raises while a document is rebuilt from it.
MALFORMED = (KeyError, TypeError, AttributeError, OverflowError, RecursionError)
_Doc = TypeVar("_Doc", bound="Document")


class Document:
    """A versioned document: ``schema`` and its version first in :meth:`to_dict`, written
    and read in JSON, JSONL, YAML or TOML (or the subset :attr:`WRITES` names), with
    NaN-aware equality.

    A subclass sets :attr:`SCHEMA` and :attr:`SCHEMA_VERSION` and defines :meth:`to_dict`
    and :meth:`_from_checked` (the mapping's schema and version already checked), which
    checks the mapping's shape with :func:`convert`.
    """

    #: The document's ``schema`` value, e.g. ``"kagreport.AnswerEvaluation"``.
    SCHEMA: ClassVar[str]
    #: The ``schema_version`` this code writes.
    SCHEMA_VERSION: ClassVar[int]
    #: The versions this code reads (empty for :attr:`SCHEMA_VERSION` only).
    READABLE_VERSIONS: ClassVar[tuple[int, ...]] = ()
    #: The key holding the version.
    VERSION_KEY: ClassVar[str] = "schema_version"
    #: The formats written and read; with one, it is used whatever the file's suffix.
    WRITES: ClassVar[tuple[str, ...]] = FORMATS
    #: JSON on one line without spaces (a columnar document), instead of indented by 2.
    COMPACT: ClassVar[bool] = False
    #: The list written one JSONL line per entry (after a header line).
    ITEMS_KEY: ClassVar[str] = "items"
    #: The noun of the schema error (``not a kagreport.X report``).
    NOUN: ClassVar[str] = "report"

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - each document defines it
        raise NotImplementedError

    @classmethod
    def _from_checked(cls: type[_Doc], data: Mapping[str, Any]) -> _Doc:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def _format_of(cls, path: str | os.PathLike[str], format: str | None) -> str:
        if format is None and len(cls.WRITES) == 1:
            return cls.WRITES[0]
        kind = format_for(path, format)
        if kind not in cls.WRITES:
            raise ValueError(
                f"a {cls.__name__} is written as {' or '.join(w.upper() for w in cls.WRITES)}, "
                f"not {kind.upper()}"
            )
        return kind

    def dumps(self, format: str = "json") -> str:
        """Serialise to ``"json"``, ``"jsonl"`` (a header line, then one line per item),
        ``"yaml"`` or ``"toml"`` (keys whose value is None are omitted: TOML has no null),
        those :attr:`WRITES` names.

        Raises
        ------
        ValueError
            For an unknown format, or a value the format cannot hold (None inside a
            list in TOML).
        """
        kind = self._format_of("x." + format, format)
        plain = self._plain() if kind in ("json", "jsonl") else None
        return dumps_document(
            plain or self.to_dict(),
            kind,
            items_key=self.ITEMS_KEY,
            compact=self.COMPACT,
            plain=plain,
        )

    def write(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write atomically; the format defaults to the suffix (.json, .jsonl, .yaml, .toml).

        Raises
        ------
        ValueError
            For an unknown format or suffix.
        OSError
            If the file cannot be written; an existing file is then left intact.
        """
        write_atomic(path, self.dumps(self._format_of(path, format)))

    def _plain(self) -> dict[str, Any]:
        """:meth:`to_dict` as JSON holds it (:func:`json_safe`: NaN as None, lists, string
        keys); a columnar document builds it faster itself."""
        return dict(json_safe(self.to_dict()))

    @classmethod
    def read(cls: type[_Doc], path: str | os.PathLike[str], format: str | None = None) -> _Doc:
        """Read a document written by :meth:`write` (JSON, JSONL, YAML or TOML).

        Raises
        ------
        OSError
            If the file cannot be read.
        DocumentError
            A ValueError: if it does not parse, or is not a document of this kind and
            schema version (the message names the file and the field at fault).
        """
        kind = cls._format_of(path, format)
        return cls._from_text(cls._read_text(path), kind, os.fspath(path))

    @classmethod
    def _read_text(cls, path: str | os.PathLike[str]) -> str:
        # Not open(): a FIFO with no writer would hang the reader (refused: an OSError).
        return read_regular_file(path).decode("utf-8-sig")

    @classmethod
    def _from_text(cls: type[_Doc], text: str, format: str, source: str | None) -> _Doc:
        """The document in ``text``; errors are prefixed with ``source``, if any."""
        at = f"{source}: " if source else ""
        try:
            data = loads_document(text, format, items_key=cls.ITEMS_KEY)
        except MissingExtraError:
            raise
        except ValueError as exc:
            reason = " ".join(str(exc).split())  # one line, whatever the parser printed
            if isinstance(exc, json.JSONDecodeError):
                reason = f"not a {format.upper()} document: {reason}"
            raise DocumentError(at + reason, path=source) from None
        try:
            return cls.from_dict(data)
        except DocumentError as exc:
            raise DocumentError(at + exc.message, path=source) from None

    @classmethod
    def from_dict(cls: type[_Doc], data: Mapping[str, Any]) -> _Doc:
        """Rebuild from :meth:`to_dict` output.

        Raises
        ------
        DocumentError
            A ValueError: if the schema or its version is not this one, or the mapping
            is not shaped like this document (the message gives the path of the field).
        """
        if not isinstance(data, Mapping):
            raise DocumentError(
                f"not a valid {cls.__name__}: expected an object, got {_shown(data)}"
            )
        cls._check_schema(data)
        try:
            return cls._from_checked(data)
        except DocumentError:
            raise
        except MALFORMED as exc:
            # A hand-edited or foreign file: say so, whatever the shape.
            raise DocumentError(f"not a valid {cls.__name__}: {exc!r}") from None

    @classmethod
    def _check_schema(cls, data: Mapping[str, Any]) -> None:
        schema, version = data.get("schema"), data.get(cls.VERSION_KEY)
        if schema != cls.SCHEMA:
            raise DocumentError(f"not a {cls.SCHEMA} {cls.NOUN} (schema {schema!r})")
        readable = cls.READABLE_VERSIONS or (cls.SCHEMA_VERSION,)
        if type(version) is not int or version not in readable:
            versions = "version" if len(readable) == 1 else "versions"
            raise DocumentError(
                f"{cls.SCHEMA} schema version {version!r} is not supported "
                f"(this kagreport reads {versions} {', '.join(map(str, readable))})"
            )

    def __eq__(self, other: object) -> bool:
        # NaN-aware: NaN equals NaN here, so read(write(x)) == x.
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Document)
        return bool(self._plain() == other._plain())  # canonical(): json_safe(jsonable(x))

    __hash__ = None  # type: ignore[assignment]

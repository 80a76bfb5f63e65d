"""Serialised documents: JSON, JSONL, YAML and TOML, NaN- and None-aware, and
:class:`Document`, the base of every versioned kagreport document (the evaluations, the
comparison, the run).

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
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from kagreport._atomic import write_atomic
from kagreport._errors import MissingExtraError
from kagreport._format import json_safe
from kagreport._optional import optional

__all__ = [
    "FORMATS",
    "Document",
    "canonical",
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


def _json_text(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    # U+2028/U+2029 are line breaks to str.splitlines() and to old JavaScript: escape them
    # (they can only occur inside JSON strings, where the escape means the same).
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


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


def dumps_document(document: Mapping[str, Any], format: str, *, items_key: str = "items") -> str:
    """Serialise a report document (the output of a ``to_dict``).

    ``jsonl`` writes a header line (every key but ``items_key``, with
    ``"record": "header"``) followed by one line per item (``"record": "item"``).

    Raises
    ------
    ValueError
        For an unknown format, or a value the format cannot hold.
    """
    if format == "json":
        return _json_text(json_safe(document), indent=2) + "\n"
    if format == "jsonl":
        plain = json_safe(document)
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


#: What a wrongly shaped mapping raises while a document is rebuilt from it.
MALFORMED = (KeyError, TypeError, AttributeError, OverflowError, RecursionError)
_Doc = TypeVar("_Doc", bound="Document")


class Document:
    """A versioned document: ``schema`` and ``schema_version`` keys first in :meth:`to_dict`,
    written and read in JSON, JSONL, YAML or TOML, with NaN-aware equality.

    A subclass sets :attr:`SCHEMA` and :attr:`SCHEMA_VERSION` and defines :meth:`to_dict`
    and :meth:`_from_checked` (the mapping's schema and version already checked).
    """

    #: The document's ``schema`` value, e.g. ``"kagreport.AnswerEvaluation"``.
    SCHEMA: ClassVar[str]
    #: The only ``schema_version`` this code reads and writes.
    SCHEMA_VERSION: ClassVar[int]
    #: The list written one JSONL line per entry (after a header line).
    ITEMS_KEY: ClassVar[str] = "items"
    #: The noun of the schema error: ``not a kagreport.X report``.
    NOUN: ClassVar[str] = "report"

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - each document defines it
        raise NotImplementedError

    @classmethod
    def _from_checked(cls: type[_Doc], data: Mapping[str, Any]) -> _Doc:  # pragma: no cover
        raise NotImplementedError

    def dumps(self, format: str = "json") -> str:
        """Serialise to ``"json"``, ``"jsonl"`` (a header line, then one line per item),
        ``"yaml"`` or ``"toml"`` (keys whose value is None are omitted: TOML has no null).

        Raises
        ------
        ValueError
            For an unknown format, or a value the format cannot hold (None inside a
            list in TOML).
        """
        kind = format_for("x." + format, format)
        return dumps_document(self.to_dict(), kind, items_key=self.ITEMS_KEY)

    def write(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write atomically; the format defaults to the suffix (.json, .jsonl, .yaml, .toml).

        Raises
        ------
        ValueError
            For an unknown format or suffix.
        OSError
            If the file cannot be written; an existing file is then left intact.
        """
        write_document(self.to_dict(), path, format, items_key=self.ITEMS_KEY)

    @classmethod
    def read(cls: type[_Doc], path: str | os.PathLike[str], format: str | None = None) -> _Doc:
        """Read a document written by :meth:`write` (JSON, JSONL, YAML or TOML).

        Raises
        ------
        OSError
            If the file cannot be read.
        ValueError
            If it does not parse, or is not a document of this kind and schema version.
        """
        kind = format_for(path, format)
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
        return cls.from_dict(loads_document(text, kind, items_key=cls.ITEMS_KEY))

    @classmethod
    def from_dict(cls: type[_Doc], data: Mapping[str, Any]) -> _Doc:
        """Rebuild from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            If the schema or its version is not this one, or the mapping is not
            shaped like this document.
        """
        cls._check_schema(data)
        try:
            return cls._from_checked(data)
        except MALFORMED as exc:
            # A hand-edited or foreign file: say so, whatever the shape.
            raise ValueError(f"not a valid {cls.__name__}: {exc!r}") from None

    @classmethod
    def _check_schema(cls, data: Mapping[str, Any]) -> None:
        schema, version = data.get("schema"), data.get("schema_version")
        if schema != cls.SCHEMA:
            raise ValueError(f"not a {cls.SCHEMA} {cls.NOUN} (schema {schema!r})")
        if type(version) is not int or version != cls.SCHEMA_VERSION:
            raise ValueError(
                f"{cls.SCHEMA} schema version {version!r} is not supported "
                f"(this kagreport reads version {cls.SCHEMA_VERSION})"
            )

    def __eq__(self, other: object) -> bool:
        # NaN-aware: NaN equals NaN here, so read(write(x)) == x.
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Document)
        return bool(canonical(self.to_dict()) == canonical(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]

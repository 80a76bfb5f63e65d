"""Report serialisation: JSON, JSONL, YAML and TOML, NaN- and None-aware.

Conventions (ANSWER_EVALUATION_SPEC.md, PITFALLS.md B11):

- JSON/JSONL have no NaN or infinity: undefined numbers are written ``null``.
- YAML is UTF-8 (``allow_unicode``); NaN is written ``.nan``, ``None`` as ``null``.
- TOML has no null: keys whose value is ``None`` are omitted (reading them back
  gives ``None`` again, as every such field defaults to ``None``). NaN is written
  ``nan``. ``None`` inside an array cannot be written in TOML and raises ``ValueError``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import Any

from kagreport._atomic import write_atomic
from kagreport._errors import MissingExtraError
from kagreport._optional import optional

__all__ = [
    "FORMATS",
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


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_none(v) for v in value]
    return value


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
    return _nan_to_none(jsonable(value))


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
        return _json_text(_nan_to_none(document), indent=2) + "\n"
    if format == "jsonl":
        plain = _nan_to_none(document)
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
    document: Mapping[str, Any], path: str | os.PathLike[str], format: str | None
) -> None:
    """Serialise and write atomically (the old file survives any failure)."""
    text = dumps_document(document, format_for(path, format))
    write_atomic(path, text)

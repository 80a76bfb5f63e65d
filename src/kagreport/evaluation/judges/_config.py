"""Judges from a TOML file, and items from a JSONL file (the ``kagreport evaluate`` inputs).

Judges file::

    [[judges]]
    kind = "option_extraction"          # option_match, exact_match, token_f1, regex,
                                        # contains, option_extraction, llm
    [[judges]]
    kind = "llm"
    name = "gpt-judge"
    model = "gpt-4o-mini"
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"      # the variable holding the key (never the key itself)
    prompt_file = "judge.jinja"          # or prompt = "..."; relative to this file
    scale = "1-5"

Every key other than ``kind``, ``api_key_env``, ``prompt_file`` and
``system_prompt_file`` is passed to the judge's constructor.

A key goes only where the file sends it: the variable ``api_key_env`` names is sent to that
judge's ``base_url``, whatever it is; without ``api_key_env``, ``OPENAI_API_KEY`` is sent
only to OpenAI's own API (``https://api.openai.com``) and any other server gets a
placeholder (see :class:`~kagreport.evaluation.judges._llm.LLMJudge`'s ``api_key``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from kagreport._document._config import decode_config, read_toml
from kagreport._errors import ConfigError, NotUTF8Error, decode_utf8
from kagreport._io import read_regular_file
from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation.judges._protocol import Judge
from kagreport.evaluation.judges._rules import (
    Contains,
    ExactMatch,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
)
from kagreport.evaluation.judges._verdict import Scale

__all__ = ["ConfigError", "load_items_jsonl", "load_judges", "prompt_files"]


_ITEM_KEYS = {
    "identifier", "question", "answer", "reference", "scores", "verdicts", "latency",
    "error", "metadata",
}  # fmt: skip

# The judges file's shape: a table per judge, its ``kind`` the tag. The types are checked
# here; each judge's constructor checks the values' domains (a regex compiles, a timeout is
# positive), one home for those rules whether a judge is built in code or from a file.
_Name = Annotated[str, msgspec.Meta(pattern=r"\S")]
_Text = Annotated[str, msgspec.Meta(min_length=1)]


class _Table(msgspec.Struct, forbid_unknown_fields=True, tag_field="kind"):
    """Keys every judge table may have besides its options."""

    name: _Name | UnsetType = UNSET


class _OptionMatch(_Table, tag="option_match"):
    pass


class _ExactMatch(_Table, tag="exact_match"):
    pass


class _TokenF1(_Table, tag="token_f1"):
    pass


class _Regex(_Table, tag="regex"):
    pattern: str | UnsetType = UNSET
    ignore_case: bool | UnsetType = UNSET


class _Contains(_Table, tag="contains"):
    text: str | UnsetType = UNSET


class _OptionExtraction(_Table, tag="option_extraction"):
    letters: str | UnsetType = UNSET


class _LLM(_Table, tag="llm", kw_only=True):
    # LLMJudge's keyword arguments; the templates inline or from files beside the judges
    # file, the key from the variable api_key_env names (never from the file).
    name: _Name
    model: str
    base_url: str
    prompt: str | UnsetType = UNSET
    prompt_file: _Text | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
    system_prompt_file: _Text | UnsetType = UNSET
    api_key_env: _Text | UnsetType = UNSET
    scale: Scale | UnsetType = UNSET
    criteria: tuple[str, ...] | UnsetType = UNSET
    score_range: tuple[float, float] | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    seed: int | UnsetType = UNSET
    max_tokens: int | UnsetType = UNSET
    timeout: float | UnsetType = UNSET
    deadline: float | UnsetType = UNSET
    max_retries: int | UnsetType = UNSET
    backoff: float | UnsetType = UNSET
    max_concurrency: int | UnsetType = UNSET
    max_response_bytes: int | UnsetType = UNSET
    cache: _Text | UnsetType = UNSET


_Judge = _OptionMatch | _ExactMatch | _TokenF1 | _Regex | _Contains | _OptionExtraction | _LLM


class _JudgesFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    judges: Annotated[tuple[_Judge, ...], msgspec.Meta(min_length=1)]


def _llm(**options: Any) -> Judge:
    from kagreport.evaluation.judges._llm import LLMJudge

    return LLMJudge(**options)


_KINDS: dict[type[_Table], Callable[..., Judge]] = {
    _OptionMatch: OptionMatch,
    _ExactMatch: ExactMatch,
    _TokenF1: TokenF1,
    _Regex: RegexMatch,
    _Contains: Contains,
    _OptionExtraction: OptionExtraction,
    _LLM: _llm,
}
_FILE_KEYS = ("prompt_file", "system_prompt_file")


def _read(path: str) -> tuple[dict[str, Any], _JudgesFile]:
    """The judges file parsed, and decoded into its shape (a key written in place of
    ``api_key_env`` refused first: it names a secret, not a mistyped option)."""
    data = read_toml(path, "the judges file", ConfigError)
    entries = data.get("judges")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and "api_key" in entry:
            raise ConfigError(
                f"{path}: `judges[{index}].api_key`: do not write API keys in the judges "
                "file; use api_key_env",
                path=path,
            )
    return data, decode_config(data, _JudgesFile, path, ConfigError, path=path)


def load_judges(path: str | os.PathLike[str]) -> list[Judge]:
    """Build the judges described by a TOML file.

    The file lists ``[[judges]]`` tables, each with a ``kind`` (``option_match``,
    ``exact_match``, ``token_f1``, ``regex``, ``contains``, ``option_extraction``, ``llm``)
    and the judge's options, passed to its constructor (all keys but ``kind``,
    ``api_key_env``, ``prompt_file`` and ``system_prompt_file``)::

        [[judges]]
        kind = "option_extraction"
        [[judges]]
        kind = "llm"                        # needs name, model, base_url and a prompt
        name = "gpt-judge"
        model = "gpt-4o-mini"
        base_url = "https://api.openai.com/v1"
        api_key_env = "OPENAI_API_KEY"      # the variable holding the key (never the key)
        prompt_file = "judge.jinja"         # or prompt = "..."; relative to this file
        scale = "1-5"

    A key goes only where the file sends it: the variable ``api_key_env`` names is sent
    to that judge's ``base_url``; without it, ``OPENAI_API_KEY`` is sent only to
    OpenAI's own API and any other server gets a placeholder (see
    :class:`~kagreport.evaluation.judges.LLMJudge`'s ``api_key``).

    Raises
    ------
    ConfigError
        One line naming the file and the key path (``judges[1].timeout``): the file cannot
        be read or parsed, a kind or key is unknown, a value has the wrong type or is out
        of the judge's domain, a prompt file cannot be read, or ``api_key_env`` names an
        unset variable.
    """
    name = os.fspath(path)
    _, parsed = _read(name)
    folder = Path(name).resolve().parent
    judges = []
    for index, table in enumerate(parsed.judges):
        where = f"{name}: `judges[{index}]`"
        options = {
            key: value
            for key, value in msgspec.structs.asdict(table).items()
            if key not in (*_FILE_KEYS, "api_key_env") and value is not UNSET
        }
        for key in _FILE_KEYS:
            file = getattr(table, key, UNSET)
            inline = key.removesuffix("_file")
            if file is UNSET:
                if key == "prompt_file" and isinstance(table, _LLM) and table.prompt is UNSET:
                    raise ConfigError(f"{where}: `prompt` or `prompt_file` is required", path=name)
                continue
            if getattr(table, inline) is not UNSET:
                raise ConfigError(
                    f"{where}: `{inline}` and `{key}` both given; keep one", path=name
                )
            target = folder / file
            try:
                options[inline] = decode_utf8(read_regular_file(target), target, f"{where}: {key}")
            except NotUTF8Error as exc:
                raise ConfigError(exc.message, path=name) from None
            except OSError as exc:
                raise ConfigError(
                    f"{where}: cannot read {key} {target}: {exc.strerror or exc}", path=name
                ) from None
        variable = getattr(table, "api_key_env", UNSET)
        if variable is not UNSET:
            if variable not in os.environ:
                raise ConfigError(
                    f"{where}: the environment variable {variable} (api_key_env) is not set",
                    path=name,
                )
            options["api_key"] = os.environ[variable]
        try:
            judges.append(_KINDS[type(table)](**options))
        except (TypeError, ValueError, OverflowError) as exc:
            kind = table.__struct_config__.tag
            raise ConfigError(f"{where} ({kind}): {exc}", path=name) from None
    return judges


def prompt_files(path: str | os.PathLike[str]) -> list[str]:
    """The prompt files a judges file names (``prompt_file``, ``system_prompt_file``),
    resolved as ``load_judges`` does; ``[]`` for a file it would refuse.
    """
    name = os.fspath(path)
    try:
        _, parsed = _read(name)
    except ConfigError:
        return []  # load_judges says what is wrong
    folder = Path(name).resolve().parent
    return [
        str(folder / file)
        for table in parsed.judges
        for key in _FILE_KEYS
        if (file := getattr(table, key, UNSET)) is not UNSET
    ]


def load_items_jsonl(path: str | os.PathLike[str]) -> list[AnswerItem]:
    """Read answer items, one JSON object per line (:class:`AnswerItem` field names).

    Raises
    ------
    ConfigError
        If the file cannot be read, or a line is not a valid item (the message
        names the file and line).
    """
    name = os.fspath(path)
    items = []
    try:
        # Decoded whole, for the offset of a bad byte.
        text = decode_utf8(read_regular_file(name), name, "the items file", bom=True)
        for number, line in enumerate(io.StringIO(text, newline=None), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                unknown = sorted(set(data) - _ITEM_KEYS)
                if unknown:
                    known = ", ".join(sorted(_ITEM_KEYS))
                    keys = "key" if len(unknown) == 1 else "keys"
                    raise ValueError(f"unknown {keys} {unknown} (known: {known})")
                items.append(AnswerItem.from_dict(data))
            except KeyError as exc:
                raise ConfigError(f"{name}:{number}: missing {exc.args[0]!r}", path=name) from None
            except (ValueError, TypeError, AttributeError, RecursionError) as exc:
                raise ConfigError(f"{name}:{number}: {exc}", path=name) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the items file {name}: {exc.strerror or exc}", path=name
        ) from None
    except NotUTF8Error as exc:
        raise ConfigError(exc.message, path=name) from None
    if not items:
        raise ConfigError(f"the items file {name} holds no items", path=name)
    return items

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
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

__all__ = ["ConfigError", "load_items_jsonl", "load_judges", "prompt_files"]


_ITEM_KEYS = {
    "identifier", "question", "answer", "reference", "scores", "verdicts", "latency",
    "error", "metadata",
}  # fmt: skip


def _llm(**options: Any) -> Judge:
    from kagreport.evaluation.judges._llm import LLMJudge

    return LLMJudge(**options)


_KINDS: dict[str, Callable[..., Judge]] = {
    "option_match": OptionMatch,
    "exact_match": ExactMatch,
    "token_f1": TokenF1,
    "regex": RegexMatch,
    "contains": Contains,
    "option_extraction": OptionExtraction,
    "llm": _llm,
}


# Over 80 lines only with its docstring (the judges file's whole format is documented here).
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
        If the file cannot be read or parsed, a kind is unknown, a key is not
        accepted by the judge, or a referenced prompt file is missing; the message
        names the file and the judge.
    """
    name = os.fspath(path)
    try:
        data = tomllib.loads(read_regular_file(name).decode())
    except OSError as exc:
        raise ConfigError(
            f"cannot read the judges file {name}: {exc.strerror or exc}", path=name
        ) from None
    except UnicodeDecodeError as exc:  # tomllib decodes the whole file: the offset is the file's
        message = NotUTF8Error("the judges file", name, exc.start).message
        raise ConfigError(message, path=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the judges file {name} is not valid TOML: {exc}", path=name) from None
    entries = data.get("judges")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"the judges file {name} has no [[judges]] tables", path=name)
    folder = Path(name).resolve().parent
    judges = []
    for index, entry in enumerate(entries, start=1):
        where = f"{name}: judge {index}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: each judge must be a [[judges]] table", path=name)
        options = dict(entry)
        kind = options.pop("kind", None)
        if not isinstance(kind, str) or kind not in _KINDS:
            known = ", ".join(sorted(_KINDS))
            raise ConfigError(f"{where}: unknown kind {kind!r} (known: {known})", path=name)
        for key in ("prompt_file", "system_prompt_file"):
            if key in options:
                target = folder / str(options.pop(key))
                try:
                    options[key.removesuffix("_file")] = decode_utf8(
                        read_regular_file(target), target, f"{where}: {key}"
                    )
                except NotUTF8Error as exc:
                    raise ConfigError(exc.message, path=name) from None
                except OSError as exc:
                    raise ConfigError(
                        f"{where}: cannot read {key} {target}: {exc.strerror or exc}", path=name
                    ) from None
        if "api_key_env" in options:
            variable = str(options.pop("api_key_env"))
            if variable not in os.environ:
                raise ConfigError(
                    f"{where}: the environment variable {variable} (api_key_env) is not set",
                    path=name,
                )
            options["api_key"] = os.environ[variable]
        if "api_key" in entry:
            raise ConfigError(
                f"{where}: do not write API keys in the judges file; use api_key_env", path=name
            )
        if "criteria" in options and isinstance(options["criteria"], list):
            options["criteria"] = tuple(options["criteria"])
        if "name" in options and (not isinstance(options["name"], str) or not options["name"]):
            raise ConfigError(f"{where}: name must be a non-empty string", path=name)
        try:
            judges.append(_KINDS[kind](**options))
        except (TypeError, ValueError, OverflowError) as exc:
            raise ConfigError(f"{where} ({kind}): {exc}", path=name) from None
    return judges


def prompt_files(path: str | os.PathLike[str]) -> list[str]:
    """The prompt files a judges file names (``prompt_file``, ``system_prompt_file``),
    resolved as :func:`load_judges` does; ``[]`` for a file it would refuse.
    """
    name = os.fspath(path)
    try:
        data = tomllib.loads(read_regular_file(name).decode())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []  # load_judges says what is wrong
    entries = data.get("judges")
    folder = Path(name).resolve().parent
    return [
        str(folder / str(entry[key]))
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, dict)
        for key in ("prompt_file", "system_prompt_file")
        if key in entry
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
                    raise ValueError(f"unknown key(s) {unknown} (known: {known})")
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

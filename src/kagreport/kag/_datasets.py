"""The datasets file: the ground truth of a kag benchmark.

Format (kag ``src/subcommand/benchmark/dataset.rs``)::

    { <dataset>: { <question>: { "input": str, "output": null | MCQ } } }
    MCQ = {"type": "MCQ", "options": {<key>: <text>, ...}, "answer": <key> | null}

An absent or null ``output`` is a free-form question.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from kagreport._errors import DatasetsError, NotUTF8Error, ResultTreeError, decode_utf8
from kagreport._io import read_regular_file
from kagreport.kag._datasets_reads import (
    LARGE_NUMBER,
    Pairs,
    check_serde_reads,
    plain_entry,
    read_pairs,
)
from kagreport.kag._jsonscan import (
    ANY,
    RECURSION_LIMIT,
    SURROGATE_ESCAPE,
    JSONScanError,
    MapOf,
    strip_ignored,
)
from kagreport.kag._names import is_component_name
from kagreport.kag._records import BOM_MESSAGE, datasets_structure, starts_with_bom
from kagreport.kag._tree import open_tree

__all__ = ["MCQ", "Datasets", "Question", "load_datasets", "parse_datasets"]


class MCQ(msgspec.Struct, frozen=True, gc=False):
    """A multiple-choice question's expected output (``{"type": "MCQ", ...}``).

    Attributes
    ----------
    type : "MCQ"
        The only output type kag knows.
    options : dict of str to str
        Option key to option text, in file order.
    answer : str or None
        The key of the right option; ``None`` when the file gives none
        (such a question cannot be scored).
    """

    type: Literal["MCQ"]
    options: dict[str, str]
    answer: str | None = None


class Question(msgspec.Struct, frozen=True, gc=False):
    """One entry of the datasets file.

    Attributes
    ----------
    input : str
        The question text given to the model.
    output : MCQ or None
        The expected output; ``None`` for a free-form question.
    """

    input: str
    output: MCQ | None = None

    @property
    def answer(self) -> str | None:
        """The right option key when this is a scorable MCQ, else ``None``."""
        return None if self.output is None else self.output.answer


_decoder = msgspec.json.Decoder(dict[str, dict[str, Question]])


@dataclass(frozen=True, slots=True)
class Datasets:
    """The parsed datasets file: dataset name -> question name -> :class:`Question`.

    Attributes
    ----------
    questions : Mapping[str, Mapping[str, Question]]
        The entries, in file order.
    path : str or None
        The file they were read from, if any.
    """

    questions: Mapping[str, Mapping[str, Question]]
    path: str | None = None

    def get(self, dataset: str, question: str) -> Question | None:
        """Return the entry of ``dataset``/``question``, or ``None`` if unknown."""
        entries = self.questions.get(dataset)
        return None if entries is None else entries.get(question)

    def __iter__(self) -> Iterator[tuple[str, str, Question]]:
        for dataset, entries in self.questions.items():
            for question, entry in entries.items():
                yield dataset, question, entry

    def __len__(self) -> int:
        return sum(len(entries) for entries in self.questions.values())

    @property
    def scorable_questions(self) -> int:
        """Number of MCQ entries with an answer, over all datasets (kag's count)."""
        return sum(
            [
                1
                for entries in self.questions.values()
                for entry in entries.values()
                if entry.output is not None and entry.output.answer is not None
            ]
        )


def load_datasets(
    path: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
) -> Datasets:
    """Read and validate a kag datasets file.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON datasets file: a local path, or an fsspec URL (``s3://bucket/d.json``).
    storage_options : mapping, optional
        fsspec options for a URL (see ``open_tree``).

    Returns
    -------
    Datasets

    Raises
    ------
    DatasetsError
        If the file cannot be read (a folder, FIFO, socket or device is refused without
        waiting for a writer), is not UTF-8 (the message gives the offset of the
        first bad byte) or not JSON, or breaks the format: an
        invalid dataset or question name, a missing ``input``, an ``output``
        whose ``type`` is not ``"MCQ"``, options that are not strings, a UTF-8
        BOM, or an entry or output field given twice (serde's ``duplicate field``).
    """
    name = os.fspath(path)
    try:
        tree = open_tree(name, storage_options)
        data = read_regular_file(tree.root) if not tree.remote else tree.read(tree.root)
    except ResultTreeError as exc:  # the location itself: its filesystem, credentials
        raise DatasetsError(exc.message, path=name) from None
    except OSError as exc:
        raise DatasetsError(
            f"cannot read the datasets file {name}: {exc.strerror or exc}", path=name
        ) from None
    return parse_datasets(data, path=name)


def parse_datasets(data: bytes | str, *, path: str | None = None) -> Datasets:
    """Validate the JSON text of a datasets file; see :func:`load_datasets`."""
    where = path if path is not None else "<datasets>"
    text = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    stripped = False
    # The compiled pass, where it reads the file; else the same in bytes operations.
    structure = datasets_structure(text) if datasets_structure is not None else None
    if structure is None:
        outside = _outside_strings(text)
        too_deep, fields_sure, names_sure = _nests(outside, RECURSION_LIMIT), False, None
        numbers_sure = LARGE_NUMBER.search(_outside_strings(text, _NOT_NUMBER)) is None
    else:
        outside = b""
        depth, fields_sure, names_sure, numbers_sure = structure
        too_deep = depth >= RECURSION_LIMIT
    if too_deep:
        try:
            data, stripped = strip_ignored(text, _SCHEMA), True
        except JSONScanError as exc:
            if "nested too deeply" in str(exc):
                raise DatasetsError(
                    f"the datasets file {where} is not valid: {exc}", path=path
                ) from None
            # other faults: msgspec's message below
    original = data
    arrays = False
    try:
        questions, data = _decode(data, text, retry=not stripped)
    except RecursionError:
        raise DatasetsError(
            f"the datasets file {where} is not valid: JSON nested too deeply", path=path
        ) from None
    except msgspec.ValidationError as exc:
        # serde reads a struct written as an array too: every copy of every entry converted.
        questions = _from_arrays(data, text, where, path)
        if questions is None:
            # msgspec checks types as it decodes: a wrong type before a bad byte is found
            # first, but a file that is not UTF-8 is that error.
            _refuse_if_not_utf8(data, where, path)
            raise DatasetsError(
                f"invalid datasets file {where}: {_locate(data) or exc}", path=path
            ) from None
        arrays = True
    except msgspec.DecodeError as exc:
        if starts_with_bom(data):
            raise DatasetsError(f"the datasets file {where} {BOM_MESSAGE}", path=path) from None
        _refuse_if_not_utf8(data, where, path)  # msgspec does not say where a bad byte is
        raise DatasetsError(
            f"the datasets file {where} is not valid JSON: {exc}", path=path
        ) from None
    if names_sure is None:  # the Python pass: the names msgspec kept, and no key given twice
        keys = outside.count(b":") if data is original else None
        names_sure = fields_sure = (
            not arrays and _kept_names_valid(questions) and _no_repeated_key(data, keys)
        )
    if not (names_sure and numbers_sure):
        check_serde_reads(data, where, path, names=not names_sure, numbers=not numbers_sure)
    if fields_sure and data is original and not arrays:
        return Datasets(questions, path=path)  # no field given twice (the compiled pass)
    # Every key is followed by one colon outside strings (unless the text was rewritten).
    keys = outside.count(b":") if data is original and structure is None else None
    repeated = _repeated_field(data, keys)
    if repeated is not None:
        raise DatasetsError(f"invalid datasets file {where}: {repeated}", path=path)
    return Datasets(questions, path=path)


def _refuse_if_not_utf8(data: bytes | str, where: str, path: str | None) -> None:
    """Raise DatasetsError naming the first byte of ``data`` that is not UTF-8, if any."""
    if isinstance(data, bytes):
        try:
            decode_utf8(data, where, "the datasets file")
        except NotUTF8Error as bad:
            raise DatasetsError(bad.message, path=path) from None


def _decode(data: bytes | str, text: bytes, *, retry: bool) -> tuple[Any, bytes | str]:
    """Decode the questions, and the text decoded (``text`` stripped on a retry)."""
    try:
        return _decoder.decode(data), data
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError as exc:
        # A lone surrogate kag may ignore (see SURROGATE_ESCAPE): decode again without
        # the ignored values; a fault elsewhere, or in a typed string, fails again.
        if not retry or not SURROGATE_ESCAPE.search(text):
            raise
        try:
            stripped = strip_ignored(text, _SCHEMA)
        except JSONScanError:
            raise exc from None
        return _decoder.decode(stripped), stripped


# serde_json's recursion limit counts the containers a type reads (kag src/subcommand/
# benchmark/dataset.rs:20-68): the two maps, the entry, and all of `output`, which serde
# buffers whole (an internally tagged enum, `tag = "type"`), unknown keys included. An
# unknown field of an entry is skipped uncounted, at any depth.
_SCHEMA = MapOf(MapOf({"input": ANY, "output": ANY}))
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}":')))
#: Every byte but what numbers, quotes and separators are written with (LARGE_NUMBER's).
_NOT_NUMBER = bytes(sorted(set(range(256)) - set(b'[]{}":,0123456789eE+-.')))


def _outside_strings(text: bytes, dropped: bytes | None = None) -> bytes:
    """The brackets and colons of ``text`` that are not in a string (exact for valid JSON);
    with ``dropped``, the bytes it does not drop instead (quotes must not be dropped).

    Escaped backslashes, then escaped quotes, are dropped (left to right, as a JSON
    parser reads them), every byte but quotes, brackets and colons is dropped, then what
    is between quotes. Two adjacent quotes are dropped first (an empty string, or the
    end of one and the start of the next: nothing outside lies between them), which
    leaves the same pieces outside at a fraction of the cost.
    """
    if text.find(b"\\") >= 0:  # memchr: most files have no escape at all
        text = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = text.translate(None, _NOT_STRUCTURE if dropped is None else dropped)
    kept = kept.replace(b'""', b"")
    return b"".join(kept.split(b'"')[::2])


def _nests(outside: bytes, levels: int) -> bool:
    """Whether the structure ``outside`` (:func:`_outside_strings`) nests ``levels``
    containers or more; cheap."""
    brackets = outside.replace(b":", b"")
    for _ in range(levels - 1):  # each pass removes the innermost level
        if not brackets:
            return False
        brackets = _INNERMOST.sub(b"", brackets)
    return bool(brackets)


_ENTRY_FIELDS = frozenset({"input", "output"})
_MCQ_FIELDS = frozenset({"type", "options", "answer"})


def _first_repeat(pairs: Any, fields: frozenset[str]) -> tuple[str | None, dict[str, Any]]:
    last: dict[str, Any] = {}
    if not isinstance(pairs, Pairs):
        return None, last
    for key, value in pairs:
        if key in fields:
            if key in last:
                return key, last
            last[key] = value
    return None, last


class _CountedMCQ(msgspec.Struct, gc=False):
    type: str
    options: dict[str, str]
    answer: str | msgspec.UnsetType | None = msgspec.UNSET


class _CountedEntry(msgspec.Struct, gc=False):
    input: str
    output: _CountedMCQ | msgspec.UnsetType | None = msgspec.UNSET


_counting_decoder = msgspec.json.Decoder(dict[str, dict[str, _CountedEntry]])


def _no_repeated_key(data: bytes | str, keys_in_text: int | None = None) -> bool:
    """Quick and exact when it says True: every key is followed by one colon, so a file
    whose colons outside strings (``keys_in_text``, when the caller has counted them)
    number exactly its keys as decoded (maps deduplicated, absent fields told from null
    ones) has no key given twice and no unknown one. Without ``keys_in_text``: its colons
    number its keys plus the colons of its strings (dataset and question names hold no
    colon; no colon may be spelt ``\\u003a``). Any other file is checked slowly."""
    text = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if keys_in_text is None and text.find(b"\\u003") >= 0:
        return False
    count_colons = keys_in_text is None
    try:
        tree = _counting_decoder.decode(text)
    except msgspec.ValidationError:  # an entry or output written as an array: checked slowly
        return False
    keys = len(tree)
    colons = 0
    unset = msgspec.UNSET
    for entries in tree.values():
        keys += len(entries)
        for entry in entries.values():
            keys += 1
            if count_colons:
                colons += entry.input.count(":")
            output = entry.output
            if output is unset:
                continue
            keys += 1
            if output is None:
                continue
            options = output.options
            keys += 2 + len(options)
            if count_colons:
                for key, text_ in options.items():
                    colons += key.count(":") + text_.count(":")
            answer = output.answer
            if answer is not unset:
                keys += 1
                if count_colons and answer is not None:
                    colons += answer.count(":")
    if keys_in_text is not None:
        return keys_in_text == keys
    return text.count(b":") == keys + colons


def _repeated_field(data: bytes | str, keys_in_text: int | None = None) -> str | None:
    """Where kag's serde would reject a field given twice, if anywhere (msgspec keeps the last).

    Entries and MCQ outputs are serde structs (``type`` is the internally tagged
    enum's tag): a field given twice is an error, in every entry serde reads, one a
    later key replaces included. The dataset and question maps and the options keep
    the last value, as a ``BTreeMap`` does; unknown fields are ignored. Run once per
    datasets file, after msgspec accepted it (about as long as msgspec took again).
    """
    if _no_repeated_key(data, keys_in_text):
        return None
    try:
        tree = read_pairs(data)
    except (ValueError, RecursionError):  # msgspec parsed it: leave it to msgspec
        return None
    for dataset, questions in tree if isinstance(tree, Pairs) else ():
        for question, entry in questions if isinstance(questions, Pairs) else ():
            if isinstance(entry, Pairs):
                repeated, fields = _first_repeat(entry, _ENTRY_FIELDS)
                output = fields.get("output")
            else:  # [input, output], or no entry (the typed decode said so)
                repeated = None
                output = entry[1] if isinstance(entry, list) and len(entry) > 1 else None
            if repeated is None:
                repeated = _first_repeat(output, _MCQ_FIELDS)[0]
            if repeated is not None:
                return f"{dataset}/{question}: duplicate field `{repeated}`"
    return None


_JSON_TYPES = {
    type(None): "null",
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


def _from_arrays(data: bytes | str, text: bytes, where: str, path: str | None) -> Any:
    """The questions of a file whose entries or MCQ outputs are written as arrays, which
    kag's serde reads as the structs (:func:`plain_entry`), every copy of a repeated name
    converted as serde converts each; None when no array is why the typed decode failed,
    or anything else fails (the typed decode's message then says what).

    Raises
    ------
    DatasetsError
        If an entry or output array is not what serde reads as one.
    """
    if SURROGATE_ESCAPE.search(text):  # one a value kag skips may hold: those go first
        try:
            text = strip_ignored(text, _SCHEMA)
        except JSONScanError:
            return None
        if SURROGATE_ESCAPE.search(text):
            return None
    try:
        text.decode("utf-8")  # a byte that is not UTF-8: the typed decode's error stands
        document = read_pairs(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, Pairs):
        return None
    questions: dict[str, dict[str, Question]] = {}
    arrays = False
    for dataset, entries in document:
        if not isinstance(entries, Pairs):
            return None
        kept: dict[str, Question] = {}
        for question, raw in entries:
            arrays = arrays or _holds_array(raw)
            entry = plain_entry(raw)
            if isinstance(entry, str):
                raise DatasetsError(
                    f"invalid datasets file {where}: {dataset}/{question}: {entry}", path=path
                )
            try:
                kept[question] = msgspec.convert(entry, Question)
            except msgspec.ValidationError:
                return None
        questions[dataset] = kept  # a map keeps the last copy
    return questions if arrays else None


def _holds_array(entry: Any) -> bool:
    """Whether an entry of the hooked walk is written as an array, or its output is."""
    if isinstance(entry, list) and not isinstance(entry, Pairs):
        return True
    if isinstance(entry, Pairs):
        return any(
            field == "output" and isinstance(value, list) and not isinstance(value, Pairs)
            for field, value in entry
        )
    return False


def _kept_names_valid(questions: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether every dataset and question name msgspec kept is a component name."""
    return all(
        is_component_name(dataset) and all(is_component_name(q) for q in entries)
        for dataset, entries in questions.items()
    )


def _locate(data: bytes | str) -> str | None:
    """Name the dataset and question of the first invalid entry (msgspec only says ``$[...]``)."""
    try:
        tree: Any = msgspec.json.decode(data)
    except RecursionError:
        return "JSON nested too deeply"
    except msgspec.DecodeError:  # a fault after the invalid entry: msgspec's message
        return None
    if not isinstance(tree, dict):
        return None
    for dataset, entries in tree.items():
        if not isinstance(entries, dict):
            kind = _JSON_TYPES.get(type(entries), type(entries).__name__)
            return f"dataset {dataset!r} must be an object of questions, not {kind}"
        for question, entry in entries.items():
            try:
                msgspec.convert(entry, Question)
            except msgspec.ValidationError as exc:
                return f"{dataset}/{question}: {exc}"
    return None

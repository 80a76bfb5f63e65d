"""Lone surrogate escapes in result and datasets files, as kag's serde_json reads them.

serde_json skips the string of a field kag's types do not have without
checking its ``\\u`` escapes (``src/read.rs``, ``ignore_escape``: "we don't
care if the codepoint is valid"), so kag grades such a file; a lone surrogate
in a typed string (``result``) is an error (``lone leading surrogate``). Both
seen with the real kag (commit 12389ee): the file with ``"x": "\\ud800"``
is graded, the one with ``"result": "\\ud800"`` is skipped. In the datasets file
an unknown field of a question is skipped the same way (kag grades the tree), while
``output`` is buffered whole (an internally tagged enum), so a lone surrogate
anywhere in it, as in ``input``, makes kag exit 1 ("unexpected end of hex escape").
"""

from __future__ import annotations

import pytest

from kagreport import DatasetsError
from kagreport.kag._datasets import parse_datasets
from kagreport.kag._records import decode_result

_STATS = (
    '"stats": {"prompt": "p", "config": {"augmented_generation": null, "provider": "x", '
    '"model": "m", "temperature": 0.0, "tokens": null}, "time": {"secs": 1, "nanos": 5}}'
)


# msgspec words its error differently for each (at the end of the input, before a
# space, before another escape): the retry must not depend on the message.
_LONE = ["a\\ud800b", "\\ud800", "\\ud800 q", "\\udc00", "\\ud800\\u0041", "x\\uDBFF\\n"]


@pytest.mark.parametrize("lone", _LONE)
@pytest.mark.parametrize("where", ["ok", "stats", "config"])
def test_lone_surrogate_in_an_unknown_field_is_ignored(where: str, lone: str) -> None:
    unknown = f'"x": ["{lone}", {{"y": "{lone}"}}], '
    stats = _STATS
    if where == "stats":
        stats = stats.replace('"prompt"', unknown + '"prompt"')
    elif where == "config":
        stats = stats.replace('"provider"', unknown + '"provider"')
    head = unknown if where == "ok" else ""
    record = decode_result(f'{{"ok": {{{head}"result": "A", {stats}}}}}'.encode())
    assert record.result == "A"


def test_lone_surrogate_in_the_result_is_refused() -> None:
    with pytest.raises(ValueError, match="escape"):
        decode_result(f'{{"ok": {{"result": "\\ud800", {_STATS}}}}}'.encode())


_QUESTION = (
    '"input": "{input}", "output": {{"type": "MCQ", "options": {{"a": "one", "b": "two"}}, '
    '"answer": "a"{extra}}}'
)


def _datasets(question_extra: str = "", input: str = "q", output_extra: str = "") -> bytes:
    body = _QUESTION.format(input=input, extra=output_extra)
    return f'{{"geo": {{"q1": {{{question_extra}{body}}}}}}}'.encode()


@pytest.mark.parametrize("lone", _LONE)
def test_datasets_lone_surrogate_in_an_unknown_question_field_is_ignored(lone: str) -> None:
    datasets = parse_datasets(_datasets(question_extra=f'"x": ["{lone}"], '))
    question = datasets.get("geo", "q1")
    assert question is not None
    assert question.answer == "a"


@pytest.mark.parametrize("lone", _LONE)
@pytest.mark.parametrize("where", ["input", "output"])
def test_datasets_lone_surrogate_where_kag_reads_is_refused(where: str, lone: str) -> None:
    data = _datasets(input=lone) if where == "input" else _datasets(output_extra=f', "x": "{lone}"')
    with pytest.raises(DatasetsError, match="not valid JSON"):
        parse_datasets(data)

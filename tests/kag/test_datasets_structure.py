"""The cheap structure pass of the datasets file (issue #31): brackets and colons outside strings.

``_outside_strings`` drops every string with byte operations (escapes first, then quote
pairs); it is checked here against a plain character-by-character JSON scan written for the
test, on hand-made hostile texts and on random JSON documents. Its colon count decides that
a file has no repeated or unknown key (every key is followed by exactly one colon), so a
repeat must still be found where a colon is spelt ``\\u003a``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kagreport import DatasetsError
from kagreport.kag._datasets import _outside_strings, parse_datasets


def _reference(text: str) -> str:
    out = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[]{}:":
            out.append(char)
    return "".join(out)


HOSTILE = [
    r'{"a": "x"}',
    r'{"a\\": "\\"}',
    r'{"a\"b": "c\\\"d:{"}',
    r'{"": "", "": [""], "k": ["", "", "{", "}"]}',
    r'{"\u003a": "a\u003ab", "x": {"y": [1, {"z": ":"}]}}',
    r'["\\\\", "\\\\\"", "]", "[", {"\\": "\"\""}]',
    r'{"a":"b","c":"d","e":{"f":"g:h"}}',
]


@pytest.mark.parametrize("text", HOSTILE)
def test_outside_strings_matches_a_plain_scan(text: str) -> None:
    json.loads(text)  # each case is valid JSON
    assert _outside_strings(text.encode()).decode() == _reference(text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab:"\\{}[] \n\u00e9'),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='ab:"\\{}[]', max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_outside_strings_on_random_documents(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _outside_strings(text.encode()).decode() == _reference(text)


def test_a_repeated_field_is_found_when_a_colon_is_escaped() -> None:
    # serde refuses a struct field given twice; the escaped colon hides one raw colon.
    text = '{"ds": {"q1": {"input": "a\\u003ab", "input": "c", "output": null}}}'
    with pytest.raises(DatasetsError, match="duplicate field `input`"):
        parse_datasets(text.encode())


def test_escaped_colons_and_brackets_in_strings_are_not_structure() -> None:
    text = (
        '{"ds": {"q1": {"input": "a\\u003a {[\\"x\\": 1]}", "output": {"type": "MCQ", '
        '"options": {"a": "1: \\\\", "b": "{"}, "answer": "a"}}}}'
    )
    datasets = parse_datasets(text.encode())
    assert datasets.scorable_questions == 1
    question = datasets.get("ds", "q1")
    assert question is not None
    assert question.input == 'a: {["x": 1]}'

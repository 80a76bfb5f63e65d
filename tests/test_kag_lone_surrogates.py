"""Lone surrogate escapes in result files, as kag's serde_json reads them.

serde_json skips the string of a field kag's types do not have without
checking its ``\\u`` escapes (``src/read.rs``, ``ignore_escape``: "we don't
care if the codepoint is valid"), so kag grades such a file; a lone surrogate
in a typed string (``result``) is an error (``lone leading surrogate``). Both
seen with the real kag (commit 12389ee): the file with ``"x": "\\ud800"``
is graded, the one with ``"result": "\\ud800"`` is skipped.
"""

from __future__ import annotations

import pytest

from kagreport.kag._records import decode_result

_STATS = (
    '"stats": {"prompt": "p", "config": {"augmented_generation": null, "provider": "x", '
    '"model": "m", "temperature": 0.0, "tokens": null}, "time": {"secs": 1, "nanos": 5}}'
)


@pytest.mark.parametrize("where", ["ok", "stats", "config"])
def test_lone_surrogate_in_an_unknown_field_is_ignored(where: str) -> None:
    unknown = '"x": "a\\ud800b", '
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

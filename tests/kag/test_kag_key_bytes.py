"""A result file's keys that are not UTF-8: refused where kag's serde reads them.

serde_json reads each key of a struct as a str (checked UTF-8), and skips an ignored
value's keys unchecked; msgspec skips an unknown key's bytes either way. The verdicts were
observed with the real kag (built by shared/kag-real from commit 12389ee):
``kag stats -r results find --format json .`` over each file.
"""

from __future__ import annotations

import pytest

from kagreport.kag._records import decode_python, decode_result

_CONFIG = (
    b'"config":{"augmented_generation":null,"provider":"x","model":"m","temperature":0.0,'
    b'"tokens":null},"time":{"secs":1,"nanos":0}'
)


def _record(ok_key: bytes = b"", stats_key: bytes = b"", ignored_key: bytes = b"") -> bytes:
    ok = b'"' + ok_key + b'":1,' if ok_key else b""
    stats = b'"' + stats_key + b'":1,' if stats_key else b""
    ignored = b'"x":{"' + ignored_key + b'":1},' if ignored_key else b""
    return (
        b'{"ok":{' + ok + b'"result":"a","stats":{' + stats + ignored + b'"prompt":"p",'
        b'"retrieval":null,' + _CONFIG + b"}}}"
    )


@pytest.mark.parametrize(
    ("data", "kag_reads"),
    [
        (_record(ok_key=b"z"), True),
        (_record(ok_key=b"z\xc3"), False),  # a truncated sequence
        (_record(ok_key=b"z\xc0\xaf"), False),  # an overlong one
        (_record(stats_key=b"\xff"), False),
        (_record(stats_key=b"\xc3\xa9"), True),  # é
        (_record(ignored_key=b"\xff"), True),  # inside an unknown field's value: skipped
    ],
)
def test_a_key_that_is_not_utf8_is_refused_where_kag_reads_it(data: bytes, kag_reads: bool) -> None:
    for decode in (decode_result, decode_python):
        try:
            decode(data)
            read = True
        except ValueError:
            read = False
        assert read == kag_reads, decode

"""The LLM judge against endpoints that are hostile or broken (issue #27, items 1-3).

A real HTTP server on 127.0.0.1 (tests/chat_stub.py, with the replies of tests/hostile.py)
sends bodies of gigabytes, endless chunked bodies, gzip bombs, one byte a second, JSON
nested 200,000 levels deep, malformed completions and nothing but 429s. The judge reads at
most ``max_response_bytes`` (on the wire and inflated), an attempt takes at most ``timeout``
seconds in all and an item at most ``deadline``; every failure names the judge, the
endpoint and the cause, and ``kagreport evaluate`` exits 1 when a judge failed on every
item, with the report and the cache written.

The commands run as processes of their own, with their peak resident memory measured
(``ru_maxrss``) and their wall time bounded: before the fix, a 2 GiB body took the command
to 6-8 GB, an endless body grew without end (the memory guard of tests/hostile.py kills it
at 1.5 GiB) and a server dripping a byte a second held it until the server gave up (60 s).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from chat_stub import ChatStub, Reply, ok, status
from conftest import run_cli
from hostile import MiB, deep, drip, endless, gzip_bomb, huge, run_measured
from kagreport.evaluation import AnswerEvaluation, AnswerItem, evaluate_answers
from kagreport.evaluation.judges import JudgeFailure, LLMJudge, Usage
from processes import BOUND

PROMPT = "[item {{ item.identifier }}] Q: {{ item.question }} A: {{ item.answer }}"

#: The default bound on a response body: 4 MiB = 4 * 1024 * 1024 bytes.
DEFAULT_LIMIT = 4_194_304

#: Peak resident memory allowed to the command (issue #27): a Python process with the
#: openai package and NumPy loaded takes about 100 MB.
PEAK = 300 * 10**6


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as server:
        yield server


def make_judge(stub: ChatStub, **settings: Any) -> LLMJudge:
    values: dict[str, Any] = {"model": "m", "base_url": stub.url, "prompt": PROMPT,
                              "max_retries": 0, "timeout": 5.0}  # fmt: skip
    return LLMJudge(settings.pop("name", "j"), **(values | settings))


def item(identifier: str = "q1") -> AnswerItem:
    return AnswerItem(identifier, "Capital?", "Paris", "Paris")


def fails(judge: LLMJudge, identifier: str = "q1") -> JudgeFailure:
    with pytest.raises(JudgeFailure) as caught:
        judge.judge(item(identifier))
    return caught.value


def names_judge_and_endpoint(failure: JudgeFailure, stub: ChatStub) -> None:
    text = str(failure)
    assert text.startswith("judge 'j': "), text
    assert stub.url in text, text
    assert "\n" not in text


# -- 1: the body is bounded, on the wire and inflated ------------------------------------


def test_a_declared_body_over_the_limit_fails_without_being_read(stub: ChatStub) -> None:
    # 64 MiB here (the command meets 2 GiB below, in a process of its own).
    stub.default = huge(64 * MiB)
    started = time.monotonic()
    failure = fails(make_judge(stub))
    assert time.monotonic() - started < 10
    names_judge_and_endpoint(failure, stub)
    assert "over the limit of 4,194,304 bytes (max_response_bytes)" in str(failure)
    assert "Content-Length 67,108,864" in str(failure)
    assert failure.usage == Usage()  # not a model response


@pytest.mark.parametrize("limit", [64 * 1024, 1 * MiB])
def test_the_limit_is_exact_on_an_undeclared_body(stub: ChatStub, limit: int) -> None:
    # A chunked completion of exactly `limit` bytes is read; one byte more fails. The body
    # is built here, its length counted by len().
    def completion(size: int) -> bytes:
        head = b'{"choices": [{"message": {"content": "Verdict: yes'
        tail = b'"}, "finish_reason": "stop"}]}'
        return head + b" " * (size - len(head) - len(tail)) + tail

    def chunked(body: bytes) -> Reply:
        def write(stream: Any, stopping: Any) -> None:
            stream.write(
                b"HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            for start in range(0, len(body), 1000):
                part = body[start : start + 1000]
                stream.write(b"%x\r\n" % len(part) + part + b"\r\n")
            stream.write(b"0\r\n\r\n")

        return Reply(raw=write)

    judge = make_judge(stub, max_response_bytes=limit)
    stub.script("q1", chunked(completion(limit)))
    assert len(completion(limit)) == limit
    assert judge.judge(item("q1")).scores == {"score": 1.0}
    stub.script("q2", chunked(completion(limit + 1)))
    failure = fails(judge, "q2")
    names_judge_and_endpoint(failure, stub)
    assert f"over the limit of {limit:,} bytes (max_response_bytes)" in str(failure)


def test_an_endless_body_under_a_lying_content_length_is_cut(stub: ChatStub) -> None:
    # Chunked framing wins over the Content-Length (RFC 9112 6.3): "100 bytes" is a lie.
    stub.default = endless(content_length=100)
    started = time.monotonic()
    failure = fails(make_judge(stub, max_response_bytes=MiB))
    assert time.monotonic() - started < 10
    names_judge_and_endpoint(failure, stub)
    assert "over the limit of 1,048,576 bytes (max_response_bytes)" in str(failure)


@pytest.mark.parametrize("layers", [1, 2])
def test_a_gzip_bomb_is_cut_as_it_inflates(stub: ChatStub, layers: int) -> None:
    # 64 MiB of "a" in gzip is about 64 KB (twice gzipped, a few hundred bytes): far under
    # the limit on the wire, 16 times over it once inflated.
    stub.default = gzip_bomb(64 * MiB, layers=layers)
    failure = fails(make_judge(stub))
    names_judge_and_endpoint(failure, stub)
    assert f"over the limit of {DEFAULT_LIMIT:,} bytes (max_response_bytes)" in str(failure)
    assert "inflates" in str(failure)


def test_a_gzip_reply_under_the_limit_is_read(stub: ChatStub) -> None:
    body = json.dumps({"choices": [{"message": {"content": "Verdict: yes"}}]}).encode()
    packed = zlib.compress(body, wbits=16 + zlib.MAX_WBITS)
    stub.default = Reply(body=packed, headers={"Content-Encoding": "gzip"})
    assert make_judge(stub).judge(item()).scores == {"score": 1.0}
    wrapped = zlib.compress(body)  # "deflate": the zlib format (RFC 9110 8.4.1.2)
    stub.default = Reply(body=wrapped, headers={"Content-Encoding": "deflate"})
    assert make_judge(stub).judge(item("q2")).scores == {"score": 1.0}
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)  # raw deflate, as some servers send
    bare = compressor.compress(body) + compressor.flush()
    stub.default = Reply(body=bare, headers={"Content-Encoding": "deflate"})
    assert make_judge(stub).judge(item("q3")).scores == {"score": 1.0}


def test_raw_deflate_split_after_its_first_byte_is_read(stub: ChatStub) -> None:
    # Raw deflate (no zlib header) in chunks of 1 byte, then the rest: the first byte alone
    # is no proof that the zlib header is missing, and was taken as one ("incorrect header
    # check" on the second chunk).
    body = json.dumps({"choices": [{"message": {"content": "Verdict: yes"}}]}).encode()
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    bare = compressor.compress(body) + compressor.flush()

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        stream.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        for part in (bare[:1], bare[1:]):
            stream.write(b"%x\r\n%s\r\n" % (len(part), part))
            stream.flush()
            time.sleep(0.05)  # each chunk read on its own
        stream.write(b"0\r\n\r\n")

    stub.default = Reply(raw=write)
    assert make_judge(stub).judge(item()).scores == {"score": 1.0}


def test_a_broken_gzip_body_fails_clearly(stub: ChatStub) -> None:
    # A gzip header (RFC 1952: magic, method 8, no flags, time, flags, OS), then a deflate
    # block of type 3, which does not exist (RFC 1951 3.2.3).
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    stub.default = Reply(body=header + b"\xff" * 8, headers={"Content-Encoding": "gzip"})
    failure = fails(make_judge(stub))
    names_judge_and_endpoint(failure, stub)
    assert "cannot be read: its gzip encoding is broken" in str(failure)
    assert failure.cause.startswith("the response cannot be read: its gzip encoding is broken")


def test_an_encoding_that_was_not_asked_for_fails_clearly(stub: ChatStub) -> None:
    stub.default = Reply(body=b"\x28\xb5\x2f\xfd", headers={"Content-Encoding": "zstd"})
    failure = fails(make_judge(stub))
    names_judge_and_endpoint(failure, stub)
    assert "Content-Encoding 'zstd'" in str(failure)
    # What the judge asks for: only what it can bound.
    assert stub.log[0].headers["accept-encoding"] == "gzip, deflate"


def _declared(status_line: str, charset: str, body: bytes) -> Reply:
    """A reply whose ``Content-Type`` declares ``charset`` (written whole: the stub's own
    ``Content-Type`` would be a second one)."""

    def write(stream: BinaryIO, stopping: threading.Event) -> None:
        head = (
            f"HTTP/1.1 {status_line}\r\nContent-Type: application/json; charset={charset}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        stream.write(head.encode("ascii") + body)

    return Reply(raw=write)


@pytest.mark.parametrize("charset", ["utf-16", "utf-32"])
def test_a_body_is_read_as_utf8_whatever_charset_it_declares(stub: ChatStub, charset: str) -> None:
    # JSON is UTF-8 (RFC 8259 8.1). Python's utf-16 and utf-32 decoders want a byte order
    # mark and raised UnicodeError out of the judge, naming neither judge nor endpoint.
    completion = b'{"choices": [{"message": {"content": "Verdict: yes \xff"}}]}'
    stub.script("q1", _declared("200 OK", charset, completion))
    judgement = make_judge(stub).judge(item())
    assert judgement.scores == {"score": 1.0}
    assert judgement.verdict == "Verdict: yes \ufffd"
    error = b'{"error": {"message": "slow down"}}'
    stub.script("q2", _declared("429 Too Many Requests", charset, error))
    stub.script("q3", _declared("400 Bad Request", charset, error))
    for identifier, cause in (
        ("q2", "HTTP 429 (Too Many Requests)"),
        ("q3", "HTTP 400 (Bad Request)"),
    ):
        failure = fails(make_judge(stub), identifier)
        names_judge_and_endpoint(failure, stub)
        assert failure.cause == cause
        assert "slow down" in str(failure)


def test_a_body_over_the_limit_is_not_cached(stub: ChatStub, tmp_path: Path) -> None:
    stub.script("q1", huge(8 * MiB), ok())
    judge = make_judge(stub, cache=tmp_path / "c.sqlite")
    fails(judge)
    assert judge.judge(item()).scores == {"score": 1.0}  # asked again: nothing was kept
    assert stub.requests("q1") == 2
    judge.close()


# -- 2: an attempt takes at most `timeout` seconds, an item at most `deadline` ------------


@pytest.mark.slow
@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_a_dripping_server_fails_the_attempt_at_its_timeout(stub: ChatStub, headers: bool) -> None:
    # One byte every 0.2 s keeps each read well inside the timeout; the attempt is cut at
    # 1 s in all. Before the fix it went on until the server stopped (60 s).
    stub.default = drip(0.2, headers=headers)
    started = time.monotonic()
    failure = fails(make_judge(stub, timeout=1.0))
    took = time.monotonic() - started
    assert 1.0 <= took < 8, took
    names_judge_and_endpoint(failure, stub)
    assert "no complete reply within the 1 s timeout" in str(failure)


def test_the_deadline_covers_every_retry(stub: ChatStub) -> None:
    # 503 forever, 10 retries after 0.2 s, then 0.4, 0.8...: the back-off alone would take
    # 0.2 * (2**10 - 1) = 204.6 s. Attempts start at 0, 0.2 and 0.6 s; the next would start
    # at 1.4 s, past the 1 s deadline, so the item fails then and there.
    stub.default = status(503)
    judge = make_judge(stub, max_retries=10, backoff=0.2, deadline=1.0)
    started = time.monotonic()
    failure = fails(judge)
    took = time.monotonic() - started
    assert 0.6 <= took < 2.0, took
    names_judge_and_endpoint(failure, stub)
    assert "1 s deadline" in str(failure)
    assert "HTTP 503" in str(failure)
    assert stub.requests("q1") == 3


def test_the_default_deadline_lets_every_attempt_time_out() -> None:
    # (max_retries + 1) * (timeout + 1) + backoff * (2**max_retries - 1): 4 * 61 + 0.5 * 7.
    judge = LLMJudge("j", model="m", base_url="http://127.0.0.1:9/v1", prompt=PROMPT)
    assert judge.deadline == 247.5
    other = LLMJudge("j", model="m", base_url="http://127.0.0.1:9/v1", prompt=PROMPT,
                     timeout=5, max_retries=0, backoff=1)  # fmt: skip
    assert other.deadline == 6.0


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("max_response_bytes", 0, "`max_response_bytes` must be an integer from 1024"),
        ("max_response_bytes", 1.5, "`max_response_bytes` must be an integer from 1024"),
        ("max_response_bytes", True, "`max_response_bytes` must be an integer from 1024"),
        ("max_response_bytes", 2**40, "`max_response_bytes` must be an integer from 1024"),
        ("deadline", 0, "`deadline` must be a number of seconds, more than 0"),
        ("deadline", float("inf"), "`deadline` must be a number of seconds, more than 0"),
        ("deadline", "60", "`deadline` must be a number of seconds, more than 0"),
    ],
)
def test_the_new_settings_are_checked(setting: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        LLMJudge("j", model="m", base_url="http://127.0.0.1:9/v1", prompt=PROMPT,
                 **{setting: value})  # fmt: skip


def test_the_settings_come_from_a_judges_file_and_stay_out_of_the_identity(
    tmp_path: Path,
) -> None:
    from kagreport.evaluation.judges import load_judges

    (tmp_path / "j.toml").write_text(
        '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'prompt = "x"\nmax_response_bytes = 65536\ndeadline = 12.5\n'
    )
    (judge,) = load_judges(tmp_path / "j.toml")
    assert isinstance(judge, LLMJudge)
    assert (judge.max_response_bytes, judge.deadline) == (65536, 12.5)
    plain = LLMJudge("j", model="m", base_url="http://127.0.0.1:9/v1", prompt="x")
    assert judge.identity == plain.identity
    copy = judge.with_cache(None)
    assert (copy.max_response_bytes, copy.deadline) == (65536, 12.5)
    judge.close()


# -- 3: messages ---------------------------------------------------------------------------


def test_json_nested_200000_levels_deep_is_named_as_such(stub: ChatStub) -> None:
    # Before the fix: a bare "maximum recursion depth exceeded", naming nothing.
    stub.default = deep(200_000)
    failure = fails(make_judge(stub))
    names_judge_and_endpoint(failure, stub)
    assert "nested too deeply" in str(failure)
    assert "recursion" not in str(failure)


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b'{"choices": [1]}', "malformed: choices[0] is 1, not an object"),
        (b'{"choices": ["x", {}]}', 'malformed: choices[0] is "x", not an object'),
        (b'{"choices": [null]}', "malformed: choices[0] is null, not an object"),
        (b'{"choices": [[{}]]}', "malformed: choices[0] is a list, not an object"),
        (b'{"choices": []}', "an empty choices list"),
    ],
)
def test_a_malformed_choices_list_says_what_is_malformed(
    stub: ChatStub, body: bytes, what: str
) -> None:
    stub.default = Reply(body=body)
    failure = fails(make_judge(stub))
    names_judge_and_endpoint(failure, stub)
    assert what in str(failure)
    if "malformed" in what:
        assert "empty" not in str(failure)


def test_every_failure_names_the_judge_the_endpoint_and_the_cause(stub: ChatStub) -> None:
    stub.script("q1", status(429, "slow down"))
    stub.script("q2", status(401, "bad key"))
    stub.script("q3", Reply(content=None))
    stub.script("q4", ok("I cannot decide."))
    judge = make_judge(stub)
    causes = {}
    for identifier in ("q1", "q2", "q3", "q4"):
        failure = fails(judge, identifier)
        names_judge_and_endpoint(failure, stub)
        assert f"item {identifier!r}" in str(failure)
        causes[identifier] = failure.cause
    assert causes == {
        "q1": "HTTP 429 (Too Many Requests)",
        "q2": "HTTP 401 (Unauthorized)",
        "q3": "the reply has no text content (finish_reason 'stop')",
        "q4": "no binary verdict in the reply",
    }


def test_the_evaluation_records_the_causes_of_errors(stub: ChatStub) -> None:
    stub.default = status(429, "slow down")
    stub.script("q2", status(503))
    judge = make_judge(stub)
    items = [item(f"q{n}") for n in range(4)]
    evaluation = evaluate_answers(items, [judge], max_concurrency=2)
    assert evaluation.errors == {"system": 0, "j": 4}
    assert evaluation.failed_judges == ("j",)
    assert evaluation.error_causes == {
        "j": {"HTTP 429 (Too Many Requests)": 3, "HTTP 503 (Service Unavailable)": 1}
    }
    again = AnswerEvaluation.from_dict(json.loads(evaluation.dumps("json")))
    assert again.error_causes == evaluation.error_causes
    judge.close()


# -- the command ---------------------------------------------------------------------------


def _files(tmp_path: Path, url: str, count: int = 1, timeout: float = 5) -> tuple[Path, Path]:
    judges = tmp_path / "judges.toml"
    judges.write_text(
        f'[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "{url}"\n'
        f"prompt = {json.dumps(PROMPT)}\nmax_retries = 0\ntimeout = {timeout}\n"
    )
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps({"identifier": f"q{n}", "question": "Capital?", "answer": "Paris"}) + "\n"
            for n in range(count)
        )
    )
    return judges, items


def _cached(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM responses").fetchone()[0])


def test_a_judge_that_got_429_on_every_item_makes_evaluate_exit_1(
    tmp_path: Path, stub: ChatStub
) -> None:
    # Before the fix: exit 0, and a warning naming neither the endpoint nor the cause.
    stub.default = status(429, "rate limit reached")
    stub.script("q2", status(503))
    judges, items = _files(tmp_path, stub.url, count=3)
    out = tmp_path / "out.json"
    done = run_cli("evaluate", "--items", str(items), "--judges", str(judges), "--cache",
                   str(tmp_path / "c.sqlite"), "-o", str(out))  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"kagreport: error: judge 'j' ({stub.url}) failed on every item (3 of 3); most "
        "common cause (2 items): HTTP 429 (Too Many Requests)"
    ]
    report = AnswerEvaluation.read(out)  # written all the same
    assert report.errors == {"system": 0, "j": 3}
    assert _cached(tmp_path / "c.sqlite") == 0


def test_a_judge_that_failed_on_some_items_only_exits_0(tmp_path: Path, stub: ChatStub) -> None:
    stub.script("q0", status(429))
    judges, items = _files(tmp_path, stub.url, count=2)
    done = run_cli("evaluate", "--items", str(items), "--judges", str(judges),
                   "-o", str(tmp_path / "out.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "failed on every item" not in done.stderr
    assert AnswerEvaluation.read(tmp_path / "out.json").errors["j"] == 1


def _evaluate(tmp_path: Path, stub: ChatStub, reply: Reply, timeout: float = 5) -> tuple[Any, Path]:
    stub.default = reply
    judges, items = _files(tmp_path, stub.url, timeout=timeout)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = [sys.executable, "-m", "kagreport", "evaluate", "--items", str(items),
               "--judges", str(judges), "--cache", str(tmp_path / "c.sqlite"),
               "-o", str(tmp_path / "out.json")]  # fmt: skip
    return run_measured(command, env), tmp_path / "out.json"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "cause"),
    [
        ("huge", "over the limit of 4,194,304 bytes"),
        ("endless", "over the limit of 4,194,304 bytes"),
        ("gzip", "over the limit of 4,194,304 bytes"),
        ("drip", "no complete reply within the 2 s timeout"),
        ("drip-headers", "no complete reply within the 2 s timeout"),
    ],
)
def test_evaluate_stays_small_and_quick_against_a_hostile_server(
    tmp_path: Path, stub: ChatStub, case: str, cause: str
) -> None:
    replies = {
        "huge": huge(2 << 30),  # Content-Length: 2 GiB
        "endless": endless(),
        "gzip": gzip_bomb(1 << 30),  # about 1 MB, 1 GiB inflated
        # A byte every 0.5 s: each read well inside the timeout, the reply never complete.
        "drip": drip(0.5),
        "drip-headers": drip(0.5, headers=True),
    }
    done, out = _evaluate(tmp_path, stub, replies[case], timeout=2 if "drip" in case else 5)
    print(f"{case}: exit {done.returncode} after {done.seconds:.1f} s, peak "
          f"{done.peak / 1e6:.0f} MB{' (killed)' if done.killed else ''}")  # fmt: skip
    assert not done.killed, f"killed at {done.peak / 1e6:.0f} MB after {done.seconds:.1f} s"
    assert done.peak < PEAK, done.peak
    # timeout = 2: the drips end at 2 s (plus the start of Python and of the openai package).
    assert done.seconds < 30, done.seconds
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"kagreport: error: judge 'j' ({stub.url}) failed on every item")
    assert cause in lines[0]
    assert AnswerEvaluation.read(out).errors == {"system": 0, "j": 1}
    assert _cached(tmp_path / "c.sqlite") == 0


@pytest.mark.signals
def test_ctrl_c_stops_evaluate_while_a_server_drips(tmp_path: Path, stub: ChatStub) -> None:
    # The attempt would last 60 s (timeout); Ctrl-C ends the command at once all the same.
    stub.default = drip(1.0)
    judges, items = _files(tmp_path, stub.url, count=2, timeout=60)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = [sys.executable, "-m", "kagreport", "evaluate", "--items", str(items),
               "--judges", str(judges), "-o", str(tmp_path / "out.json")]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + BOUND
        while stub.requests() < 2 and process.poll() is None:
            assert time.monotonic() < deadline, "the stub never saw the requests"
            time.sleep(0.01)
        time.sleep(1.5)  # a byte or two has dripped
        sent = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=BOUND)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    print(f"Ctrl-C during a drip: exited after {took:.2f} s")
    assert process.returncode == 130, err
    assert took < BOUND
    assert "interrupted: 0 of 2 items judged" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.json").exists()

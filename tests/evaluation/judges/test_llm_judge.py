"""The LLM judge against a real HTTP stub: usage accounting, retries, timeouts, parsing,
templates, identity and concurrency (PITFALLS.md B10)."""

from __future__ import annotations

import json
import math
import pickle
import re
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chat_stub import (
    ChatStub,
    Logged,
    error_body,
    malformed,
    no_usage,
    null_usage,
    ok,
    sleep,
    status,
    truncated,
)
from kagreport.evaluation import AnswerItem, TextRepairWarning
from kagreport.evaluation.judges import Judge, JudgeFailure, Judgement, LLMJudge, Usage
from kagreport.evaluation.judges._verdict import parse_verdict

PROMPT = "[item {{ item.identifier }}] Question: {{ item.question }}\nAnswer: {{ item.answer }}"


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as server:
        yield server


def make_item(identifier: str, **fields: Any) -> AnswerItem:
    values: dict[str, Any] = {"question": f"Q {identifier}?", "answer": "A", "reference": "R"}
    return AnswerItem(identifier=identifier, **(values | fields))


def make_judge(stub: ChatStub, **settings: Any) -> LLMJudge:
    values: dict[str, Any] = {
        "model": "stub-model",
        "base_url": stub.url,
        "prompt": PROMPT,
        "timeout": 5.0,
        "backoff": 0.01,
    }
    return LLMJudge(settings.pop("name", "j"), **(values | settings))


def judge_all(
    judge: LLMJudge, items: Sequence[AnswerItem], seconds: dict[str, float] | None = None
) -> tuple[dict[str, Judgement | JudgeFailure], Usage]:
    """Judge each item; sum the usage of judgements and of failures, as the evaluation does.

    ``seconds``, if given, receives how long each item took.
    """
    outcomes: dict[str, Judgement | JudgeFailure] = {}
    total = Usage()
    for item in items:
        started = time.monotonic()
        try:
            outcome: Judgement | JudgeFailure = judge.judge(item)
        except JudgeFailure as failure:
            outcome = failure
        if seconds is not None:
            seconds[item.identifier] = time.monotonic() - started
        total.add(outcome.usage)
        outcomes[item.identifier] = outcome
    return outcomes, total


def gap_before_retry(log: list[Logged], item: str) -> float:
    """Seconds between the reply to ``item``'s first request and its second request."""
    first, second = sorted((e for e in log if e.item == item), key=lambda e: e.attempt)[:2]
    return second.started - first.answered


# -- PITFALLS.md B10 -----------------------------------------------------------------------


def script_b10(stub: ChatStub) -> list[AnswerItem]:
    stub.script("r1", ok('{"score": 1}', prompt_tokens=12, completion_tokens=3))
    stub.script("r2", no_usage('{"score": 0}'))
    stub.script("r3", null_usage('{"score": 1}'))
    stub.script(
        "r4", ok('{"score": 0.5}', prompt_tokens=20, completion_tokens=4, details_null=True)
    )
    stub.script("r5", truncated('{"score": 0.', prompt_tokens=12, completion_tokens=8))
    stub.script(
        "r6",
        status(429, retry_after_ms="200"),
        ok('{"score": 1}', prompt_tokens=7, completion_tokens=2),
    )
    stub.script("r7", sleep(3.0))
    return [make_item(f"r{i}") for i in range(1, 8)]


# r1 + r4 + r5 + r6 (r2 and r3 report no usage; r7 never answers)
B10_INPUT_TOKENS = 12 + 20 + 12 + 7
B10_OUTPUT_TOKENS = 3 + 4 + 8 + 2


def test_b10_usage_retries_timeouts_and_truncated_verdicts(stub: ChatStub) -> None:
    items = script_b10(stub)
    judge = make_judge(stub, scale="json", timeout=0.3, max_retries=1)
    seconds: dict[str, float] = {}
    outcomes, total = judge_all(judge, items, seconds)

    assert total == Usage(
        responses=6,  # r1-r6; the 429 is not a response, r7 never answered
        cached_responses=0,
        input_tokens=B10_INPUT_TOKENS,
        output_tokens=B10_OUTPUT_TOKENS,
        responses_without_token_counts=2,  # r2, r3
    )
    failures = {k for k, v in outcomes.items() if isinstance(v, JudgeFailure)}
    assert failures == {"r5", "r7"}
    scores = {k: v.scores for k, v in outcomes.items() if isinstance(v, Judgement)}
    assert scores == {
        "r1": {"score": 1.0},
        "r2": {"score": 0.0},
        "r3": {"score": 1.0},
        "r4": {"score": 0.5},
        "r6": {"score": 1.0},
    }

    # r5: truncated JSON; the score is undefined (no Judgement), the raw verdict is kept,
    # and the response and its tokens are counted.
    r5 = outcomes["r5"]
    assert isinstance(r5, JudgeFailure)
    assert r5.verdict == '{"score": 0.'
    assert r5.usage == Usage(responses=1, input_tokens=12, output_tokens=8)
    assert "finish_reason 'length'" in str(r5)

    # r6: retried once, after at least retry-after-ms (200 ms) rather than the 10 ms back-off.
    assert stub.requests("r6") == 2
    assert gap_before_retry(stub.log, "r6") >= 0.2 - 0.01
    assert seconds["r6"] >= 0.2

    # r7: 1 + max_retries attempts, each cut by the 0.3 s timeout; nothing counted.
    r7 = outcomes["r7"]
    assert isinstance(r7, JudgeFailure)
    assert stub.requests("r7") == 2
    assert r7.usage == Usage()
    assert r7.verdict is None
    assert "timeout" in str(r7)
    assert "2 attempt" in str(r7)
    assert 2 * 0.3 <= seconds["r7"] < 1.5  # two attempts, each cut short of the 3 s sleep


def test_b10_end_to_end_through_evaluate_answers(stub: ChatStub, tmp_path: Path) -> None:
    from kagreport.evaluation import AnswerEvaluation, evaluate_answers

    items = script_b10(stub)
    judge = make_judge(stub, scale="json", timeout=0.3, max_retries=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Mean of empty slice" or other RuntimeWarning
        evaluation = evaluate_answers(items, [judge], keep_verdicts=True, max_concurrency=4)
        evaluation.write(tmp_path / "b10.json")

    assert evaluation.usage["j"] == {
        "responses": 6,
        "cached_responses": 0,
        "input_tokens": B10_INPUT_TOKENS,
        "output_tokens": B10_OUTPUT_TOKENS,
        "responses_without_token_counts": 2,
    }
    assert evaluation.errors["j"] == 2
    assert evaluation.coverage["j"] == 5
    assert evaluation.metrics["j"] == pytest.approx((1 + 0 + 1 + 0.5 + 1) / 5)
    r5 = next(item for item in evaluation.items if item.identifier == "r5")
    assert "j" not in r5.scores
    assert r5.verdicts["j"]["verdict"] == '{"score": 0.'
    assert AnswerEvaluation.read(tmp_path / "b10.json").usage["j"]["responses"] == 6


def test_retry_after_in_seconds_is_honoured(stub: ChatStub) -> None:
    stub.script("q1", status(429, retry_after="1"), ok())
    judge = make_judge(stub, backoff=0.01)
    started = time.monotonic()
    judgement = judge.judge(make_item("q1"))
    assert time.monotonic() - started >= 1.0
    assert gap_before_retry(stub.log, "q1") >= 1.0 - 0.01
    assert judgement.usage == Usage(responses=1, input_tokens=12, output_tokens=3)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({}, None),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "100", "retry-after": "5"}, 0.1),  # milliseconds first
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "whenever"}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    from kagreport.evaluation.judges._client import _retry_after

    assert _retry_after(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    from email.utils import formatdate

    from kagreport.evaluation.judges._client import _retry_after

    wait = _retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert wait is not None
    assert 28 <= wait <= 30


def test_retry_after_beyond_the_cap_fails_at_once(stub: ChatStub) -> None:
    stub.script("q1", status(429, retry_after="3600"), ok())
    with pytest.raises(JudgeFailure, match="asks to wait 3600 s"):
        make_judge(stub).judge(make_item("q1"))
    assert stub.requests("q1") == 1


def test_5xx_is_retried_with_doubling_backoff_then_fails(stub: ChatStub) -> None:
    stub.script("q1", status(500), status(503))
    judge = make_judge(stub, max_retries=2, backoff=0.1)
    with pytest.raises(JudgeFailure, match=r"after 3 attempts; last: HTTP 503") as caught:
        judge.judge(make_item("q1"))
    assert caught.value.usage == Usage()
    assert stub.requests("q1") == 3
    first, second, third = sorted((e for e in stub.log), key=lambda e: e.attempt)
    assert second.started - first.answered >= 0.1 - 0.01
    assert third.started - second.answered >= 0.2 - 0.01


@pytest.mark.parametrize("code", [400, 401, 404, 408, 422])
def test_other_4xx_fail_without_retry(stub: ChatStub, code: int) -> None:
    stub.script("q1", status(code, message="nope"), ok())
    with pytest.raises(JudgeFailure, match=f"HTTP {code}") as caught:
        make_judge(stub).judge(make_item("q1"))
    assert "nope" in str(caught.value)
    assert caught.value.usage == Usage()
    assert stub.requests("q1") == 1


def test_connection_errors_are_retried_then_fail() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    judge = LLMJudge(
        "j",
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        prompt=PROMPT,
        max_retries=1,
        backoff=0.01,
        timeout=2,
    )
    with pytest.raises(JudgeFailure, match=r"after 2 attempts; last: cannot connect") as caught:
        judge.judge(make_item("q1"))
    assert caught.value.usage == Usage()


# -- bodies that are not model responses, and responses without a verdict ---------------------


def test_http_200_error_body_is_a_failure_not_a_response(stub: ChatStub) -> None:
    # Decision: a 2xx without `choices` (an error object) is not a model response: it is
    # counted nowhere, not retried, and never cached (PITFALLS.md B9).
    stub.script("q1", error_body("rate limit exceeded"))
    with pytest.raises(JudgeFailure, match="no choices, an error: 'rate limit exceeded'") as caught:
        make_judge(stub).judge(make_item("q1"))
    assert caught.value.usage == Usage()
    assert caught.value.verdict is None
    assert stub.requests("q1") == 1


def test_malformed_json_body_is_a_failure_not_a_response(stub: ChatStub) -> None:
    stub.script("q1", malformed())
    with pytest.raises(JudgeFailure, match="is not JSON") as caught:
        make_judge(stub).judge(make_item("q1"))
    assert caught.value.usage == Usage()
    assert stub.requests("q1") == 1


def test_reply_without_text_is_a_failed_response(stub: ChatStub) -> None:
    from chat_stub import Reply

    stub.script("q1", Reply(content=None, finish_reason="content_filter"))
    with pytest.raises(JudgeFailure, match="no text content") as caught:
        make_judge(stub).judge(make_item("q1"))
    assert caught.value.usage == Usage(responses=1, input_tokens=12, output_tokens=3)


def test_unparsable_verdict_keeps_raw_text_and_usage(stub: ChatStub) -> None:
    stub.script("q1", ok("I am not sure."))
    with pytest.raises(JudgeFailure, match="no binary verdict") as caught:
        make_judge(stub).judge(make_item("q1"))
    assert caught.value.verdict == "I am not sure."
    assert caught.value.usage == Usage(responses=1, input_tokens=12, output_tokens=3)


def test_truncated_reply_needs_a_labelled_verdict(stub: ChatStub) -> None:
    stub.script("cut", truncated("Let me think. The answer seems correct"))
    stub.script("labelled", truncated("Verdict: correct\nReasoning: the answer names"))
    judge = make_judge(stub)
    with pytest.raises(JudgeFailure, match="cut off"):
        judge.judge(make_item("cut"))
    assert judge.judge(make_item("labelled")).scores == {"score": 1.0}


def test_partial_usage_counts_as_without_token_counts(stub: ChatStub) -> None:
    from chat_stub import Reply

    stub.script("q1", Reply(usage={"prompt_tokens": 5, "completion_tokens": None}))
    stub.script("q2", Reply(usage={"total_tokens": 9}))
    _, total = judge_all(make_judge(stub), [make_item("q1"), make_item("q2")])
    assert total == Usage(responses=2, responses_without_token_counts=2)


# -- parsing rules ------------------------------------------------------------------------

BINARY_CASES = [
    ("yes", 1.0),
    ("No", 0.0),
    ("Verdict: correct", 1.0),
    ("Verdict: incorrect", 0.0),
    ("**Verdict:** PASS", 1.0),
    ("## Final verdict = fail", 0.0),
    ("true", 1.0),
    ("False.", 0.0),
    ("Score: 1", 1.0),
    ("Score: 0", 0.0),
    ("Score: 1.0", 1.0),
    ("The answer is right.\nVerdict: yes\nThanks for asking.", 1.0),  # the labelled line wins
    ("Yes, it looks fine at first.\nBut the date is wrong. Incorrect.", 0.0),  # last line
    ("Verdict:\n\nno", 0.0),  # label alone: the next non-empty line
    ("Correct or incorrect? Incorrect", 0.0),  # the last token on the line
    ("Verdict: yes\nVerdict: no", 0.0),  # the last labelled line
    ("`correct`", 1.0),
    ("Score: 0/1", 0.0),  # 1 is the denominator
    ("Score (0 or 1): 1", 1.0),
]
BINARY_UNREADABLE = [
    "",
    "   \n  ",
    "I cannot tell.",
    "Score: 0.5",  # not 0 or 1
    "Score: 10",
    "The answer is not correct",  # negated: refused, not guessed
    "Verdict: isn't entirely correct",
    "Verdict: isn’t correct",
    "It cannot pass",
    "Verdict: unclear\nyes",  # the labelled line has no token
]


@pytest.mark.parametrize(("text", "expected"), BINARY_CASES)
def test_binary_verdicts(text: str, expected: float) -> None:
    assert parse_verdict(text, "binary") == {"score": expected}


@pytest.mark.parametrize("text", BINARY_UNREADABLE)
def test_unreadable_binary_verdicts(text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_verdict(text, "binary")


RATING_CASES = [
    ("1-5", "Score: 1", 0.0),
    ("1-5", "Score: 5", 1.0),
    ("1-5", "Score: 4", 0.75),
    ("1-5", "Rating: 4/5", 0.75),
    ("1-5", "Score: 3 out of 5", 0.5),
    ("1-5", "Score: 4 (on the 1-5 scale)", 0.75),  # ranges are ignored
    ("1-5", "Score: 4.0", 0.75),
    ("1-5", "The answer covers 2 of 3 points.\nScore: 2", 0.25),
    ("1-5", "Mostly right. I would give it a 3", 0.5),  # last line, last integer in range
    ("1-5", "Score: 7, no, 4", 0.75),  # 7 is out of range: skipped
    ("1-10", "Score: 10", 1.0),
    ("1-10", "Score: 1", 0.0),
    ("1-10", "Score: 7/10", 6 / 9),
    ("1-10", "**Score**: 8", 7 / 9),
    ("1-5", "Score (1-5): 4", 0.75),
]
RATING_UNREADABLE = [
    ("1-5", "Score: 0"),
    ("1-5", "Score: 6"),
    ("1-5", "Score: 4.5"),
    ("1-5", "Score: 8/10"),  # another scale's score
    ("1-5", "Score: excellent"),
    ("1-5", "Score: 3-4"),  # a range, not a score
    ("1-10", "Score: 11"),
    ("1-10", ""),
]


@pytest.mark.parametrize(("scale", "text", "expected"), RATING_CASES)
def test_rating_verdicts(scale: Any, text: str, expected: float) -> None:
    assert parse_verdict(text, scale) == {"score": pytest.approx(expected)}


@pytest.mark.parametrize(("scale", "text"), RATING_UNREADABLE)
def test_unreadable_rating_verdicts(scale: Any, text: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_verdict(text, scale)


@given(st.integers(min_value=1, max_value=10), st.text(alphabet="abc ,.:;!?\n", max_size=40))
def test_a_labelled_score_is_read_after_any_reasoning(score: int, reasoning: str) -> None:
    text = f"{reasoning}\nScore: {score}\n"
    assert parse_verdict(text, "1-10") == {"score": pytest.approx((score - 1) / 9)}


JSON_CASES: list[tuple[str, Sequence[str], tuple[float, float], dict[str, float]]] = [
    ('{"score": 0.25}', ("score",), (0, 1), {"score": 0.25}),
    ('{"score": 1}', ("score",), (0, 1), {"score": 1.0}),
    ('Sure!\n```json\n{"score": 0}\n```', ("score",), (0, 1), {"score": 0.0}),
    (
        '{"faithful": 1, "relevant": 0.5, "why": "..."}',
        ("faithful", "relevant"),
        (0, 1),
        {"faithful": 1.0, "relevant": 0.5},
    ),
    ('{"score": 4}', ("score",), (1, 5), {"score": 0.75}),
    ('{"a": {"b": 1}, "score": 1} then {"score": 0}', ("score",), (0, 1), {"score": 1.0}),
    ('not json {oops} {"score": 0.5}', ("score",), (0, 1), {"score": 0.5}),  # first *object*
]
JSON_UNREADABLE: list[tuple[str, Sequence[str], tuple[float, float]]] = [
    ('{"score": 0.', ("score",), (0, 1)),  # truncated (B10 r5)
    ("no json here", ("score",), (0, 1)),
    ('{"score": "0.5"}', ("score",), (0, 1)),  # a string
    ('{"score": true}', ("score",), (0, 1)),  # a boolean
    ('{"score": 1.5}', ("score",), (0, 1)),  # outside the scale
    ('{"score": -0.1}', ("score",), (0, 1)),
    ('{"score": 0}', ("score",), (1, 5)),
    ('{"score": NaN}', ("score",), (0, 1)),
    ('{"other": 1}', ("score",), (0, 1)),  # criterion missing
    ('{"faithful": 1}', ("faithful", "relevant"), (0, 1)),
    ("[1, 2]", ("score",), (0, 1)),
]


@pytest.mark.parametrize(("text", "criteria", "score_range", "expected"), JSON_CASES)
def test_json_verdicts(
    text: str, criteria: Sequence[str], score_range: tuple[float, float], expected: dict[str, float]
) -> None:
    assert parse_verdict(text, "json", criteria, score_range=score_range) == expected


@pytest.mark.parametrize(("text", "criteria", "score_range"), JSON_UNREADABLE)
def test_unreadable_json_verdicts(
    text: str, criteria: Sequence[str], score_range: tuple[float, float]
) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_verdict(text, "json", criteria, score_range=score_range)


def test_json_judge_with_several_criteria(stub: ChatStub) -> None:
    stub.script("q1", ok('{"faithful": 5, "relevant": 2, "notes": "ok"}'))
    judge = make_judge(stub, scale="json", criteria=("faithful", "relevant"), score_range=(1, 5))
    judgement = judge.judge(make_item("q1"))
    assert judgement.scores == {"faithful": 1.0, "relevant": 0.25}
    assert judgement.verdict == '{"faithful": 5, "relevant": 2, "notes": "ok"}'
    assert judge.criteria == ("faithful", "relevant")


def test_rating_judge_over_http(stub: ChatStub) -> None:
    stub.script("q1", ok("The answer is partly right.\nScore: 3"))
    assert make_judge(stub, scale="1-5").judge(make_item("q1")).scores == {"score": 0.5}


# -- templates ------------------------------------------------------------------------------


def test_templates_render_item_and_context_into_the_exact_request(stub: ChatStub) -> None:
    judge = make_judge(
        stub,
        system_prompt="You grade {{ item.metadata.topic }} answers.",
        prompt=PROMPT + "\nContext: {{ context }}\nReference: {{ item.reference }}",
        seed=7,
        max_tokens=50,
        temperature=0,
    )
    item = make_item("q1", metadata={"context": "Paris is in France.", "topic": "geography"})
    judge.judge(item)
    (logged,) = stub.log
    assert logged.body == judge.request_body(item)  # what the SDK sent is what was hashed
    assert logged.body == {
        "model": "stub-model",
        "messages": [
            {"role": "system", "content": "You grade geography answers."},
            {
                "role": "user",
                "content": "[item q1] Question: Q q1?\nAnswer: A\n"
                "Context: Paris is in France.\nReference: R",
            },
        ],
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 50,
    }


def test_seed_none_is_left_out_of_the_request(stub: ChatStub) -> None:
    judge = make_judge(stub, seed=None)
    judge.judge(make_item("q1"))
    assert "seed" not in stub.log[0].body
    assert "max_tokens" not in stub.log[0].body


@pytest.mark.parametrize(
    ("prompt", "item_fields", "message"),
    [
        ("{{ item.missing }}", {}, r"the prompt template failed for item 'q1': .*missing"),
        ("{{ item.metadata['context'] }}", {}, r"the prompt template failed .*'context'"),
        ("Context: {{ context }}", {}, r"prints a value that is None"),
        ("Reference: {{ item.reference }}", {"reference": None}, r"prints a value that is None"),
        ("{{ item.__class__.__mro__ }}", {}, r"the prompt template failed"),  # sandbox
        ("{{ item.metadata.clear() }}", {"metadata": {"a": 1}}, r"the prompt template failed"),
    ],
)
def test_template_errors_fail_the_item_with_a_clear_message(
    stub: ChatStub, prompt: str, item_fields: dict[str, Any], message: str
) -> None:
    item = make_item("q1", **item_fields)
    with pytest.raises(JudgeFailure, match=message) as caught:
        make_judge(stub, prompt=prompt).judge(item)
    assert caught.value.usage == Usage()
    assert stub.requests() == 0
    assert item.metadata == item_fields.get("metadata", {})  # the sandbox changed nothing


def test_system_template_errors_name_the_system_prompt(stub: ChatStub) -> None:
    judge = make_judge(stub, system_prompt="{{ item.nope }}")
    with pytest.raises(JudgeFailure, match="judge 'j': the system prompt template failed"):
        judge.judge(make_item("q1"))


def test_guarded_optional_values_render(stub: ChatStub) -> None:
    prompt = PROMPT + "{% if context %}\nContext: {{ context }}{% endif %}"
    judge = make_judge(stub, prompt=prompt)
    judge.judge(make_item("q1"))
    assert stub.log[0].body["messages"][-1]["content"] == "[item q1] Question: Q q1?\nAnswer: A"


def test_an_item_without_answer_is_not_sent(stub: ChatStub) -> None:
    with pytest.raises(JudgeFailure, match="has no answer"):
        make_judge(stub).judge(make_item("q1", answer=None))
    assert stub.requests() == 0


# -- construction ---------------------------------------------------------------------------

BASE = {"model": "m", "base_url": "http://127.0.0.1:1/v1", "prompt": "{{ item.question }}"}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"name": ""}, "`name` must be a non-empty string"),
        ({"model": ""}, "`model` must be a non-empty string"),
        ({"base_url": None}, "`base_url` must be a non-empty string"),
        ({"scale": "1-7"}, "`scale` must be one of binary, 1-5, 1-10, json; got '1-7'"),
        ({"criteria": "score"}, "`criteria` must be a sequence of names"),
        ({"criteria": ()}, "`criteria` must be non-empty strings"),
        ({"criteria": ("a", "a"), "scale": "json"}, "`criteria` must not repeat"),
        ({"criteria": ("a", "b")}, "`criteria` must have one name for scale 'binary'"),
        ({"score_range": (1, 5)}, "`score_range` applies to scale 'json' only"),
        ({"score_range": (5, 1), "scale": "json"}, "`score_range` must be two finite numbers"),
        ({"temperature": -1}, "`temperature` must be a finite number >= 0"),
        ({"temperature": math.nan}, "`temperature` must be a finite number >= 0"),
        ({"seed": 1.5}, "`seed` must be an integer"),
        ({"max_tokens": 0}, "`max_tokens` must be a positive integer"),
        ({"timeout": 0}, "`timeout` must be a number of seconds, more than 0"),
        ({"max_retries": -1}, "`max_retries` must be an integer from 0 to 100"),
        ({"backoff": -0.5}, "`backoff` must be a number of seconds, more than 0"),
        ({"max_concurrency": 0}, "`max_concurrency` must be an integer >= 1"),
        ({"prompt": ""}, "`prompt` must be a non-empty Jinja2 template string"),
        ({"prompt": "{{ item.question "}, r"`prompt` is not a valid Jinja2 template \(line 1\)"),
        (
            {"system_prompt": "ok\n{% if %}"},
            r"`system_prompt` is not a valid Jinja2 template \(line 2\)",
        ),
        (
            {"prompt": "{{ question }}"},
            "`prompt` uses undefined variable question; templates see `item`",
        ),
        ({"system_prompt": 3}, "`system_prompt` must be a template string or None"),
    ],
)
def test_invalid_settings_are_refused_with_a_message(
    settings: dict[str, Any], message: str
) -> None:
    values = BASE | settings
    with pytest.raises(ValueError, match=message):
        LLMJudge(values.pop("name", "j"), **values)


def test_it_is_a_judge_with_identity_and_criteria() -> None:
    judge = LLMJudge("correctness", **BASE, system_prompt="Be strict.")  # type: ignore[arg-type]
    as_protocol: Judge = judge  # statically a Judge (mypy), and at run time:
    assert isinstance(as_protocol, Judge)
    assert judge.criteria == ("score",)
    identity = judge.identity
    assert set(identity) == {
        "kind",
        "model",
        "base_url",
        "prompt_sha256",
        "temperature",
        "seed",
        "scale",
        "criteria",
        "version",
    }  # max_tokens is None: left out (see test_identity_holds_no_none)
    assert identity["kind"] == "llm"
    assert identity["base_url"] == "http://127.0.0.1:1/v1"
    assert len(identity["prompt_sha256"]) == 64
    json.dumps(identity)  # JSON-compatible
    identity["model"] = "changed"
    assert judge.identity["model"] == "m"  # a copy


def test_api_key_is_the_given_one_or_a_placeholder(
    stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OPENAI_API_KEY belongs to OpenAI's API: the stub is another server (issue #10, item 12).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    make_judge(stub).judge(make_item("q1"))
    make_judge(stub, api_key="sk-given").judge(make_item("q2"))
    monkeypatch.delenv("OPENAI_API_KEY")
    keyless = make_judge(stub)
    keyless.judge(make_item("q3"))
    sent = {e.item: e.headers["authorization"] for e in stub.log}
    assert sent == {"q1": "Bearer not-needed", "q2": "Bearer sk-given", "q3": "Bearer not-needed"}
    assert "sk-" not in json.dumps(keyless.identity) + repr(keyless)


def _key(**settings: Any) -> str:
    judge = LLMJudge("j", **(BASE | settings))
    return judge.cache_key(make_item("q1"))


def test_what_changes_the_verdict_changes_the_cache_key() -> None:
    base = _key(system_prompt="You are strict.")
    assert _key(system_prompt="You are strict.") == base
    assert _key(system_prompt="You are lenient.") != base  # B9: the system prompt is in the key
    assert _key(system_prompt=None) != base
    assert _key(system_prompt="You are strict.", prompt="{{ item.question }}?") != base
    assert _key(system_prompt="You are strict.", model="m2") != base
    assert _key(system_prompt="You are strict.", seed=1) != base
    assert _key(system_prompt="You are strict.", temperature=0.5) != base
    assert _key(system_prompt="You are strict.", scale="1-5") != base
    assert _key(system_prompt="You are strict.", max_tokens=10) != base
    assert _key(system_prompt="You are strict.", base_url="http://other/v1") != base
    # What does not change a verdict does not change the key.
    assert _key(system_prompt="You are strict.", temperature=0) == base
    assert _key(system_prompt="You are strict.", base_url="http://127.0.0.1:1/v1/") == base
    assert (
        _key(
            system_prompt="You are strict.",
            timeout=1,
            max_retries=0,
            backoff=2,
            max_concurrency=1,
            api_key="sk-x",
        )
        == base
    )


def test_with_cache_returns_a_copy(tmp_path: Path) -> None:
    judge = LLMJudge("j", **BASE)  # type: ignore[arg-type]
    cached = judge.with_cache(tmp_path / "c.sqlite")
    assert judge.cache is None
    assert cached.cache is not None
    assert cached.cache.path == str(tmp_path / "c.sqlite")
    assert cached.identity == judge.identity
    assert cached.name == judge.name
    assert cached.with_cache(None).cache is None
    cached.close()


def test_a_pickled_judge_works_in_another_life(stub: ChatStub) -> None:
    judge = make_judge(stub, system_prompt="Be strict.")
    judge.judge(make_item("q1"))  # a client exists now; it is not pickled
    copy = pickle.loads(pickle.dumps(judge))
    assert copy.identity == judge.identity
    assert copy.name == "j"
    assert copy.judge(make_item("q2")).scores == {"score": 1.0}


def test_importing_the_module_does_not_import_openai() -> None:
    code = (
        "import sys; from kagreport.evaluation.judges._llm import LLMJudge;"
        "LLMJudge('j', model='m', base_url='http://x/v1', prompt='{{ item.question }}');"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- concurrency ----------------------------------------------------------------------------


def test_max_concurrency_bounds_requests_in_flight() -> None:
    with ChatStub(latency=0.05) as slow:
        judge = make_judge(slow, max_concurrency=2)
        items = [make_item(f"q{i}") for i in range(10)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            judgements = list(pool.map(judge.judge, items))
        assert all(j.scores == {"score": 1.0} for j in judgements)
        assert slow.requests() == 10
        assert slow.max_in_flight == 2


def test_a_judge_is_safe_to_share_between_threads(stub: ChatStub) -> None:
    judge = make_judge(stub, max_concurrency=8)
    total = Usage()
    lock = threading.Lock()

    def run(index: int) -> None:
        judgement = judge.judge(make_item(f"q{index}"))
        with lock:
            total.add(judgement.usage)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(run, range(40)))
    assert total == Usage(responses=40, input_tokens=40 * 12, output_tokens=40 * 3)
    judge.close()


# -- hostile replies: surrogates, token counts, huge and deep JSON, huge replies -----------


def raw_reply(
    content_json: str, usage: str = '{"prompt_tokens": 5, "completion_tokens": 2}'
) -> Any:
    """A completion whose body is written by hand (JSON escapes json.dumps never makes)."""
    from chat_stub import Reply

    body = (
        '{"choices": [{"message": {"role": "assistant", "content": '
        + content_json
        + '}, "finish_reason": "stop"}], "usage": '
        + usage
        + "}"
    )
    return Reply(body=body.encode())


def test_a_lone_surrogate_in_a_reply_becomes_u_fffd(stub: ChatStub, tmp_path: Path) -> None:
    from kagreport.evaluation import AnswerEvaluation, evaluate_answers

    # A reply cut in the middle of an emoji: "\ud83d" without its low half.
    stub.script("q1", raw_reply('"The answer is right \\ud83d\\nVerdict: yes"'))
    stub.script("q2", raw_reply('"Hmm \\ud83d"'))  # unreadable: the raw verdict is kept
    judgement = make_judge(stub).judge(make_item("q1"))
    assert judgement.verdict == "The answer is right \ufffd\nVerdict: yes"
    assert judgement.scores == {"score": 1.0}
    judgement.verdict.encode("utf-8")  # valid UTF-8: every writer can store it

    evaluation = evaluate_answers(
        [make_item("q1"), make_item("q2")], [make_judge(stub)], keep_verdicts=True
    )
    assert evaluation.errors["j"] == 1
    assert evaluation.usage["j"]["responses"] == 2
    assert evaluation.usage["j"]["input_tokens"] == 10
    failed = next(item for item in evaluation.items if item.identifier == "q2")
    assert failed.verdicts["j"]["verdict"] == "Hmm \ufffd"
    for suffix in (".json", ".toml"):
        evaluation.write(tmp_path / f"report{suffix}")
        again = AnswerEvaluation.read(tmp_path / f"report{suffix}")
        assert again.items[0].verdicts["j"] == "The answer is right \ufffd\nVerdict: yes"


def test_a_lone_surrogate_in_an_item_does_not_break_the_request(stub: ChatStub) -> None:
    judge = make_judge(stub)
    with pytest.warns(TextRepairWarning):  # the item repairs its text itself (issue #10)
        item = make_item("q1", answer="cut \ud83d")
    assert judge.judge(item).scores == {"score": 1.0}
    assert stub.log[0].body["messages"][-1]["content"].endswith("Answer: cut \ufffd")
    assert len(judge.cache_key(item)) == 64


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {"prompt_tokens": 2**63, "completion_tokens": 1},
            Usage(responses=1, responses_without_token_counts=1),
        ),
        (
            {"prompt_tokens": 1, "completion_tokens": 10**30},
            Usage(responses=1, responses_without_token_counts=1),
        ),
        (
            {"prompt_tokens": 2**63 - 1, "completion_tokens": 0},
            Usage(responses=1, input_tokens=2**63 - 1, output_tokens=0),
        ),
    ],
)
def test_token_counts_outside_64_bits_count_as_missing(
    stub: ChatStub, tmp_path: Path, usage: dict[str, int], expected: Usage
) -> None:
    from chat_stub import Reply

    stub.script("q1", Reply(usage=usage))
    with make_judge(stub, cache=tmp_path / "c.sqlite") as judge:
        judgement = judge.judge(make_item("q1"))
        assert judgement.usage == expected
        assert judge.cache is not None
        assert len(judge.cache) == 1  # cached, without the impossible count
        assert judge.judge(make_item("q1")).usage == Usage(responses=1, cached_responses=1)


def test_a_megabyte_of_braces_fails_fast() -> None:
    for text in ("{" * 1_000_000, '{"a":' * 200_000, '{"a": [' * 150_000, '{ "' * 300_000):
        started = time.monotonic()
        with pytest.raises(ValueError, match="no complete JSON object"):
            parse_verdict(text, "json")
        assert time.monotonic() - started < 0.5, text[:10]


def test_the_json_search_tries_a_bounded_number_of_places_in_order() -> None:
    junk = '{"x" ' * 10
    assert parse_verdict(junk + '{"score": 1}', "json") == {"score": 1.0}
    # Beyond 64 places that could start an object, the search stops (documented).
    with pytest.raises(ValueError, match="among the first 64 places"):
        parse_verdict('{"x" ' * 64 + '{"score": 1}', "json")


def test_deeply_nested_json_is_unreadable_not_a_recursion_error(stub: ChatStub) -> None:
    deep = '{"score": 1, "why": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_verdict(deep, "json")
    stub.script("q1", ok(deep))
    stub.script("q2", ok("{" * 1_000_000))
    judge = make_judge(stub, scale="json")
    started = time.monotonic()
    outcomes, total = judge_all(judge, [make_item("q1"), make_item("q2")])
    assert time.monotonic() - started < 2
    for identifier, text in (("q1", deep), ("q2", "{" * 1_000_000)):
        failure = outcomes[identifier]
        assert isinstance(failure, JudgeFailure)
        assert "no json verdict" in str(failure)
        assert failure.verdict == text  # the raw verdict is kept...
    assert total == Usage(responses=2, input_tokens=24, output_tokens=6)  # ...and the usage


def test_json_scores_are_compared_exactly_and_never_negative_zero() -> None:
    with pytest.raises(ValueError, match="outside"):
        parse_verdict('{"score": ' + "9" * 400 + "}", "json")  # no OverflowError
    assert math.copysign(1, parse_verdict('{"score": -0.0}', "json")["score"]) == 1


def test_a_reply_over_the_limit_is_read_and_kept_cut(stub: ChatStub, tmp_path: Path) -> None:
    from kagreport.evaluation.judges._verdict import MAX_REPLY_CHARS

    head = "Verdict: yes\n"
    long_reply = head + "x" * MAX_REPLY_CHARS
    late_verdict = "x" * MAX_REPLY_CHARS + "\nVerdict: yes"
    stub.script("long", ok(long_reply))
    stub.script("late", ok(late_verdict))
    with make_judge(stub, cache=tmp_path / "c.sqlite") as judge:
        judgement = judge.judge(make_item("long"))
        assert judgement.scores == {"score": 1.0}  # the first MAX_REPLY_CHARS are read
        assert isinstance(judgement.verdict, str)
        assert judgement.verdict.startswith(long_reply[:MAX_REPLY_CHARS])
        assert judgement.verdict.endswith("characters are kept and read]")
        assert "reply cut here" in judgement.verdict[MAX_REPLY_CHARS:]
        assert judge.cache is not None
        assert len(judge.cache) == 0  # too long to keep whole: not cached
        with pytest.raises(JudgeFailure, match="only its first 1,000,000 characters") as caught:
            judge.judge(make_item("late"))  # its verdict is past the limit
        assert caught.value.usage == Usage(responses=1, input_tokens=12, output_tokens=3)
        assert caught.value.verdict.startswith("x" * 1000)
        assert len(caught.value.verdict) < MAX_REPLY_CHARS + 200


# -- templates that fail in other ways ------------------------------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError  # no message at all


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("{{ 'a' * 10**12 }}", r"'\*' would make 1,000,000,000,000 characters"),
        ("{{ [0] * 10**7 }}", r"'\*' would make 10,000,000"),
        ("{{ 2 ** (10 ** 7) }}", r"'\*\*' would make a number"),
        ("{{ '%0999999999d' % 1 }}", r"'%' formatting asks for a width"),
        ("{{ '%0999999999d' | format(1) }}", r"'%' formatting asks for a width"),
        ("{{ '{:>999999999}'.format(1) }}", r"str.format asks for a width"),
        ("{{ item.answer.ljust(10**9) }}", r"str.ljust: a width of 1,000,000,000"),
        ("{{ item.answer | center(10**9) }}", r"center: a width"),
        ("{% for x in item %}{{ x }}{% endfor %}", r"TypeError: .*not iterable"),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", r"RecursionError"),
        ("{{ item.metadata.obj }}", r"RuntimeError$"),  # never an empty message
        (
            "{% for i in range(100000) %}{{ item.question }}{% endfor %}",
            r"renders more than 1,000,000 characters",
        ),
    ],
)
def test_any_template_failure_fails_the_item_with_a_message(
    stub: ChatStub, prompt: str, message: str
) -> None:
    item = make_item("q1", question="x" * 1000, metadata={"obj": Unprintable()})
    judge = make_judge(stub, prompt="[item {{ item.identifier }}] " + prompt)
    started = time.monotonic()
    with pytest.raises(
        JudgeFailure, match=r"^judge 'j': the prompt template failed for item 'q1': "
    ) as caught:
        judge.judge(item)
    assert time.monotonic() - started < 2
    assert re.search(message, str(caught.value)), str(caught.value)
    assert caught.value.usage == Usage()
    assert stub.requests() == 0


def test_the_size_checks_leave_ordinary_templates_alone(stub: ChatStub) -> None:
    prompt = (
        "[item {{ item.identifier }}] {{ '-' * 3 }} {{ 2 ** 10 }} {{ '%5.1f|%s' % (3.14159, 'x') }} "
        "{{ '{:,}'.format(1234567) }} {{ item.answer.ljust(3, '.') }} {{ 7 % 3 }} "
        "{{ '%s' | format('f') }} {{ 'a' | center(3) }}"
    )
    make_judge(stub, prompt=prompt).judge(make_item("q1"))
    content = stub.log[0].body["messages"][-1]["content"]
    assert content == "[item q1] --- 1024   3.1|x 1,234,567 A.. 1 f  a "


# -- identity -------------------------------------------------------------------------------


def test_identity_holds_no_none(stub: ChatStub, tmp_path: Path) -> None:
    from kagreport.evaluation import AnswerEvaluation, evaluate_answers

    unset = make_judge(stub, seed=None)
    assert "seed" not in unset.identity
    assert "max_tokens" not in unset.identity
    assert None not in unset.identity.values()
    assert make_judge(stub, seed=0, max_tokens=5).identity | {"seed": 0, "max_tokens": 5} == (
        make_judge(stub, seed=0, max_tokens=5).identity
    )
    # Left out and set differ, in the identity and in the cache key.
    keys = {
        make_judge(stub, **settings).cache_key(make_item("q1"))
        for settings in (
            {"seed": None},
            {"seed": 0},
            {"max_tokens": 5},
            {"seed": None, "max_tokens": 5},
        )
    }
    assert len(keys) == 4
    # TOML has no null: the identity now survives a round trip, so compare sees no change.
    evaluation = evaluate_answers([make_item("q1")], [unset])
    evaluation.write(tmp_path / "report.toml")
    again = AnswerEvaluation.read(tmp_path / "report.toml")
    assert again.judges == evaluation.judges


# -- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"name": "  "}, "`name` must be a non-empty string"),
        ({"name": 3}, "`name` must be a non-empty string"),
        (
            {"timeout": math.inf},
            "`timeout` must be a number of seconds, more than 0 and at most 3600",
        ),
        ({"timeout": 3601}, "`timeout` must be a number of seconds"),
        ({"timeout": True}, "`timeout` must be a number of seconds"),
        ({"timeout": "5"}, "`timeout` must be a number of seconds"),
        ({"backoff": 0}, "`backoff` must be a number of seconds, more than 0"),
        ({"backoff": math.nan}, "`backoff` must be a number of seconds"),
        ({"backoff": 10**400}, "`backoff` must be a number of seconds"),
        ({"max_retries": 101}, "`max_retries` must be an integer from 0 to 100"),
        ({"max_retries": True}, "`max_retries` must be an integer from 0 to 100"),
        ({"max_retries": 2.0}, "`max_retries` must be an integer from 0 to 100"),
        ({"max_concurrency": True}, "`max_concurrency` must be an integer >= 1"),
        ({"max_concurrency": 1.5}, "`max_concurrency` must be an integer >= 1"),
        ({"temperature": math.inf}, "`temperature` must be a finite number"),
        ({"temperature": 10**400}, "`temperature` must be a finite number"),
        ({"temperature": "0"}, "`temperature` must be a finite number"),
        ({"seed": True}, "`seed` must be an integer"),
        ({"seed": 2**63}, "`seed` must be an integer"),
        ({"max_tokens": True}, "`max_tokens` must be a positive integer"),
        ({"max_tokens": 2.0}, "`max_tokens` must be a positive integer"),
        ({"criteria": {"score": 1}}, "`criteria` must be a sequence of names"),
        ({"criteria": {"score"}}, "`criteria` must be a sequence of names"),
        ({"criteria": b"score"}, "`criteria` must be a sequence of names"),
        ({"criteria": [""]}, "`criteria` must be non-empty strings"),
        ({"criteria": [1]}, "`criteria` must be non-empty strings"),
        ({"score_range": 5, "scale": "json"}, "`score_range` must be two finite numbers"),
        ({"score_range": (1, 2, 3), "scale": "json"}, "`score_range` must be two finite numbers"),
        ({"score_range": "ab", "scale": "json"}, "`score_range` must be two finite numbers"),
        ({"score_range": (0, math.inf), "scale": "json"}, "`score_range` must be two finite"),
        ({"score_range": (1, 1), "scale": "json"}, "`score_range` must be two finite numbers"),
        ({"score_range": (False, True), "scale": "json"}, "`score_range` must be two finite"),
        ({"score_range": (-1e308, 1e308), "scale": "json"}, "`score_range` must be two finite"),
        ({"scale": ["binary"]}, "`scale` must be one of"),
        ({"scale": None}, "`scale` must be one of"),
        ({"prompt": None}, "`prompt` must be a non-empty Jinja2 template string"),
        ({"prompt": 3}, "`prompt` must be a non-empty Jinja2 template string"),
        ({"prompt": "{{ item.question }} \ud83d"}, "`prompt` holds a lone UTF-16 surrogate"),
        ({"system_prompt": b"x"}, "`system_prompt` must be a template string or None"),
        ({"api_key": 3}, "`api_key` must be a string or None"),
    ],
)
def test_more_invalid_settings_are_refused_naming_the_argument(
    settings: dict[str, Any], message: str
) -> None:
    values = BASE | settings
    with pytest.raises(ValueError, match=re.escape(message)):
        LLMJudge(values.pop("name", "j"), **values)


def test_settings_at_their_bounds_are_accepted() -> None:
    judge = LLMJudge(
        "j",
        **BASE,  # type: ignore[arg-type]
        timeout=3600,
        backoff=1e-9,
        max_retries=100,
        max_concurrency=1,
        seed=-(2**63),
        max_tokens=2**63 - 1,
        scale="json",
        criteria=["a", "b"],
        score_range=[-5, 5],  # type: ignore[arg-type]
    )
    assert judge.criteria == ("a", "b")
    assert judge.identity["score_range"] == [-5.0, 5.0]

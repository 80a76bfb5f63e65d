"""``kagreport evaluate`` keeps what it was given: inputs, keys, text and judgements.

Issue #10, items 11-14: paths that are one file (the cache and the report), lone UTF-16
surrogates in item text, API keys from the environment, and Ctrl-C/SIGTERM in the middle
of a run. Every test drives the real command against the HTTP stub (tests/chat_stub.py).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from chat_stub import ChatStub, Reply
from conftest import Done, run_cli
from kagreport.evaluation import AnswerEvaluation, AnswerItem, TextRepairWarning

PROMPT = "[item {{ item.identifier }}] Q: {{ item.question }} A: {{ item.answer }}"


def _llm_judges(path: Path, url: str, extra: str = "") -> Path:
    path.write_text(
        "[[judges]]\n"
        'kind = "llm"\n'
        'name = "j"\n'
        'model = "m"\n'
        f'base_url = "{url}"\n'
        f"prompt = {json.dumps(PROMPT)}\n"
        "max_retries = 0\n" + extra
    )
    return path


def _write_items(path: Path, count: int, answer: str = "Paris") -> Path:
    with open(path, "w", encoding="utf-8") as file:
        for index in range(count):
            row = {"identifier": f"q{index}", "question": "Capital?", "answer": answer}
            file.write(json.dumps(row) + "\n")
    return path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return env | extra


def _run(*args: str, env: dict[str, str] | None = None) -> Done:
    # In this process, under exactly ``env`` (os.environ is restored afterwards).
    with mock.patch.dict(os.environ, env if env is not None else _env(), clear=True):
        return run_cli("evaluate", *args)


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as server:
        yield server


# -- 13: an output that is an input -----------------------------------------------------


def test_cache_and_output_one_file_is_refused_before_any_request(
    tmp_path: Path, stub: ChatStub
) -> None:
    # Before the fix the first run judged, created the cache, then replaced it by the report.
    judges = _llm_judges(tmp_path / "judges.toml", stub.url)
    items = _write_items(tmp_path / "items.jsonl", 2)
    out = tmp_path / "out.json"
    done = _run("--items", str(items), "--judges", str(judges), "--cache", str(out), "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert "would replace the judge cache" in done.stderr
    assert "Traceback" not in done.stderr
    assert stub.requests() == 0
    assert not out.exists()


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dotted"])
def test_inputs_and_output_one_file_in_any_spelling(tmp_path: Path, kind: str) -> None:
    (tmp_path / "judges.toml").write_text('[[judges]]\nkind = "exact_match"\n')
    items = _write_items(tmp_path / "items.json", 2)  # a .json name: a valid report suffix
    judges = tmp_path / "judges.toml"
    before = items.read_bytes(), judges.read_bytes()
    if kind == "symlink":
        (tmp_path / "alias.json").symlink_to(items)
        out = tmp_path / "alias.json"
    elif kind == "hardlink":
        os.link(items, tmp_path / "alias.json")
        out = tmp_path / "alias.json"
    else:
        out = tmp_path / "sub" / ".." / "items.json"
        (tmp_path / "sub").mkdir()
    done = _run("--items", str(items), "--judges", str(judges), "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert "would replace the input" in done.stderr
    # Judges file as the output, and the cache as an input, with a .toml name.
    as_judges = _run("--items", str(items), "--judges", str(judges), "-o", str(judges))
    assert as_judges.returncode == 2
    assert "would replace the input" in as_judges.stderr
    cache_is_items = _run("--items", str(items), "--judges", str(judges), "--cache", str(items),
                          "-o", str(tmp_path / "r.json"))  # fmt: skip
    assert cache_is_items.returncode == 2
    assert "judge cache" in cache_is_items.stderr
    assert "would replace the input" in cache_is_items.stderr
    assert (items.read_bytes(), judges.read_bytes()) == before


def test_prompt_file_as_output_is_refused(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.toml"  # an odd name, but a report suffix
    prompt.write_text(PROMPT)
    judges = tmp_path / "judges.toml"
    judges.write_text(
        '[[judges]]\nkind = "llm"\nname = "p"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'prompt_file = "prompt.toml"\n'
    )
    items = _write_items(tmp_path / "items.jsonl", 1)
    done = _run("--items", str(items), "--judges", str(judges), "-o", str(prompt))
    assert done.returncode == 2, done.stderr
    assert f"would replace the input {prompt}" in done.stderr
    assert prompt.read_text() == PROMPT


def test_output_inside_a_question_folder_is_refused(tmp_path: Path) -> None:
    from kagreport.kag import simulate_run

    run = simulate_run(tmp_path / "sim", questions=2, datasets=1)
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "option_extraction"\n')
    question = next(p for p in Path(run.results_path).glob("*/*") if p.is_dir())
    done = _run("-d", str(run.datasets_path), "-r", str(run.results_path), "--setup", "kag-small",
                "--questions", "mcq", "--judges", str(tmp_path / "j.toml"),
                "-o", str(question / "report.json"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "inside a question folder of the results tree" in done.stderr
    assert not (question / "report.json").exists()


# -- 14: lone surrogates in item text -----------------------------------------------------


def test_lone_surrogate_in_an_answer_is_repaired_and_the_report_written(
    tmp_path: Path, stub: ChatStub
) -> None:
    # "Paris \ud83d" is valid JSON (half of an emoji); before the fix the item was judged,
    # then writing the report failed and the judgement was lost.
    judges = _llm_judges(tmp_path / "judges.toml", stub.url)
    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"identifier": "q1", "question": "Capital?", "answer": "Paris \\ud83d"}\n'
        '{"identifier": "q2", "question": "Capital?", "answer": "Rome",'
        ' "metadata": {"context": "x \\udc00"}}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    done = _run("--items", str(items), "--judges", str(judges), "--cache",
                str(tmp_path / "c.sqlite"), "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "item 'q1': lone UTF-16 surrogates in answer replaced by U+FFFD" in done.stderr
    assert "item 'q2': lone UTF-16 surrogates in metadata replaced" in done.stderr
    report = AnswerEvaluation.read(out)
    answers = {item.identifier: item for item in report.items}
    assert answers["q1"].answer == "Paris \ufffd"
    assert answers["q2"].metadata["context"] == "x \ufffd"
    assert report.errors["j"] == 0
    assert stub.requests() == 2  # each judged once, and kept


def test_undecodable_file_name_or_name_does_not_lose_the_report(tmp_path: Path) -> None:
    # The report's name comes from the items file name (or --name): bytes that are not
    # UTF-8 arrive as surrogate escapes, which made the report unwritable after judging.
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "regex"\npattern = "."\n')
    items = _write_items(Path(os.fsdecode(os.fsencode(tmp_path) + b"/x\xff.jsonl")), 1)
    done = _run("--items", str(items), "--judges", str(tmp_path / "j.toml"),
                "-o", str(tmp_path / "a.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert AnswerEvaluation.read(tmp_path / "a.json").metadata == {"name": "x\ufffd"}
    named = _run("--items", str(items), "--judges", str(tmp_path / "j.toml"),
                 "--name", os.fsdecode(b"sys\xfe"), "-o", str(tmp_path / "b.json"))  # fmt: skip
    assert named.returncode == 0, named.stderr
    assert AnswerEvaluation.read(tmp_path / "b.json").metadata == {"name": "sys\ufffd"}


def test_many_repaired_items_are_named_up_to_five(tmp_path: Path) -> None:
    (tmp_path / "j.toml").write_text('[[judges]]\nkind = "regex"\npattern = "."\n')
    items = _write_items(tmp_path / "items.jsonl", 7, answer="cut \ud83d")
    done = _run("--items", str(items), "--judges", str(tmp_path / "j.toml"),
                "-o", str(tmp_path / "a.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    named = re.findall(r"warning: item '(q\d)': lone UTF-16 surrogate", done.stderr)
    assert named == ["q0", "q1", "q2", "q3", "q4"]
    assert "... and 2 more items like these" in done.stderr


def test_answer_item_repairs_every_text_field() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        item = AnswerItem(
            identifier="a\ud83d",
            question="q\udfff",
            answer="ok",
            reference="r\ud800",
            verdicts={"j": ["v\ud83d"]},
            error="e\udc00",
            metadata={"k\ud83d": {"nested": ("t\ud83d",)}},
        )
    assert [type(w.message) for w in caught] == [TextRepairWarning]
    assert "item 'a\\ud83d'" in str(caught[0].message)
    for name in ("identifier", "question", "reference", "verdicts", "error", "metadata"):
        assert name in str(caught[0].message)
    # Now every field encodes as UTF-8.
    json.dumps(item.to_dict(), ensure_ascii=False).encode("utf-8")
    assert item.metadata == {"k\ufffd": {"nested": ("t\ufffd",)}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # valid text: no warning, objects kept as they are
        context = {"c": "emoji \U0001f600"}
        assert AnswerItem("q", "Q", "A", metadata=context).metadata == context


# -- 12: API keys go only where the user sent them ---------------------------------------

# Everything the openai package reads from the environment, each holding a "secret".
SDK_ENVIRONMENT = {
    "OPENAI_API_KEY": "sk-secret",
    "OPENAI_ADMIN_KEY": "sk-admin-secret",
    "OPENAI_ORG_ID": "org-secret",
    "OPENAI_PROJECT_ID": "proj-secret",
    "OPENAI_CUSTOM_HEADERS": "Authorization: Bearer sk-custom-secret\nX-Team: team-secret",
}


def _headers_seen(stub: ChatStub) -> str:
    return json.dumps([headers for _, headers in stub.arrivals()])


def test_environment_keys_never_reach_another_server(
    stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kagreport.evaluation.judges import LLMJudge

    for name, value in SDK_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    item = AnswerItem("q1", "Q", "A")
    with LLMJudge("j", model="m", base_url=stub.url, prompt=PROMPT) as judge:
        assert judge.judge(item).scores == {"score": 1.0}
    with LLMJudge("k", model="m", base_url=stub.url, prompt=PROMPT, api_key="sk-mine") as given:
        given.judge(item)
    seen = [headers for _, headers in stub.arrivals()]
    assert [h["authorization"] for h in seen] == ["Bearer not-needed", "Bearer sk-mine"]
    assert "secret" not in _headers_seen(stub)


def test_a_redirect_to_another_server_carries_no_key(
    stub: ChatStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kagreport.evaluation.judges import LLMJudge

    for name, value in SDK_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    with ChatStub() as elsewhere:
        location = f"{elsewhere.url}/chat/completions"
        stub.default = Reply(status=307, headers={"Location": location}, body=b"{}")
        with LLMJudge("j", model="m", base_url=stub.url, prompt=PROMPT, api_key="sk-mine") as judge:
            assert judge.judge(AnswerItem("q1", "Q", "A")).scores == {"score": 1.0}
        assert [h["authorization"] for _, h in stub.arrivals()] == ["Bearer sk-mine"]
        assert elsewhere.requests() == 1
        seen = _headers_seen(elsewhere)
        assert "authorization" not in seen
        assert "secret" not in seen


@pytest.mark.parametrize(
    ("url", "official"),
    [
        ("https://api.openai.com/v1", True),
        ("https://API.OpenAI.com./v1/", True),
        ("https://api.openai.com:443/v1", True),
        ("http://api.openai.com/v1", False),  # the key would cross the network in clear
        ("https://api.openai.com:8443/v1", False),
        ("https://api.openai.com.example.org/v1", False),
        ("https://example.org/v1?host=api.openai.com", False),
        ("http://127.0.0.1:8000/v1", False),
    ],
)
def test_only_openai_itself_gets_the_environment_key(
    url: str, official: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kagreport.evaluation.judges import LLMJudge

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    with LLMJudge("j", model="m", base_url=url, prompt=PROMPT) as judge:
        client = judge._get_client()  # built offline: no request is made
        assert (client.api_key == "sk-secret") is official
        assert "sk-secret" not in json.dumps(judge.identity) + repr(judge)


def test_cli_sends_a_key_only_when_the_judge_names_its_variable(
    tmp_path: Path, stub: ChatStub
) -> None:
    items = _write_items(tmp_path / "items.jsonl", 2)
    env = _env(**SDK_ENVIRONMENT, MY_KEY="sk-mine")
    plain = _llm_judges(tmp_path / "plain.toml", stub.url)
    first = _run("-vvvv", "--items", str(items), "--judges", str(plain), "--cache",
                 str(tmp_path / "c.sqlite"), "-o", str(tmp_path / "a.json"), env=env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert stub.requests() == 2
    assert "secret" not in _headers_seen(stub)
    assert {h["authorization"] for _, h in stub.arrivals()} == {"Bearer not-needed"}
    stub.reset()
    named = _llm_judges(tmp_path / "named.toml", stub.url, 'api_key_env = "MY_KEY"\n')
    second = _run("-vvvv", "--items", str(items), "--judges", str(named),
                  "-o", str(tmp_path / "b.yaml"), env=env)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert {h["authorization"] for _, h in stub.arrivals()} == {"Bearer sk-mine"}
    # The key named on purpose is sent, and written nowhere: not in a report, the cache,
    # the logs (-vvvv) or an error message.
    stub.script("q0", Reply(status=401, body=b'{"error": {"message": "bad key"}}'))
    third = _run("-vvvv", "--items", str(items), "--judges", str(named), "--keep-verdicts",
                 "--cache", str(tmp_path / "d.sqlite"), "-o", str(tmp_path / "c.toml"),
                 env=env)  # fmt: skip
    assert third.returncode == 0, third.stderr
    assert "HTTP 401" in third.stderr
    written = b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.is_file())
    for done in (first, second, third):
        written += (done.stdout + done.stderr).encode()
    assert b"secret" not in written
    assert b"sk-mine" not in written


# -- 11: Ctrl-C and SIGTERM ------------------------------------------------------------

CONCURRENCY = 4  # the judge's own limit of requests in flight


def _cached(cache: Path) -> int:
    with sqlite3.connect(cache) as connection:
        return int(connection.execute("SELECT count(*) FROM responses").fetchone()[0])


def _interrupt(
    tmp_path: Path, stub: ChatStub, signum: int, after: int, items: int = 60, cache: bool = True
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Start evaluate, send ``signum`` once the stub has ``after`` requests; return the
    finished process (which had 15 s to exit) and the cache arguments."""
    judges = _llm_judges(tmp_path / "judges.toml", stub.url, f"max_concurrency = {CONCURRENCY}\n")
    path = _write_items(tmp_path / "items.jsonl", items)
    extra = ["--cache", str(tmp_path / "c.sqlite")] if cache else []
    command = [sys.executable, "-m", "kagreport", "evaluate", "--items", str(path), "--judges",
               str(judges), "-o", str(tmp_path / "out.json"), *extra]  # fmt: skip
    process = subprocess.Popen(
        command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while stub.requests() < after and process.poll() is None:  # poll the stub, no sleep
            assert time.monotonic() < deadline, "the stub never saw the requests"
            time.sleep(0.005)
        if process.poll() is not None:  # it ended before the signal: say why
            out, err = process.communicate()
            raise AssertionError(f"evaluate ended before the signal ({process.returncode}): {err}")
        sent = time.monotonic()
        os.killpg(process.pid, signum)
        out, err = process.communicate(timeout=15)  # exits within 15 s
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    took = time.monotonic() - sent
    # Requests that arrived after the signal (measured with the shared monotonic clock).
    late = [moment for moment, _ in stub.arrivals() if moment > sent]
    print(f"signal {signum}: exited after {took:.2f} s; {len(late)} request(s) after it")
    # A reply may free a slot before the main thread has run the handler: a few at most.
    assert len(late) <= CONCURRENCY, late
    done = subprocess.CompletedProcess(command, process.returncode, out, err)
    return done, extra


@pytest.mark.signals
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_requests_and_the_cache_resumes(
    tmp_path: Path, signum: int, code: int
) -> None:
    # Before the fix, every remaining request was sent after the signal (the thread pool
    # drained its queue), then the command exited without a word about the cache.
    with ChatStub(latency=0.3) as stub:
        done, extra = _interrupt(tmp_path, stub, signum, after=8, items=30)
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        match = re.fullmatch(
            r"kagreport: interrupted: (\d+) of 30 items judged; no report written; the "
            r"judgements received are in the cache (.+): rerun the same command to resume, "
            r"they cost nothing again",
            lines[0],
        )
        assert match is not None, lines[0]
        judged, cache = int(match[1]), Path(match[2])
        assert cache == tmp_path / "c.sqlite"
        assert not (tmp_path / "out.json").exists()  # nothing half-written
        received = stub.requests()
        # Every judgement counted is in the cache; a reply that came in while the
        # process was exiting may be there too, but no more than what the stub sent.
        assert judged <= _cached(cache) <= received
        assert received <= 8 + 2 * CONCURRENCY  # up to 3 more seen late by the poll, 4 late
        kept = _cached(cache)
        stub.reset()
        stub.latency = 0.0
        rerun = _run("--items", str(tmp_path / "items.jsonl"), "--judges",
                     str(tmp_path / "judges.toml"), "-o", str(tmp_path / "out.json"),
                     *extra)  # fmt: skip
        assert rerun.returncode == 0, rerun.stderr
        assert stub.requests() == 30 - kept  # the rest, and only the rest
        report = AnswerEvaluation.read(tmp_path / "out.json")
        assert report.usage["j"]["cached_responses"] == kept


@pytest.mark.signals
def test_signals_at_random_moments(tmp_path: Path) -> None:
    chooser = random.Random(11)
    with ChatStub(latency=0.2) as stub:
        for attempt in range(4):
            stub.reset()
            folder = tmp_path / str(attempt)
            folder.mkdir()
            signum = chooser.choice([signal.SIGINT, signal.SIGTERM])
            after = chooser.randint(1, 12)
            cache = attempt > 0
            done, _ = _interrupt(folder, stub, signum, after=after, items=40, cache=cache)
            assert done.returncode == 128 + signum, done.stderr
            assert "Traceback" not in done.stderr
            match = re.search(
                r"interrupted: (\d+) of 40 items judged; no report written", done.stderr
            )
            assert match is not None, done.stderr
            if cache:
                assert int(match[1]) <= _cached(folder / "c.sqlite") <= stub.requests()
            else:
                assert "nothing is kept without --cache" in done.stderr


def test_an_interrupted_library_call_sends_no_retry(stub: ChatStub) -> None:
    # A judge waiting to retry (a 503, back-off 30 s) sends nothing after the interruption,
    # and its thread ends at once instead of sleeping out the back-off.
    import _thread
    import threading

    from kagreport.evaluation import evaluate_answers
    from kagreport.evaluation.judges import LLMJudge

    stub.default = Reply(status=503, body=b'{"error": {"message": "busy"}}')
    judge = LLMJudge("j", model="m", base_url=stub.url, prompt=PROMPT, backoff=30, max_retries=5)
    items = [AnswerItem(f"q{n}", "Q", "A") for n in range(3)]

    def interrupt_when_all_asked() -> None:
        deadline = time.monotonic() + 30
        while stub.requests() < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_when_all_asked, daemon=True).start()
    with pytest.raises(KeyboardInterrupt) as caught:
        evaluate_answers(items, [judge], max_concurrency=3)
    assert caught.value.evaluation_progress == (0, 3)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 15
    while any(t.name.startswith("kagreport-judge") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "a judging thread is still waiting"
        time.sleep(0.01)
    assert stub.requests() == 3  # no retry went out
    judge.close()


def test_a_key_in_the_base_url_is_refused_without_repeating_it(tmp_path: Path) -> None:
    # The base URL is part of the judge's identity, written in every report.
    judges = _llm_judges(tmp_path / "judges.toml", "http://user:sk-secret@127.0.0.1:9/v1")
    items = _write_items(tmp_path / "items.jsonl", 1)
    done = _run("--items", str(items), "--judges", str(judges), "-o", str(tmp_path / "r.json"))
    assert done.returncode == 1
    assert "`base_url` must not hold credentials" in done.stderr
    assert "sk-secret" not in done.stderr
    assert not (tmp_path / "r.json").exists()

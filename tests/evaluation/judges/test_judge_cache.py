"""The SQLite judge cache: storage, locking, errors, and PITFALLS.md B9 (errors never
cached, the system prompt in the key, concurrent writer processes)."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from chat_stub import ChatStub, error_body, ok, status
from kagreport import KagreportError
from kagreport.evaluation import AnswerItem
from kagreport.evaluation.judges import JudgeFailure, LLMJudge, Usage
from kagreport.evaluation.judges._cache import CachedResponse, JudgeCache

PROMPT = "[item {{ item.identifier }}] Question: {{ item.question }}\nAnswer: {{ item.answer }}"
T1_SYSTEM = "You are a strict grader. End with 'Verdict: correct' or 'Verdict: incorrect'."
T2_SYSTEM = "You are a lenient grader. End with 'Verdict: correct' or 'Verdict: incorrect'."


@pytest.fixture
def stub() -> Iterator[ChatStub]:
    with ChatStub() as server:
        yield server


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "judge.sqlite"


def make_item(identifier: str) -> AnswerItem:
    return AnswerItem(identifier=identifier, question=f"Q {identifier}?", answer="A")


# -- storage --------------------------------------------------------------------------------


def test_put_get_len_clear_and_persistence(cache_path: Path) -> None:
    before = time.time()
    with JudgeCache(cache_path) as cache:  # the folder is created
        assert len(cache) == 0
        assert cache.get("k1") is None
        cache.put("k1", "Verdict: yes", 12, 3)
        cache.put("k2", "Verdict: no", None, None)  # a response without usage
        assert len(cache) == 2
        hit = cache.get("k1")
    assert hit is not None
    assert (hit.text, hit.input_tokens, hit.output_tokens) == ("Verdict: yes", 12, 3)
    assert before <= hit.created <= time.time()

    with JudgeCache(cache_path) as reopened:  # persistent
        assert len(reopened) == 2
        second = reopened.get("k2")
        assert second == CachedResponse("Verdict: no", None, None, created=second.created)  # type: ignore[union-attr]
        reopened.put("k1", "Verdict: maybe", 1, 1)  # a put replaces
        replaced = reopened.get("k1")
        assert replaced is not None
        assert replaced.text == "Verdict: maybe"
        reopened.clear()
        assert len(reopened) == 0
    assert cache_path.exists()


def test_close_then_use_reopens(cache_path: Path) -> None:
    cache = JudgeCache(cache_path)
    cache.put("k", "t", 1, 2)
    cache.close()
    cache.close()  # twice is fine
    assert cache.get("k") is not None
    cache.close()


def test_the_journal_is_wal(cache_path: Path) -> None:
    JudgeCache(cache_path).close()
    with sqlite3.connect(cache_path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1
    connection.close()


def test_memory_cache() -> None:
    with JudgeCache(":memory:") as cache:
        cache.put("k", "t", 1, 2)
        assert len(cache) == 1


def test_a_cache_pickles_as_its_path(cache_path: Path) -> None:
    with JudgeCache(cache_path) as cache:
        cache.put("k", "t", 1, 2)
        copy = pickle.loads(pickle.dumps(cache))
    assert copy.path == str(cache_path)
    assert copy.get("k") is not None
    copy.close()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.put("", "t", 1, 1), "`key` must be a non-empty string"),
        (lambda c: c.put("k", None, 1, 1), "`text` must be a string"),
        (lambda c: c.put("k", "t", -1, 1), "`input_tokens` must be a non-negative integer"),
        (lambda c: c.put("k", "t", 1, 2.5), "`output_tokens` must be a non-negative integer"),
        (lambda c: c.put("k", "t", True, 1), "`input_tokens` must be a non-negative integer"),
    ],
)
def test_bad_puts_are_refused(call: Any, message: str) -> None:
    with JudgeCache(":memory:") as cache, pytest.raises(ValueError, match=message):
        call(cache)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("",), "`path` must name a file"),
        ((":memory:",), None),
    ],
)
def test_path_validation(args: tuple[str], message: str | None) -> None:
    if message is None:
        JudgeCache(*args).close()
        return
    with pytest.raises(ValueError, match=message):
        JudgeCache(*args)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), True])
def test_timeout_validation(timeout: Any) -> None:
    with pytest.raises(ValueError, match="`timeout` must be a positive number of seconds"):
        JudgeCache(":memory:", timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connection(cache_path: Path) -> None:
    cache = JudgeCache(cache_path)
    cache.put("parent-1", "t", 1, 1)
    pid = os.fork()
    if pid == 0:  # the child: must not reuse (or close) the parent's connection
        code = 1
        try:
            cache.put("child", "t", 1, 1)
            cache.close()
            code = 0
        finally:
            os._exit(code)
    _, exit_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(exit_status) == 0
    cache.put("parent-2", "t", 1, 1)  # the parent's connection still works
    assert len(cache) == 3
    cache.close()


# -- errors opening the file ----------------------------------------------------------------


def test_a_folder_is_not_a_cache(tmp_path: Path) -> None:
    with pytest.raises(KagreportError, match="cannot open the judge cache") as caught:
        JudgeCache(tmp_path)
    assert caught.value.path == str(tmp_path)


def test_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are not the bytes you are looking for\n" * 100)
    with pytest.raises(
        KagreportError, match=r"cannot open the judge cache .*not a database"
    ) as caught:
        JudgeCache(path)
    assert caught.value.path == str(path)


def test_another_programs_database_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (name TEXT)")
    connection.close()
    with pytest.raises(KagreportError, match=r"not a kagreport judge cache .*users"):
        JudgeCache(path)


def test_an_unknown_schema_version_is_refused(cache_path: Path) -> None:
    JudgeCache(cache_path).close()
    with sqlite3.connect(cache_path) as connection:
        connection.execute("PRAGMA user_version = 7")
    connection.close()
    with pytest.raises(KagreportError, match="schema version 7; this kagreport reads version 1"):
        JudgeCache(cache_path)


def test_a_file_under_a_file_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(KagreportError, match="cannot create the folder") as caught:
        JudgeCache(tmp_path / "plain" / "judge.sqlite")
    assert caught.value.path == str(tmp_path / "plain" / "judge.sqlite")


# -- locking --------------------------------------------------------------------------------


def hold_write_lock(path: Path, held: threading.Event, release: threading.Event) -> None:
    """Hold SQLite's write lock on ``path`` from ``held`` until ``release`` is set."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    held.set()
    release.wait()
    connection.execute("COMMIT")
    connection.close()


def test_a_writer_waits_for_another_writer(cache_path: Path) -> None:
    cache = JudgeCache(cache_path)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(cache_path, held, release))
    holder.start()
    assert held.wait(30), "the lock holder never took the lock"
    threading.Timer(0.25, release.set).start()
    cache.put("k", "t", 1, 1)  # waits for the lock instead of failing
    # The put can only have been written after the holder let go (no clock involved).
    assert release.is_set()
    holder.join()
    assert len(cache) == 1
    cache.close()


def test_a_lock_held_past_the_timeout_is_a_clear_error(cache_path: Path) -> None:
    cache = JudgeCache(cache_path, timeout=0.1)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(cache_path, held, release))
    holder.start()
    assert held.wait(30), "the lock holder never took the lock"
    try:
        with pytest.raises(
            KagreportError, match=r"cannot write the judge cache .* after waiting 0.1 s"
        ):
            cache.put("k", "t", 1, 1)
    finally:
        release.set()
    holder.join()
    cache.close()


def test_threads_and_two_instances_share_one_file(cache_path: Path) -> None:
    first, second = JudgeCache(cache_path), JudgeCache(cache_path)

    def fill(worker: int) -> None:
        cache = first if worker % 2 else second
        for index in range(50):
            cache.put(f"{worker}-{index}", "Verdict: yes", index, 1)
            assert cache.get(f"{worker}-{index}") is not None

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(fill, range(8)))
    assert len(first) == len(second) == 400
    first.close()
    second.close()


# -- PITFALLS.md B9 -------------------------------------------------------------------------


def b9_judge(stub: ChatStub, cache: JudgeCache | Path, system_prompt: str = T1_SYSTEM) -> LLMJudge:
    return LLMJudge(
        "j",
        model="stub-model",
        base_url=stub.url,
        prompt=PROMPT,
        system_prompt=system_prompt,
        backoff=0.01,
        timeout=5,
        cache=cache,
    )


def judge_items(judge: LLMJudge, identifiers: list[str]) -> tuple[Usage, int]:
    """Judge each item as the evaluation does: summed usage and the number of failures."""
    total, errors = Usage(), 0
    for identifier in identifiers:
        try:
            total.add(judge.judge(make_item(identifier)).usage)
        except JudgeFailure as failure:
            total.add(failure.usage)
            errors += 1
    return total, errors


def test_b9_errors_are_never_cached_and_the_system_prompt_is_in_the_key(
    stub: ChatStub, cache_path: Path
) -> None:
    stub.script("q1", ok("Verdict: correct", prompt_tokens=10, completion_tokens=2))
    # q2: HTTP 200 with an error body and no choices the first time, a normal reply later.
    stub.script(
        "q2",
        error_body("rate limit exceeded"),
        ok("Verdict: incorrect", prompt_tokens=11, completion_tokens=3),
    )
    # q3: HTTP 503 once, then a normal reply.
    stub.script("q3", status(503), ok("Verdict: correct", prompt_tokens=12, completion_tokens=4))
    items = ["q1", "q2", "q3"]

    # Run 1: q2 fails; q3 succeeds after a retry; 2 entries cached, no error among them.
    with JudgeCache(cache_path) as cache:
        judge = b9_judge(stub, cache)
        usage, errors = judge_items(judge, items)
        assert errors == 1
        assert stub.requests("q2") == 1
        assert stub.requests("q3") == 2
        assert len(cache) == 2
        assert cache.get(judge.cache_key(make_item("q2"))) is None
        for identifier in ("q1", "q3"):
            hit = cache.get(judge.cache_key(make_item(identifier)))
            assert hit is not None
            assert hit.text == "Verdict: correct"
    # The 200 error body is not a model response (see _llm's docstring): 2 responses.
    assert usage == Usage(responses=2, input_tokens=10 + 12, output_tokens=2 + 4)

    # Run 2: identical settings, a new judge and a reopened file: exactly 1 request (q2).
    stub.reset()
    judge = b9_judge(stub, cache_path)
    usage, errors = judge_items(judge, items)
    judge.close()
    assert errors == 0
    assert stub.requests() == 1
    assert stub.requests("q2") == 1
    assert usage == Usage(responses=3, cached_responses=2, input_tokens=11, output_tokens=3)

    # Run 3: only the system line changed: the prompt hash is in the key, 3 requests.
    stub.reset()
    judge = b9_judge(stub, cache_path, system_prompt=T2_SYSTEM)
    usage, errors = judge_items(judge, items)
    judge.close()
    assert stub.requests() == 3
    assert usage.cached_responses == 0
    assert usage.responses == 3
    with JudgeCache(cache_path) as cache:
        assert len(cache) == 6


WORKER = """
import json, sys
from concurrent.futures import ThreadPoolExecutor

import openai  # imported before the start signal, so both processes start together

from kagreport.evaluation import AnswerItem
from kagreport.evaluation.judges._protocol import JudgeFailure, Usage
from kagreport.evaluation.judges._llm import LLMJudge

url, path, prompt, system, first, last = sys.argv[1:7]
judge = LLMJudge("j", model="stub-model", base_url=url, prompt=prompt, system_prompt=system,
                 cache=path, max_concurrency=8, timeout=10, backoff=0.01)
items = [AnswerItem(identifier=f"q{i}", question=f"Q q{i}?", answer="A")
         for i in range(int(first), int(last) + 1)]
print("ready", flush=True)
sys.stdin.readline()

def run(item):
    try:
        return judge.judge(item).usage, None
    except JudgeFailure as failure:
        return failure.usage, str(failure)

total, errors = Usage(), []
with ThreadPoolExecutor(max_workers=8) as pool:
    for usage, error in pool.map(run, items):
        total.add(usage)
        if error is not None:
            errors.append(error)
judge.close()
print(json.dumps({"usage": total.to_dict(), "errors": errors}), flush=True)
"""


@pytest.mark.slow
def test_b9_two_processes_share_one_cache_file(cache_path: Path) -> None:
    # 50 ms a reply: each process needs >= 0.3 s, so the two runs overlap even on a busy host.
    with ChatStub(latency=0.1) as stub:
        ranges = [("1", "50"), ("51", "100")]
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, stub.url, str(cache_path), PROMPT, T1_SYSTEM, *r],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for r in ranges
        ]
        try:
            for worker in workers:  # both ready: imports done, cache opened
                assert worker.stdout is not None
                assert worker.stdout.readline().strip() == "ready"
            for worker in workers:  # go
                assert worker.stdin is not None
                worker.stdin.write("go\n")
                worker.stdin.flush()
            results = [worker.communicate(timeout=60) for worker in workers]
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait()

        for worker, (out, err) in zip(workers, results, strict=True):
            assert worker.returncode == 0, err
            assert "locked" not in err.lower()
            report = json.loads(out)
            assert report["errors"] == []
            assert report["usage"]["responses"] == 50
            assert report["usage"]["cached_responses"] == 0
        assert stub.requests() == 100
        # The two processes really ran at the same time.
        log = stub.log
        low = [e.started for e in log if int(e.item[1:]) <= 50]  # type: ignore[index]
        high = [e.started for e in log if int(e.item[1:]) > 50]  # type: ignore[index]
        assert min(low) < max(high)
        assert min(high) < max(low)

        with JudgeCache(cache_path) as cache:
            assert len(cache) == 100

        # A rerun makes no request at all.
        stub.reset()
        judge = b9_judge(stub, cache_path)
        usage, errors = judge_items(judge, [f"q{i}" for i in range(1, 101)])
        judge.close()
        assert errors == 0
        assert stub.requests() == 0
        assert usage == Usage(responses=100, cached_responses=100)


def test_an_unusable_cache_at_run_time_costs_a_request_not_the_item(
    stub: ChatStub, cache_path: Path
) -> None:
    cache = JudgeCache(cache_path, timeout=0.1)
    judge = b9_judge(stub, cache)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=hold_write_lock, args=(cache_path, held, release))
    holder.start()
    assert held.wait(30), "the lock holder never took the lock"
    try:
        judgement = judge.judge(make_item("q1"))  # the put times out: logged, not raised
    finally:
        release.set()  # held for as long as the judge takes, however loaded the machine
    holder.join()
    assert judgement.scores == {"score": 1.0}
    assert len(cache) == 0
    cache.close()


def test_b9_rerun_through_evaluate_answers_makes_no_request(
    stub: ChatStub, cache_path: Path
) -> None:
    from kagreport.evaluation import evaluate_answers

    judge = b9_judge(stub, cache_path.parent / "unused.sqlite").with_cache(None)
    items = [make_item(f"q{i}") for i in range(1, 6)]
    first = evaluate_answers(items, [judge], cache=str(cache_path))
    assert stub.requests() == 5
    assert first.usage["j"]["responses"] == 5
    assert first.usage["j"]["cached_responses"] == 0
    stub.reset()
    second = evaluate_answers(items, [judge], cache=JudgeCache(cache_path))
    assert stub.requests() == 0
    assert second.usage["j"] == {
        "responses": 5,
        "cached_responses": 5,
        "input_tokens": 0,
        "output_tokens": 0,
        "responses_without_token_counts": 0,
    }
    assert second.metrics == first.metrics


# -- foreign, damaged and unusable files (one clear error, nothing written) -----------------


def file_state(path: Path) -> tuple[bytes, list[str]]:
    """The file's bytes and the names beside it (a -wal or -shm would be a write)."""
    return path.read_bytes(), sorted(p.name for p in path.parent.iterdir())


@pytest.mark.parametrize("version", [0, 1])
def test_a_foreign_responses_table_is_refused_and_left_alone(tmp_path: Path, version: int) -> None:
    path = tmp_path / "app.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE responses (id INTEGER PRIMARY KEY, body TEXT)")
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()
    before = file_state(path)
    with pytest.raises(KagreportError, match=r"not a kagreport judge cache .*responses") as caught:
        JudgeCache(path)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value)
    assert file_state(path) == before  # not stamped, not switched to WAL


def test_a_cache_without_its_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 1")
    connection.close()
    with pytest.raises(KagreportError, match="not a kagreport judge cache"):
        JudgeCache(path)


def test_a_cache_with_damaged_pages_is_refused_when_opened(cache_path: Path) -> None:
    with JudgeCache(cache_path) as cache:
        for index in range(40):
            cache.put(f"k{index}", "Verdict: yes " * 20, 1, 1)
    with cache_path.open("r+b") as file:  # page 2, the table's root, past its header
        file.seek(4096 + 8)
        file.write(b"\xff" * 64)
    with pytest.raises(KagreportError, match=r"judge cache .* is damaged .*quick_check") as caught:
        JudgeCache(cache_path)
    assert caught.value.path == str(cache_path)
    assert "\n" not in str(caught.value)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_is_not_a_cache() -> None:
    with pytest.raises(KagreportError, match="judge cache /dev/null: it is not a regular file"):
        JudgeCache("/dev/null")


def test_a_read_only_place_is_one_clear_error(tmp_path: Path) -> None:
    if hasattr(os, "geteuid") and os.geteuid() != 0:  # permissions bind: a read-only folder
        folder = tmp_path / "ro"
        folder.mkdir()
        JudgeCache(folder / "c.sqlite").close()
        for name in os.listdir(folder):
            (folder / name).chmod(0o444)
        folder.chmod(0o555)
        path = folder / "c.sqlite"
    elif os.path.isdir("/proc/self"):  # root: procfs refuses new files to everyone
        path = Path("/proc/self/kagreport-judge-cache.sqlite")
    else:
        pytest.skip("no read-only place to try")
    try:
        with pytest.raises(KagreportError, match="judge cache") as caught:
            JudgeCache(path)
        assert caught.value.path == str(path)
        assert str(path) in str(caught.value)
    finally:
        if path.parent != Path("/proc/self"):
            path.parent.chmod(0o755)


# -- what put and get refuse ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.put("k", "cut \ud83d", 1, 1), "`text` holds a lone surrogate"),
        (lambda c: c.put("k", "t", 2**63, 1), "`input_tokens` must be a non-negative integer"),
        (lambda c: c.put("k", "t", 1, 10**30), "`output_tokens` must be a non-negative integer"),
    ],
)
def test_text_and_counts_sqlite_cannot_store_are_refused(call: Any, message: str) -> None:
    with JudgeCache(":memory:") as cache:
        with pytest.raises(ValueError, match=message):
            call(cache)
        cache.put("k", "emoji \U0001f600", 2**63 - 1, 0)
        hit = cache.get("k")
        assert hit is not None
        assert (hit.text, hit.input_tokens) == ("emoji \U0001f600", 2**63 - 1)


def test_a_malformed_entry_is_an_error_not_a_wrong_hit(cache_path: Path) -> None:
    with JudgeCache(cache_path) as cache:
        connection = sqlite3.connect(cache_path)
        connection.execute("INSERT INTO responses VALUES ('k', x'00ff', 1, 1, 0.0)")
        connection.commit()
        connection.close()
        with pytest.raises(KagreportError, match="malformed entry under 'k'"):
            cache.get("k")


def test_disable_is_reported_once_and_cleared_by_close() -> None:
    with JudgeCache(":memory:") as cache:
        assert cache.disabled is None
        assert cache.disable("disk full") is True
        assert cache.disable("again") is False
        assert cache.disabled == "disk full"
        cache.close()
        assert cache.disabled is None


# -- a cache that fails after opening never changes a verdict or the usage ------------------


class FailingCache(JudgeCache):
    """An in-memory cache whose get or put raises ``error``, counting the calls."""

    def __init__(self, failing: str, error: BaseException) -> None:
        super().__init__(":memory:")
        self.failing, self.error, self.calls = failing, error, 0

    def get(self, key: str) -> CachedResponse | None:
        self.calls += 1
        if self.failing == "get":
            raise self.error
        return super().get(key)

    def put(self, key: str, text: str, input_tokens: int | None, output_tokens: int | None) -> None:
        self.calls += 1
        if self.failing == "put":
            raise self.error
        super().put(key, text, input_tokens, output_tokens)


@pytest.mark.parametrize("failing", ["get", "put"])
@pytest.mark.parametrize(
    "error",
    [
        KagreportError("cannot write the judge cache x: disk I/O error"),
        UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "surrogates not allowed"),
        OverflowError("Python int too large to convert to SQLite INTEGER"),
        sqlite3.DatabaseError("database disk image is malformed"),
        RuntimeError(),  # no message: the type names it
    ],
    ids=["kagreport", "unicode", "overflow", "sqlite", "empty"],
)
def test_any_cache_failure_is_a_warning_and_one_error_line(
    stub: ChatStub, caplog: pytest.LogCaptureFixture, failing: str, error: BaseException
) -> None:
    cache = FailingCache(failing, error)
    judge = b9_judge(stub, cache)
    with caplog.at_level("WARNING", logger="kagreport"):
        usage, errors = judge_items(judge, ["q1", "q2", "q3"])
    assert errors == 0
    assert usage == Usage(responses=3, input_tokens=3 * 12, output_tokens=3 * 3)
    assert cache.calls == (1 if failing == "get" else 2)  # disabled after the first failure
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    errors_logged = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(warnings) == 1
    assert len(errors_logged) == 1
    line = errors_logged[0].getMessage()
    assert "caching is disabled for this run because of" in line
    assert (str(error) or type(error).__name__) in line
    assert cache.disabled is not None
    cache.close()


def test_a_cache_broken_mid_run_through_evaluate_answers(
    cache_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from kagreport.evaluation import evaluate_answers

    def reply(item: str | None, body: dict[str, Any]) -> Any:
        if item == "q3":  # someone drops the table while the run goes on
            connection = sqlite3.connect(cache_path)
            connection.execute("DROP TABLE IF EXISTS responses")
            connection.commit()
            connection.close()
        return ok()

    items = [make_item(f"q{i}") for i in range(1, 7)]
    with ChatStub(default=reply) as stub, caplog.at_level("WARNING", logger="kagreport"):
        judge = b9_judge(stub, cache_path.parent / "unused.sqlite").with_cache(None)
        evaluation = evaluate_answers(items, [judge], cache=cache_path, max_concurrency=1)
    assert evaluation.errors["j"] == 0
    assert evaluation.metrics["j"] == 1.0
    assert evaluation.usage["j"]["responses"] == 6
    assert evaluation.usage["j"]["input_tokens"] == 6 * 12
    lines = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(lines) == 1
    assert f"judge cache {cache_path}: caching is disabled for this run" in lines[0]
    assert "no such table: responses" in lines[0]


def test_a_surrogate_reply_is_cached_as_valid_utf8(stub: ChatStub, cache_path: Path) -> None:
    from chat_stub import Reply

    body = (
        b'{"choices": [{"message": {"content": "Right \\ud83d\\nVerdict: yes"}, '
        b'"finish_reason": "length"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
    )
    stub.script("q1", Reply(body=body))
    with JudgeCache(cache_path) as cache:
        judge = b9_judge(stub, cache)
        first = judge.judge(make_item("q1"))
        assert first.verdict == "Right \ufffd\nVerdict: yes"
        assert first.usage == Usage(responses=1, input_tokens=1, output_tokens=1)
        assert len(cache) == 1
        again = judge.judge(make_item("q1"))
    assert again.verdict == first.verdict
    assert again.usage == Usage(responses=1, cached_responses=1)
    assert stub.requests("q1") == 1

"""Result trees on object storage (a real S3 endpoint on 127.0.0.1): the same rules, the same
report as the local walk, byte for byte; what goes wrong there is one line naming the object.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Tree, mcq, run_cli
from kagreport import KagreportError, ResultTreeError, find, grade
from kagreport.kag import simulate_run
from s3server import AWS_ENV

from .conftest import upload

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory, s3: Any) -> dict[str, Any]:
    """A SIMULATED tree, locally and in a bucket (datasets file included)."""
    root = tmp_path_factory.mktemp("sim") / "sim"
    run = simulate_run(root, questions=15, datasets=3, vector_dim=16, seed=5)
    url = upload(s3, Path(run.root))
    return {"local": run, "url": url}


def _edge_tree(tree: Tree) -> None:
    """kag's naming rules, all at once (KAG_STATS_SPEC.md sections 1 and 4)."""
    tree.question("ds", "q1", mcq("A"))
    tree.question("ds", "q2", mcq("b"))
    tree.question("ds", "q3", mcq(None))  # no answer: its files are skipped
    tree.question("other", "q1", {"input": "free", "output": None})  # free-form: ignored
    tree.ok("ds", "q1", "alpha", " A\n")
    tree.ok("ds", "q1", "beta", "B", retrieval=(0, 5, 1, 2, 3))
    tree.error("ds", "q1", "gamma")
    tree.ok("ds", "q2", "alpha", "B")
    tree.ok("ds", "q2", "run1-alpha", "b")  # another prefix's file: setup run1-alpha here
    tree.ok("ds", "q3", "alpha", "x")
    tree.raw("ds", "q1", "Upper.json", "{}")  # not a component name: ignored
    tree.raw("ds", "q1", "delta.json.tmp", "{")  # still being written: never a result
    tree.raw("ds", "q1", "broken.json", '{"ok": ')  # does not parse: warned, skipped
    tree.raw("ds", "q2", "notes.txt", "x")
    (tree.results / "ds" / "q2" / "deep").mkdir()
    tree.raw("ds", "q2", "deep/alpha.json", '{"error": "too deep"}')  # level 4: not visited
    tree.raw("Bad-Dataset", "q1", "alpha.json", '{"error": "x"}')  # invalid dataset name
    tree.raw("ds", "Q-upper", "alpha.json", '{"error": "x"}')  # invalid question name
    tree.ok("other", "q1", "alpha", "A")
    (tree.results / "stray.json").write_text("{}", encoding="utf-8")  # a file at level 1


def test_a_tree_in_a_bucket_grades_as_the_same_tree_on_disk(
    simulated: dict[str, Any], storage_options: dict[str, Any]
) -> None:
    run = simulated["local"]
    local = grade(run.datasets_path, run.results_path)
    remote = grade(
        f"{simulated['url']}/datasets.json",
        f"{simulated['url']}/results",
        storage_options=storage_options,
    )
    assert remote.to_json() == local.to_json()
    assert remote.to_text() == local.to_text()
    assert [p.rsplit("/results/", 1)[1] for p in remote.unparsable_files] == [
        os.path.relpath(p, run.results_path) for p in local.unparsable_files
    ]
    assert list(remote.items) == list(local.items)  # the same rows, in the same order
    assert remote.simulated  # SIMULATED.md beside results/ in the bucket too


def test_the_naming_rules_hold_on_object_storage(
    tree: Tree, s3: Any, storage_options: dict[str, Any]
) -> None:
    _edge_tree(tree)
    url = upload(s3, tree.root)
    reports = {}
    for prefix in ("", "run1-"):
        local = reports[prefix] = grade(tree.datasets_path, tree.results, prefix)
        remote = grade(
            f"{url}/datasets.json", f"{url}/results", prefix, storage_options=storage_options
        )
        assert remote.to_json() == local.to_json(), prefix
        assert remote.to_text() == local.to_text(), prefix
        assert len(remote.unparsable_files) == len(local.unparsable_files)
    # The counts come from the rules, worked by hand: 2 datasets (ds, other), 2 scorable
    # questions, 1 skipped file (q3's alpha); ds/q1 alpha correct, beta wrong, gamma error.
    data = json.loads(reports[""].to_json())
    assert (data["datasets"], data["scorable_questions"], data["skipped_files"]) == (2, 2, 1)


def test_find_on_object_storage(simulated: dict[str, Any], storage_options: dict[str, Any]) -> None:
    run = simulated["local"]
    pattern = r"Answer: [a-c]$"
    local = find(pattern, run.results_path)
    remote = find(pattern, f"{simulated['url']}/results", storage_options=storage_options)
    assert remote.total == local.total > 0
    assert [m.path.rsplit("/results/", 1)[1] for m in remote] == [
        os.path.relpath(m.path, run.results_path) for m in local
    ]
    assert [m.response for m in remote] == [m.response for m in local]


def test_an_object_that_vanishes_after_listing_is_named(
    tree: Tree, s3: Any, storage_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kagreport.kag._tree import RemoteTree

    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "alpha", "A")
    tree.ok("ds", "q1", "beta", "A")
    url = upload(s3, tree.root)
    gone = f"{url}/results/ds/q1/beta.json"
    listed = RemoteTree.list_dirs

    def list_then_delete(self: RemoteTree, paths: Any, **kwargs: Any) -> Any:
        found = listed(self, paths, **kwargs)
        if any(p.endswith("/ds/q1") for p in paths) and s3.exists(gone):
            s3.rm(gone)  # really gone from the server, after it was listed
        return found

    monkeypatch.setattr(RemoteTree, "list_dirs", list_then_delete)
    with pytest.raises(ResultTreeError) as raised:
        grade(f"{url}/datasets.json", f"{url}/results", storage_options=storage_options)
    message = str(raised.value)
    assert gone in message
    assert "vanished after its folder was listed" in message
    assert "\n" not in message
    assert raised.value.path == gone


def test_a_missing_bucket_or_prefix_is_one_line(
    storage_options: dict[str, Any], tree: Tree
) -> None:
    tree.question("ds", "q1", mcq("A"))
    for results in ("s3://no-such-bucket-kagreport/run", "s3://no-such-bucket-kagreport"):
        with pytest.raises(ResultTreeError, match="does not exist"):
            grade(tree.datasets_path, results, storage_options=storage_options)
    with pytest.raises(KagreportError, match="cannot read the datasets file s3://") as raised:
        grade("s3://no-such-bucket-kagreport/d.json", tree.results, storage_options=storage_options)
    assert "vanished" not in str(raised.value)  # nothing was listed: it never was there


def test_a_storage_option_the_filesystem_does_not_take_is_one_line(
    storage_options: dict[str, Any], tree: Tree
) -> None:
    tree.question("ds", "q1", mcq("A"))
    with pytest.raises(KagreportError) as raised:
        grade(
            "s3://some-bucket/d.json", tree.results,
            storage_options={**storage_options, "bogus_option": "1"},
        )  # fmt: skip
    message = str(raised.value)
    assert "bogus_option" in message
    assert "a storage option this filesystem does not take" in message
    assert "\n" not in message


def test_missing_credentials_are_one_line(s3_endpoint: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({k: v for k, v in AWS_ENV.items() if "KEY" not in k})  # no keys, no IMDS
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "stats", "-d", "s3://bucket/datasets.json",
         "-r", "s3://bucket/results", "--storage-option", f"endpoint_url={s3_endpoint}"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done
    assert done.stderr.count("\n") == 1, done.stderr
    assert "credentials" in done.stderr.lower()
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_command_line_on_a_bucket(
    simulated: dict[str, Any], s3_endpoint: str, storage_options: dict[str, Any]
) -> None:
    run = simulated["local"]
    local = run_cli("stats", "-d", run.datasets_path, "-r", run.results_path, "--format", "json")
    remote = run_cli(
        "stats", "-d", f"{simulated['url']}/datasets.json", "-r", f"{simulated['url']}/results",
        "--format", "json", "--storage-option", f"endpoint_url={s3_endpoint}",
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    bad = run_cli("stats", "-d", "x", "--storage-option", "novalue")
    assert bad.returncode == 2
    assert "KEY=VALUE" in bad.stderr


@pytest.fixture
def silent_endpoint() -> Any:
    """``http://127.0.0.1:PORT`` of a listener that accepts connections and never answers."""
    import contextlib
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for conn in held:
        conn.close()


def _fails_within(seconds: float, call: Any) -> BaseException:
    """The exception ``call()`` raised, which it must within ``seconds`` (else a failure:
    the call is left waiting in a daemon thread)."""
    import threading

    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    assert raised, "no error"
    return raised[0]


def test_an_endpoint_that_never_answers_fails_within_the_timeouts(
    silent_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defaults bound each try (connect and read timeouts) and the tries (s3fs's);
    botocore's and s3fs's own defaults would wait 60 s per read, 25 tries in all. Here the
    defaults are made small (1 s, 2 tries): the same code path, a short test."""
    from kagreport.kag import _tree

    monkeypatch.setattr(_tree, "CONNECT_TIMEOUT", 1, raising=False)
    monkeypatch.setattr(_tree, "READ_TIMEOUT", 1, raising=False)
    monkeypatch.setattr(_tree, "S3_TRIES", 2, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    options = {"endpoint_url": silent_endpoint}
    exc = _fails_within(
        30, lambda: grade("s3://run/datasets.json", "s3://run/results", storage_options=options)
    )
    assert isinstance(exc, KagreportError), repr(exc)
    assert str(exc).count("\n") == 0
    assert "s3://run/datasets.json" in str(exc)
    assert silent_endpoint in str(exc)  # the endpoint that did not answer, by its URL


def test_the_timeouts_are_the_storage_options_when_given(
    silent_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """s3fs's own ``config_kwargs`` (botocore's Config) replace the defaults."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    given = {"connect_timeout": 1, "read_timeout": 1, "retries": {"total_max_attempts": 1}}
    options = {"endpoint_url": silent_endpoint, "config_kwargs": given}
    # s3fs's 5 tries of 1 s each, and its waits between them (about 1.5 s in all).
    exc = _fails_within(30, lambda: find("Answer", "s3://run/results", storage_options=options))
    assert isinstance(exc, KagreportError), repr(exc)
    assert silent_endpoint in str(exc)

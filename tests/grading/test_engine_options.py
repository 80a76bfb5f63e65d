"""EngineOptions: one frozen object says where and how a tree is graded; it is checked once,
with a message naming the field, and every entry point takes it whole (its keywords are a
shorthand that replaces its fields)."""

from __future__ import annotations

import dataclasses
import math
import pickle
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from kagreport import InputError, KagreportError
from kagreport.grading import find, grade, watch
from kagreport.grading.engine import EngineOptions, GradeStore
from kagreport.kag import SimulatedRun, simulate_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SimulatedRun:
    return simulate_run(
        tmp_path_factory.mktemp("options") / "sim", questions=12, datasets=2, vector_dim=8, seed=5
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"engine": "spark"}, "`engine` must be one of 'local', 'dask', not 'spark'"),
        ({"workers": 0}, "`workers` must be an int >= 1 or None, not 0"),
        ({"workers": -2}, "`workers` must be an int >= 1 or None, not -2"),
        ({"workers": True}, "`workers` must be an int >= 1 or None, not True"),
        ({"workers": 1.5}, "`workers` must be an int >= 1 or None, not 1.5"),
        ({"workers": "2"}, "`workers` must be an int >= 1 or None, not '2'"),
        ({"scheduler": "tcp://127.0.0.1:8786"}, "`scheduler` goes with engine='dask'"),
        (
            {"engine": "dask", "scheduler": "tcp://127.0.0.1:8786", "workers": 2},
            "`workers` does not go with `scheduler` (the cluster has its own workers)",
        ),
        ({"engine": "dask", "scheduler": "tcp://host:notaport"}, "not a Dask scheduler address"),
        ({"engine": "dask", "scheduler": "tls://127.0.0.1:1"}, "not a Dask scheduler address"),
        ({"store": 3}, "`store` must be a GradeStore, a folder or None, not int"),
        ({"storage_options": [("anon", True)]}, "`storage_options` must be a mapping"),
        ({"storage_options": {1: True}}, "`storage_options` must be a mapping with str keys"),
        ({"interval": 0}, "`interval` must be a positive number of seconds, not 0"),
        ({"interval": -1.0}, "`interval` must be a positive number of seconds, not -1.0"),
        ({"interval": math.nan}, "`interval` must be a positive number of seconds, not nan"),
        ({"interval": math.inf}, "`interval` must be a positive number of seconds, not inf"),
        ({"interval": True}, "`interval` must be a positive number of seconds, not True"),
        ({"interval": "2"}, "`interval` must be a positive number of seconds, not '2'"),
    ],
)
def test_each_field_is_checked_once_with_a_message_naming_it(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=re.escape(message)) as raised:
        EngineOptions(**fields)
    # A ValueError too (callers that caught grade()'s ValueError still do), one line.
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, KagreportError)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tcp://[::1]:8786", "sched:1"]
)
def test_tcp_scheduler_addresses_are_taken(address: str) -> None:
    assert EngineOptions(engine="dask", scheduler=address).scheduler == address


def test_the_options_are_frozen_and_own_what_they_hold(tmp_path: Path) -> None:
    given = {"anon": True}
    options = EngineOptions(store=tmp_path / "store", storage_options=given, workers=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.workers = 3  # type: ignore[misc]
    given["anon"] = False  # the caller's dict changes; the options do not
    assert options.storage_options == {"anon": True}
    with pytest.raises(TypeError):
        options.storage_options["anon"] = False  # type: ignore[index]
    assert isinstance(options.store, GradeStore)
    assert options.store.path == str(tmp_path / "store")
    assert EngineOptions() == EngineOptions(engine="local", interval=2)
    assert EngineOptions().interval == 2.0
    # Options naming the same folder are equal; they pickle (to a process of the caller's).
    same = EngineOptions(store=str(tmp_path / "store"), storage_options={"anon": True}, workers=2)
    assert options == same
    assert EngineOptions(store=GradeStore()) != EngineOptions(store=GradeStore())
    assert pickle.loads(pickle.dumps(options)) == options


def test_keywords_replace_only_the_fields_given() -> None:
    options = EngineOptions(workers=2, interval=5)
    assert options.with_keywords() is options
    assert options.with_keywords(workers=None, engine=None) is options
    changed = options.with_keywords(workers=3)
    assert (changed.workers, changed.interval, options.workers) == (3, 5.0, 2)
    with pytest.raises(InputError, match="EngineOptions has no field 'client'; fields: engine"):
        options.with_keywords(client="tcp://127.0.0.1:8786")
    with pytest.raises(InputError, match="`workers` must be"):
        options.with_keywords(workers=0)


def test_grade_takes_the_options_whole_and_its_keywords_are_a_shorthand(
    run: SimulatedRun, tmp_path: Path
) -> None:
    plain = grade(run.datasets_path, run.results_path)
    first, second = tmp_path / "first", tmp_path / "second"
    whole = grade(
        run.datasets_path, run.results_path, options=EngineOptions(store=first, workers=1)
    )
    assert whole.to_json() == plain.to_json()
    assert (first / "manifest.json").is_file()
    # The same options again: the store they name spares every file.
    assert grade(run.datasets_path, run.results_path, options=EngineOptions(store=first))
    again = grade(run.datasets_path, run.results_path, store=first)
    assert (again.files_read, again.to_json()) == (0, plain.to_json())
    # A keyword replaces its field of the options, and only that one.
    over = grade(
        run.datasets_path, run.results_path, store=second, options=EngineOptions(store=first)
    )
    assert over.files_read == plain.files_read
    assert (second / "manifest.json").is_file()
    with pytest.raises(InputError, match="`engine` must be one of"):
        grade(run.datasets_path, run.results_path, engine="spark")
    with pytest.raises(InputError, match="`workers` must be"):
        grade(run.datasets_path, run.results_path, options=EngineOptions(), workers=0)


def test_find_takes_the_options_whole(run: SimulatedRun) -> None:
    plain = find(r"Answer: [ab]", run.results_path)
    whole = find(r"Answer: [ab]", run.results_path, options=EngineOptions(workers=1))
    assert whole.to_json() == plain.to_json()
    assert plain.matches


def test_watch_waits_the_options_interval_and_leaves_them_unchanged(
    run: SimulatedRun,
) -> None:
    def sleeper(passes: int) -> tuple[list[float], threading.Event, Any]:
        waits: list[float] = []
        stop = threading.Event()

        def sleep(secs: float) -> None:
            waits.append(secs)
            if len(waits) == passes:
                stop.set()

        return waits, stop, sleep

    waits, stop, sleep = sleeper(2)
    options = EngineOptions(interval=0.25, workers=1)
    reports = list(watch(run.datasets_path, run.results_path, options=options, stop=stop,
                         sleep=sleep))  # fmt: skip
    # Two passes, one report (the second changed nothing), the options' interval waited.
    assert waits == [0.25, 0.25]
    assert [r.to_json() for r in reports] == [grade(run.datasets_path, run.results_path).to_json()]
    assert options.store is None  # watch kept its store in memory, not in them
    # The shorthand replaces the options' interval.
    waits, stop, sleep = sleeper(1)
    list(watch(run.datasets_path, run.results_path, interval=0.5, options=options, stop=stop,
               sleep=sleep))  # fmt: skip
    assert waits == [0.5]


def test_the_command_line_takes_workers(run: SimulatedRun) -> None:
    common = ("stats", "-d", run.datasets_path, "-r", run.results_path, "--format", "json")
    default = run_cli(*common)
    one = run_cli(*common, "--workers", "1")
    assert one.returncode == default.returncode == 0, one.stderr
    assert one.stdout == default.stdout == grade(run.datasets_path, run.results_path).to_json()
    for bad in ("0", "-1", "x"):
        refused = run_cli(*common, f"--workers={bad}")
        assert refused.returncode == 2, bad
        assert "--workers" in refused.stderr
    with_scheduler = run_cli(
        *common, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--workers", "2"
    )
    assert with_scheduler.returncode == 2
    assert "--workers does not go with --scheduler" in with_scheduler.stderr
    found = run_cli("stats", "-r", run.results_path, "find", "--workers", "1", "Answer: a")
    assert found.returncode == 0, found.stderr
    assert found.stdout == run_cli("stats", "-r", run.results_path, "find", "Answer: a").stdout


def test_the_options_come_from_the_package_root_without_loading_numpy() -> None:
    code = (
        "import sys, kagreport; options = kagreport.EngineOptions(workers=2);"
        "import kagreport.grading.engine;import kagreport.grading as g; assert kagreport.EngineOptions is g.engine.EngineOptions;"
        "print(options.workers, 'numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "False"]


def test_a_kag_tree_read_as_a_run_is_graded_with_the_options(
    run: SimulatedRun, tmp_path: Path
) -> None:
    from kagreport import read_run

    store = tmp_path / "store"
    read = read_run(
        run.results_path, format="kag", datasets=run.datasets_path,
        engine_options=EngineOptions(store=store, workers=1),
    )  # fmt: skip
    assert (store / "manifest.json").is_file()
    assert read.systems == grade(run.datasets_path, run.results_path).setup_names

"""The judges package: its public names, and that each module imports on its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kagreport.evaluation
import kagreport.evaluation.judges as judges

MODULES = ["", "._cache", "._client", "._config", "._llm", "._protocol", "._rules",
           "._sandbox", "._settings", "._verdict"]  # fmt: skip


def test_all_is_sorted_and_complete() -> None:
    # isort-style order, as ruff's RUF022 wants: constants, then the rest by name.
    assert judges.__all__ == sorted(judges.__all__, key=lambda n: (not n.isupper(), n))
    for name in judges.__all__:
        assert hasattr(judges, name), name


def test_evaluation_exports_the_same_judge_objects() -> None:
    for name in kagreport.evaluation.__all__:
        if name in judges.__all__:
            assert getattr(kagreport.evaluation, name) is getattr(judges, name), name


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    # kagreport.evaluation._evaluate imports the judges' protocol and the LLM judge reads
    # the evaluation's stop from _evaluate: whichever is imported first, no import cycle.
    name = "kagreport.evaluation.judges" + module
    code = f"import {name}, kagreport.evaluation; print(len(kagreport.evaluation.__all__))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(kagreport.evaluation.__all__)


def test_the_llm_judge_sees_the_evaluations_stop() -> None:
    # The stop is read through the _evaluate module at request time (not bound at import).
    from kagreport.evaluation import _evaluate
    from kagreport.evaluation.judges import _client

    assert _client._evaluate is _evaluate
    assert _evaluate.current_stop() is None  # this thread judges for no evaluation

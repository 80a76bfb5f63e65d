"""What ``kagreport convert`` writes as Every Eval Ever passes EEE's own validator.

The validator is the real one, ``every-eval-ever==0.3.0`` (``python -m every_eval_ever
validate``), run in a subprocess: it needs Python >= 3.12 and lives in its own virtual
environment, ``.venv-eee`` at the repository's root (``make eee`` makes it; the
``KAGREPORT_EEE_PYTHON`` environment variable names another interpreter that has it).
The test skips, saying why, only where no Python >= 3.12 is found; where one is and the
validator is not installed, it fails and says to run ``make eee``.
"""

from __future__ import annotations

import glob
import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kagreport
from conftest import run_cli
from kagreport.examples import mmlu_pro_philosophy
from kagreport.runs import Run
from kagreport.sources._eee_write import write_eee

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "sources"
EEE_VERSION = "0.3.0"
#: The only warning accepted: a system named without a developer (``gpt-4``) cannot say
#: which ``data/<collection>/<developer>/`` folder it belongs in; kagreport does not
#: invent a developer. The file is valid all the same.
FLAT_ID = "names no datastore directory — model_info.developer is required"


def _new_enough(python: str) -> bool:
    try:
        check = "import sys; sys.exit(sys.version_info < (3, 12))"
        return (
            subprocess.run([python, "-c", check], capture_output=True, timeout=30).returncode == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def _python_312() -> str | None:
    """The first Python >= 3.12 found, as the Makefile's ``eee`` target looks for one."""
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    found = [shutil.which(name) for name in ("python3.12", "python3.13")]
    found += sorted(glob.glob(f"{pyenv}/versions/3.1[23]*/bin/python"))
    return next((p for p in found if p is not None and _new_enough(p)), None)


@pytest.fixture(scope="module")
def eee_python() -> str:
    given = os.environ.get("KAGREPORT_EEE_PYTHON")
    python = given or str(ROOT / ".venv-eee" / "bin" / "python")
    version = "import every_eval_ever.validator, importlib.metadata as m; "
    version += "print(m.version('every-eval-ever'))"
    if Path(python).exists():
        done = subprocess.run([python, "-c", version], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == EEE_VERSION:
            return python
    if given is None and _python_312() is None:
        pytest.skip("EEE's validator needs Python >= 3.12 and none is installed")
    pytest.fail(
        f"{python} has no every-eval-ever=={EEE_VERSION}: run `make eee` "
        "(or set KAGREPORT_EEE_PYTHON to a Python that has it)"
    )


_PATTERNS = ("data/**/*.json", "data/**/*.jsonl")


def _validate(python: str, folder: Path) -> list[dict[str, Any]]:
    """EEE's validator CLI on every file of the datastore ``folder`` (run from it, as the
    datastore layout check wants), its JSON report."""
    done = subprocess.run(
        [python, "-m", "every_eval_ever", "validate", "--format", "json", *_PATTERNS],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1, 2), done.stderr
    report: list[dict[str, Any]] = json.loads(done.stdout)
    return report


def _refusals(report: list[dict[str, Any]]) -> list[str]:
    return [
        f"{entry['file']}: {problem['msg']}"
        for entry in report
        for problem in entry["errors"] + entry["warnings"]
        if not entry["valid"] or problem in entry["errors"] or FLAT_ID not in problem["msg"]
    ]


@pytest.mark.parametrize(
    ("source", "files"),
    [
        # The tools' own outputs (SOURCE.md beside each): an aggregate and a samples file
        # per system.
        ("promptfoo/real/results.json", 4),
        ("promptfoo/two-prompts.jsonl", 4),
        ("lm-eval/lm-eval-0.4.13/output", 6),
        ("inspect/inspect-0.3.285", 8),
        ("inspect/mmlu-summary-choices.eval", 2),
        ("inspect/log_formats.eval", 2),
        ("openai-evals/evals-3.0.1/records", 4),
        ("helm/real/tiny25", 4),
    ],
)
def test_converted_runs_pass_eees_validator(
    eee_python: str, source: str, files: int, tmp_path: Path
) -> None:
    done = run_cli("convert", DATA / source, "-o", tmp_path / "out.eee")
    assert done.returncode == 0, done.stderr
    report = _validate(eee_python, tmp_path / "out.eee")
    assert len(report) == files
    assert _refusals(report) == []
    continuous = [
        result["metric_config"]
        for path in (tmp_path / "out.eee").glob("data/*/*/*/*.json")
        for result in json.loads(path.read_text(encoding="utf-8"))["evaluation_results"]
        if result["metric_config"]["score_type"] == "continuous"
    ]
    assert all(isinstance(c["min_score"], int | float) for c in continuous)
    assert all(isinstance(c["max_score"], int | float) for c in continuous)


def test_the_kag_example_and_odd_scores_pass_eees_validator(
    eee_python: str, tmp_path: Path
) -> None:
    example = mmlu_pro_philosophy()
    kag = Run.from_stats(kagreport.grade(example.datasets, example.results))
    report = _validate(eee_python, write_eee(kag, tmp_path / "kag.eee", timestamp=1))
    assert len(report) == 2 * 6
    assert _refusals(report) == []
    # Scores outside [0, 1] (bounds: the observed range) and a dataset whose mean is
    # undefined (its score is the lower bound, marked undefined in the details).
    nan = math.nan
    odd = Run(
        kind="answers",
        systems=("org/b", "org/a"),
        dataset_names=("d1", "d2"),
        question_names=("q1", "q2"),
        system=np.array([0, 0, 1], dtype=np.int32),
        dataset=np.array([0, 1, 1], dtype=np.int32),
        question=np.array([0, 1, 0], dtype=np.int32),
        outcome=np.array([-1, 2, 0], dtype=np.int8),
        metrics={"score": np.array([nan, -2.5, 7.0]), "f1": np.array([nan, 0.5, nan])},
    )
    folder = write_eee(odd, tmp_path / "odd.eee")
    assert _refusals(_validate(eee_python, folder)) == []
    configs = {
        (r["evaluation_name"], r["metric_config"]["metric_id"]): (
            r["metric_config"]["min_score"],
            r["metric_config"]["max_score"],
            r["score_details"]["score"],
        )
        for path in folder.glob("data/*/org/b/*.json")
        for r in json.loads(path.read_text(encoding="utf-8"))["evaluation_results"]
    }
    assert configs == {
        ("d1", "score"): (-2.5, 7, -2.5),
        ("d1", "f1"): (0, 1, 0),
        ("d2", "score"): (-2.5, 7, -2.5),
        ("d2", "f1"): (0, 1, 0.5),
    }

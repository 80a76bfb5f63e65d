"""The GitHub Actions example (docs/ci/github-actions.yml) parses, and its commands run here
as GitHub would run them.

Every ``run:`` step of the benchmark job runs in order in a fresh clone of a local repository
whose ``origin`` is a bare repository (the history branch is pushed there), with GitHub's shell
(``bash --noprofile --norc -eo pipefail``), its variables and no git identity; ``if:``
conditions are evaluated as GitHub does (an ``if:`` without a status function runs only while
no step failed). ``uses:`` steps stand for actions that need GitHub: their conditions are
evaluated, their inputs checked. Three pipelines: two of main (the first starts the history,
the second is gated against it) and a pull request whose run regresses (its correct answers
halved): that gate fails with exit 1, the summary still says why, the history is left alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ci_pipelines import (
    GITHUB,
    SETUP_STEPS,
    assert_history_page,
    assert_installs_what_the_steps_need,
    git,
    halve_correct_answers,
    history_runs,
    junit,
    runner_env,
    seed_env,
)

yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow


def _condition(expression: str | None, *, main: bool, failed: bool, workdir: Path) -> bool:
    """GitHub's ``if:`` for the expressions the example uses (any other fails the test)."""
    if expression is None:
        return not failed
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2].strip()
    known: dict[str, Callable[[], bool]] = {
        "always() && hashFiles('gate/gate.md') != ''": lambda: (workdir / "gate/gate.md").exists(),
        "always() && hashFiles('gate/gate.xml') != ''": lambda: (
            workdir / "gate/gate.xml"
        ).exists(),
        "github.ref == 'refs/heads/main'": lambda: main and not failed,
    }
    assert text in known, f"the test does not know the condition {text!r}: teach it"
    return known[text]()


def _github_pipeline(
    tmp: Path, origin: Path, number: int, *, main: bool, regress: bool
) -> dict[str, Any]:
    workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    work = tmp / f"gh-{number}"
    env = runner_env(tmp)
    git("clone", "--quiet", str(origin), str(work), cwd=tmp, env=env)
    sha = git("rev-parse", "HEAD", cwd=work, env=env)
    summary = tmp / f"summary-{number}.md"
    summary.touch()
    env.update(
        GITHUB_STEP_SUMMARY=str(summary), GITHUB_SHA=sha, GITHUB_RUN_NUMBER=str(number),
        GITHUB_REF="refs/heads/main" if main else f"refs/pull/{number}/merge",
        GITHUB_EVENT_NAME="push" if main else "pull_request",
    )  # fmt: skip
    failed = False
    status: dict[str, int | str] = {}
    for step in workflow["jobs"]["benchmark"]["steps"]:
        key = step.get("id", step.get("uses"))
        if not _condition(step.get("if"), main=main, failed=failed, workdir=work):
            status[key] = "skipped"
            continue
        if "uses" in step or key in SETUP_STEPS:
            status[key] = "needs GitHub" if "uses" in step else "set up"
            continue
        script = tmp / f"step-{number}-{key}.sh"
        script.write_text(step["run"], encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=work, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        status[key] = done.returncode
        if done.returncode != 0:
            failed = True
            status[f"{key}:stderr"] = done.stderr
        if key == "record" and regress:
            halve_correct_answers(work / "run.json")
    return {"status": status, "work": work, "summary": summary.read_text(encoding="utf-8")}


def test_the_github_workflow_parses_and_pins_its_actions() -> None:
    workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert set(triggers) == {"pull_request", "push"}
    steps = workflow["jobs"]["benchmark"]["steps"]
    actions = [s["uses"] for s in steps if "uses" in s]
    actions += [s["uses"] for s in workflow["jobs"]["deploy"]["steps"]]
    assert actions
    assert all("@v" in a for a in actions), actions
    assert workflow["jobs"]["deploy"]["needs"] == "benchmark"
    report = next(s for s in steps if s.get("id") == "report")
    assert report["with"]["report_paths"] == "gate/gate.xml"
    install = next(s for s in steps if s.get("id") == "install")
    assert install["run"] == 'python -m pip install "$KAGREPORT"'
    assert_installs_what_the_steps_need(workflow["env"]["KAGREPORT"])
    assert workflow["concurrency"]["group"] == "benchmark-${{ github.ref }}"
    upload = next(s for s in steps if s.get("id") == "upload")
    site = next(s for s in steps if s.get("id") == "site")
    assert f"-o {upload['with']['path']}" in site["run"]


def test_the_github_workflow_runs_here(tmp_path: Path) -> None:
    env = seed_env(tmp_path)
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(origin), cwd=tmp_path, env=env)
    git("init", "--quiet", "--initial-branch=main", str(seed), cwd=tmp_path, env=env)
    (seed / "README.md").write_text("a project with a benchmark\n", encoding="utf-8")
    git("add", "README.md", cwd=seed, env=env)
    git("commit", "--quiet", "-m", "start", cwd=seed, env=env)
    git("push", "--quiet", str(origin), "main", cwd=seed, env=env)

    first = _github_pipeline(tmp_path, origin, 1, main=True, regress=False)
    assert first["status"]["gate"] == 0, first["status"]
    assert "No baseline yet" in first["summary"]
    assert first["status"]["summary"] == "skipped"
    assert first["status"]["keep"] == 0, first["status"]
    assert first["status"]["site"] == 0, first["status"]
    assert len(history_runs(origin, env)) == 1
    assert (first["work"] / "public" / "index.html").is_file()

    second = _github_pipeline(tmp_path, origin, 2, main=True, regress=False)
    assert second["status"]["gate"] == 0, second["status"]
    assert second["status"]["summary"] == 0
    assert second["status"]["report"] == "needs GitHub"
    assert second["summary"].lstrip().startswith("#"), second["summary"][:200]
    assert junit(second["work"] / "gate/gate.xml").get("failures") == "0"
    assert len(history_runs(origin, env)) == 2
    assert_history_page(second["work"] / "public", runs=2)

    regression = _github_pipeline(tmp_path, origin, 3, main=False, regress=True)
    status = regression["status"]
    assert status["gate"] == 1, status
    assert status["summary"] == 0, status
    assert status["report"] == "needs GitHub", status
    assert status["keep"] == "skipped", status
    assert status["site"] == "skipped", status
    assert "fail" in regression["summary"].lower()
    suite = junit(regression["work"] / "gate/gate.xml")
    assert int(suite.get("failures", "0")) >= 1
    assert len(history_runs(origin, env)) == 2  # a pull request leaves the history alone

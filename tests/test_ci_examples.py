"""The CI examples of docs/ci/ parse, and their commands run here as CI would run them.

GitHub Actions (docs/ci/github-actions.yml): every ``run:`` step of the benchmark job runs
in order in a fresh clone of a local repository whose ``origin`` is a bare repository (the
history branch is pushed there), with GitHub's shell (``bash --noprofile --norc -eo
pipefail``) and its variables; ``if:`` conditions are evaluated as GitHub does (an ``if:``
without a status function runs only while no step failed). ``uses:`` steps stand for
actions that need GitHub: their conditions are evaluated, their files checked.

GitLab CI (docs/ci/gitlab-ci.yml): the benchmark job's script runs in bash ``-eo pipefail``
against a local HTTP server that plays GitLab's job-artifacts API (``JOB-TOKEN`` checked),
serving the artifacts of the newest successful job of the default branch as GitLab would;
then the pages job's script.

Three pipelines each: two of main (the first starts the history, the second is gated
against it) and a merge request whose run regresses (its benchmark's correct answers halved):
that gate fails with exit 1, the summary still says why, and the history is left alone.
"""

from __future__ import annotations

import dataclasses
import http.server
import io
import os
import shlex
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
GITHUB = REPO / "docs" / "ci" / "github-actions.yml"
GITLAB = REPO / "docs" / "ci" / "gitlab-ci.yml"
BIN = Path(sys.executable).parent
SETUP_STEPS = {"install"}  # installs kagreport: this environment has it


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    """A CI runner's environment: no git identity (HOME is an empty folder), so a step that
    commits must give its own, as it must on GitHub's and GitLab's runners."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GITHUB_", "CI_", "PYTEST_", "GIT_"))
    }
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(home), **extra)
    env.update(GIT_CONFIG_NOSYSTEM="1", EMAIL="")
    return env


def _seed_env(tmp: Path) -> dict[str, str]:
    """The test's own commits (the project being built), with an identity."""
    return _env(
        tmp, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
    )  # fmt: skip


def _assert_installs_what_the_steps_need(requirement_text: str) -> None:
    """The install line's requirement: kagreport with the extra `site build` needs (the
    test's environment has every extra, so only this check sees a missing one)."""
    import tomllib

    from packaging.requirements import Requirement

    requirement = Requirement(requirement_text)
    assert requirement.name == "kagreport"
    assert "site" in requirement.extras, requirement_text
    assert requirement.url is not None, "no kagreport package is published: give its source"
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert any(dependency.startswith("jinja2") for dependency in extras["site"])


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _regress(run_json: Path) -> None:
    """Halve the correct answers of every system: a regression far beyond a 2-point margin."""
    from kagreport.runs import Run

    run = Run.read(run_json)
    correct = run.metrics["correct"].copy()
    correct[::2] = np.where(np.isnan(correct[::2]), np.nan, 0.0)
    dataclasses.replace(run, metrics={**run.metrics, "correct": correct}).write(run_json)


# ------------------------------------------------------------------------------ GitHub


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
    env = _env(tmp)
    _git("clone", "--quiet", str(origin), str(work), cwd=tmp, env=env)
    sha = _git("rev-parse", "HEAD", cwd=work, env=env)
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
            _regress(work / "run.json")
    return {"status": status, "work": work, "summary": summary.read_text(encoding="utf-8")}


def _history_runs(origin: Path, env: dict[str, str]) -> list[str]:
    try:
        listing = _git("ls-tree", "--name-only", "benchmark-history", cwd=origin, env=env)
    except subprocess.CalledProcessError:
        return []
    return sorted(name for name in listing.splitlines() if name.endswith(".json"))


def _assert_history_page(site: Path, runs: int) -> None:
    """The site's history page, with a page for each run of the history."""
    assert (site / "history" / "index.html").is_file(), "the site has no history page"
    pages = [p for p in (site / "history").glob("*.html") if p.name != "index.html"]
    assert len(pages) == runs, sorted(p.name for p in pages)


def _junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    return root if root.tag == "testsuite" else root.find("testsuite")  # type: ignore[return-value]


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
    _assert_installs_what_the_steps_need(workflow["env"]["KAGREPORT"])
    assert workflow["concurrency"]["group"] == "benchmark-${{ github.ref }}"
    upload = next(s for s in steps if s.get("id") == "upload")
    site = next(s for s in steps if s.get("id") == "site")
    assert f"-o {upload['with']['path']}" in site["run"]


def test_the_github_workflow_runs_here(tmp_path: Path) -> None:
    env = _seed_env(tmp_path)
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    _git("init", "--quiet", "--bare", "--initial-branch=main", str(origin), cwd=tmp_path, env=env)
    _git("init", "--quiet", "--initial-branch=main", str(seed), cwd=tmp_path, env=env)
    (seed / "README.md").write_text("a project with a benchmark\n", encoding="utf-8")
    _git("add", "README.md", cwd=seed, env=env)
    _git("commit", "--quiet", "-m", "start", cwd=seed, env=env)
    _git("push", "--quiet", str(origin), "main", cwd=seed, env=env)

    first = _github_pipeline(tmp_path, origin, 1, main=True, regress=False)
    assert first["status"]["gate"] == 0, first["status"]
    assert "No baseline yet" in first["summary"]
    assert first["status"]["summary"] == "skipped"
    assert first["status"]["keep"] == 0, first["status"]
    assert first["status"]["site"] == 0, first["status"]
    assert len(_history_runs(origin, env)) == 1
    assert (first["work"] / "public" / "index.html").is_file()

    second = _github_pipeline(tmp_path, origin, 2, main=True, regress=False)
    assert second["status"]["gate"] == 0, second["status"]
    assert second["status"]["summary"] == 0
    assert second["status"]["report"] == "needs GitHub"
    assert second["summary"].lstrip().startswith("#"), second["summary"][:200]
    assert _junit(second["work"] / "gate/gate.xml").get("failures") == "0"
    assert len(_history_runs(origin, env)) == 2
    _assert_history_page(second["work"] / "public", runs=2)

    regression = _github_pipeline(tmp_path, origin, 3, main=False, regress=True)
    status = regression["status"]
    assert status["gate"] == 1, status
    assert status["summary"] == 0, status
    assert status["report"] == "needs GitHub", status
    assert status["keep"] == "skipped", status
    assert status["site"] == "skipped", status
    assert "fail" in regression["summary"].lower()
    suite = _junit(regression["work"] / "gate/gate.xml")
    assert int(suite.get("failures", "0")) >= 1
    assert len(_history_runs(origin, env)) == 2  # a pull request leaves the history alone


# ------------------------------------------------------------------------------ GitLab

TOKEN = "job-token-for-the-test"


class _Artifacts(http.server.BaseHTTPRequestHandler):
    """GitLab's ``GET /projects/:id/jobs/artifacts/:ref/download?job=NAME``."""

    archive: bytes | None = None
    tokens: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).tokens.append(self.headers.get("JOB-TOKEN"))
        expected = "/api/v4/projects/7/jobs/artifacts/main/download?job=benchmark"
        body = type(self).archive
        if self.path != expected or body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def gitlab_api() -> Iterator[str]:
    _Artifacts.archive = None
    _Artifacts.tokens = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Artifacts)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _keep_artifacts(work: Path, paths: list[str]) -> None:
    """Zip the job's artifact paths as GitLab stores them (paths relative to the project)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in paths:
            found = work / path.rstrip("/")
            files = (
                [found] if found.is_file() else sorted(found.rglob("*")) if found.exists() else []
            )
            for file in files:
                if file.is_file():
                    archive.write(file, file.relative_to(work).as_posix())
    _Artifacts.archive = buffer.getvalue()


def _gitlab_pipeline(
    tmp: Path, api: str, number: int, *, main: bool, regress: bool
) -> dict[str, Any]:
    config = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    job = config["benchmark"]
    work = tmp / f"gl-{number}"
    work.mkdir()
    env = _env(
        tmp, CI_API_V4_URL=api, CI_PROJECT_ID="7", CI_JOB_TOKEN=TOKEN,
        CI_DEFAULT_BRANCH="main", CI_PIPELINE_IID=str(number),
        CI_COMMIT_SHORT_SHA=f"{number:08x}",
        CI_PIPELINE_SOURCE="push" if main else "merge_request_event",
    )  # fmt: skip
    if main:
        env["CI_COMMIT_BRANCH"] = "main"
    lines = job["script"]
    # The benchmark and its record, then (a hook: the regression) the rest of the script.
    split = next(i for i, line in enumerate(lines) if line.startswith("kagreport convert")) + 1
    status = 0
    for part in (lines[:split], lines[split:]):
        script = "\n".join(part)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=work, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        status = done.returncode
        if status != 0:
            break
        if regress and part is not lines[split:]:
            _regress(work / "run.json")
    if status == 0 and main:
        _keep_artifacts(work, job["artifacts"]["paths"])
        pages = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
             "\n".join(config["pages"]["script"])],
            cwd=work, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert pages.returncode == 0, pages.stderr
    return {"status": status, "work": work, "log": done.stdout, "stderr": done.stderr}


def test_the_gitlab_pipeline_parses() -> None:
    config = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    assert config["stages"] == ["benchmark", "deploy"]
    artifacts = config["benchmark"]["artifacts"]
    assert artifacts["reports"]["junit"] == "gate/gate.xml"
    assert artifacts["when"] == "always"
    assert config["pages"]["needs"] == ["benchmark"]
    assert config["pages"]["artifacts"]["paths"] == ["public"]
    assert any("-o public" in line for line in config["pages"]["script"])
    assert all(shlex.split(line) for line in config["benchmark"]["script"])
    for job in ("benchmark", "pages"):
        assert config[job]["before_script"] == ['python -m pip install "$KAGREPORT"']
    _assert_installs_what_the_steps_need(config["variables"]["KAGREPORT"])


def test_the_gitlab_pipeline_runs_here(tmp_path: Path, gitlab_api: str) -> None:
    first = _gitlab_pipeline(tmp_path, gitlab_api, 1, main=True, regress=False)
    assert first["status"] == 0, first["stderr"]
    assert "No baseline yet" in first["log"]
    assert len(list((first["work"] / "history").glob("*.json"))) == 1
    assert (first["work"] / "public" / "index.html").is_file()

    second = _gitlab_pipeline(tmp_path, gitlab_api, 2, main=True, regress=False)
    assert second["status"] == 0, second["stderr"]
    assert (second["work"] / "gate" / "gate.md").read_text(encoding="utf-8") in second["log"]
    assert _junit(second["work"] / "gate/gate.xml").get("failures") == "0"
    assert len(list((second["work"] / "history").glob("*.json"))) == 2
    _assert_history_page(second["work"] / "public", runs=2)

    regression = _gitlab_pipeline(tmp_path, gitlab_api, 3, main=False, regress=True)
    assert regression["status"] == 1, regression["stderr"]
    assert int(_junit(regression["work"] / "gate/gate.xml").get("failures", "0")) >= 1
    assert "fail" in regression["log"].lower()
    assert len(list((regression["work"] / "history").glob("*.json"))) == 2
    # The job token went to the artifacts API, the one host it belongs to, every time.
    assert _Artifacts.tokens == [TOKEN, TOKEN, TOKEN]

"""The GitLab CI example (docs/ci/gitlab-ci.yml) parses, and its commands run here as GitLab
would run them.

The benchmark job's script runs in bash ``-eo pipefail`` with no git identity, against a local
HTTP server that plays GitLab's job-artifacts API (``JOB-TOKEN`` checked), serving the artifacts
of the newest successful job of the default branch as GitLab would; then the pages job's
script. Three pipelines: two of the default branch and a merge request whose run regresses.
"""

from __future__ import annotations

import http.server
import io
import shlex
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ci_pipelines import (
    GITLAB,
    assert_history_page,
    assert_installs_what_the_steps_need,
    halve_correct_answers,
    junit,
    runner_env,
)

yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow

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
    env = runner_env(
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
            halve_correct_answers(work / "run.json")
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
    assert_installs_what_the_steps_need(config["variables"]["KAGREPORT"])


def test_the_gitlab_pipeline_runs_here(tmp_path: Path, gitlab_api: str) -> None:
    first = _gitlab_pipeline(tmp_path, gitlab_api, 1, main=True, regress=False)
    assert first["status"] == 0, first["stderr"]
    assert "No baseline yet" in first["log"]
    assert len(list((first["work"] / "history").glob("*.json"))) == 1
    assert (first["work"] / "public" / "index.html").is_file()

    second = _gitlab_pipeline(tmp_path, gitlab_api, 2, main=True, regress=False)
    assert second["status"] == 0, second["stderr"]
    assert (second["work"] / "gate" / "gate.md").read_text(encoding="utf-8") in second["log"]
    assert junit(second["work"] / "gate/gate.xml").get("failures") == "0"
    assert len(list((second["work"] / "history").glob("*.json"))) == 2
    assert_history_page(second["work"] / "public", runs=2)

    regression = _gitlab_pipeline(tmp_path, gitlab_api, 3, main=False, regress=True)
    assert regression["status"] == 1, regression["stderr"]
    assert int(junit(regression["work"] / "gate/gate.xml").get("failures", "0")) >= 1
    assert "fail" in regression["log"].lower()
    assert len(list((regression["work"] / "history").glob("*.json"))) == 2
    # The job token went to the artifacts API, the one host it belongs to, every time.
    assert _Artifacts.tokens == [TOKEN, TOKEN, TOKEN]

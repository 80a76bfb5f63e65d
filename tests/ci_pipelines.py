"""What the CI example tests share: a CI runner's environment, git, the regression a
pipeline is fed, and the checks of what a pipeline leaves (the JUnit file, the history)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
GITHUB = REPO / "docs" / "ci" / "github-actions.yml"
GITLAB = REPO / "docs" / "ci" / "gitlab-ci.yml"
BIN = Path(sys.executable).parent
SETUP_STEPS = {"install"}  # installs kagreport: this environment has it


def runner_env(tmp: Path, **extra: str) -> dict[str, str]:
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


def seed_env(tmp: Path) -> dict[str, str]:
    """The test's own commits (the project being built), with an identity."""
    return runner_env(
        tmp, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
    )  # fmt: skip


def assert_installs_what_the_steps_need(requirement_text: str) -> None:
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


def git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def halve_correct_answers(run_json: Path) -> None:
    """Halve the correct answers of every system: a regression far beyond a 2-point margin."""
    from kagreport.runs import Run

    run = Run.read(run_json)
    correct = run.metrics["correct"].copy()
    correct[::2] = np.where(np.isnan(correct[::2]), np.nan, 0.0)
    dataclasses.replace(run, metrics={**run.metrics, "correct": correct}).write(run_json)


def history_runs(origin: Path, env: dict[str, str]) -> list[str]:
    try:
        listing = git("ls-tree", "--name-only", "benchmark-history", cwd=origin, env=env)
    except subprocess.CalledProcessError:
        return []
    return sorted(name for name in listing.splitlines() if name.endswith(".json"))


def assert_history_page(site: Path, runs: int) -> None:
    """The site's history page, with a page for each run of the history."""
    assert (site / "history" / "index.html").is_file(), "the site has no history page"
    pages = [p for p in (site / "history").glob("*.html") if p.name != "index.html"]
    assert len(pages) == runs, sorted(p.name for p in pages)


def junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    return root if root.tag == "testsuite" else root.find("testsuite")  # type: ignore[return-value]

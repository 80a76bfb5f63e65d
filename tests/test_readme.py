"""The README is a front door, not a manual, and what it tells people to type works (issue 30,
item 1): at most 200 lines; its links lead to pages that exist; its command-line quick start
runs as written in a fresh copy of the repository with the virtual environment ``make demo``
makes; its notebook cells run; and the guides' marked examples run as written from the root
of a clone.

The copy holds the files git tracks or would track (``git ls-files``, untracked files not
ignored included, so an edit is tested before it is committed); its ``.venv`` is this
interpreter's environment, and ``PYTHONPATH`` puts the copy's ``src`` first, so the
``kagreport`` on the PATH runs the code under test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from markdown_blocks import marked_blocks

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
# A Markdown link or an <img src>; the target up to a fragment.
_LINK = re.compile(r"\]\((?P<a>[^)#\s]+)(?:#[^)]*)?\)|<img src=\"(?P<b>[^\"]+)\"")


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 200, f"README.md has {lines} lines"


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_relative_links_lead_to_files_that_exist(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = []
    for match in _LINK.finditer(text):
        target = match["a"] or match["b"]
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        resolved = (page.parent / target).resolve()
        if not resolved.exists():
            missing.append(target)
    assert missing == []


def test_the_guides_link_only_documentation_pages() -> None:
    """A guide links other docs pages, never the README (the site does not hold it)."""
    for page in GUIDES:
        assert "README" not in re.findall(r"\]\(([^)]*)\)", page.read_text(encoding="utf-8"))


def test_the_readme_marks_its_quick_starts() -> None:
    shell = marked_blocks(README, "runnable")
    cells = marked_blocks(README, "notebook")
    assert [b.language for b in shell] == ["sh"]
    commands = [line for line in shell[0].code.splitlines() if line.startswith("kagreport ")]
    assert len(commands) == 5, commands
    assert [c.language for c in cells] == ["python", "python"]
    code = [line for c in cells for line in c.code.splitlines() if line.strip()]
    assert len(code) <= 10, code


# --------------------------------------------------------------------------- running them


def _copy_of_the_repository(into: Path) -> Path:
    """The files of a fresh clone (with edits not yet committed), and ``make demo``'s .venv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet staged is listed too
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    (into / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return into


def _environment(copy: Path, *, activated: bool = False) -> dict[str, str]:
    """The environment of a shell in ``copy``; ``activated``: after ``source .venv/bin/activate``
    (the guides' commands assume it, the README's quick start does it itself)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy / "src")
    env.pop("VIRTUAL_ENV", None)
    if activated:
        env["PATH"] = os.pathsep.join([str(copy / ".venv" / "bin"), env.get("PATH", "")])
    return env


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if not (Path(sys.prefix) / "bin" / "activate").exists():
        pytest.skip("the tests do not run in a virtual environment")
    return _copy_of_the_repository(tmp_path / "kagreport")


def _run(language: str, code: str, cwd: Path, env: dict[str, str]) -> str:
    command = ["bash", "-e", "-c", code] if language == "sh" else [sys.executable, "-c", code]
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_readme_command_line_quick_start_runs_as_written(copy: Path) -> None:
    (block,) = marked_blocks(README, "runnable")
    out = _run(block.language, block.code, copy, _environment(copy))
    assert "gemini-1-5-pro-002" in out  # kagreport demo's table of the real run
    assert "kag-large" in out  # the stats table of the simulated one
    assert (copy / "sim" / "SIMULATED.md").is_file()
    assert (copy / "public" / "index.html").is_file()


@pytest.mark.slow
def test_the_readme_notebook_cells_run(copy: Path) -> None:
    code = "\n".join(cell.code for cell in marked_blocks(README, "notebook"))
    out = _run("python", code, copy, _environment(copy))
    assert out.startswith("Datasets:")  # the kag stats table
    figure = (copy / "figure.svg").read_text(encoding="utf-8")
    assert "SIMULATED" in figure  # the chart of a simulated run says so


GUIDES_WITH_EXAMPLES = [page for page in GUIDES if marked_blocks(page, "runnable")]


def test_every_import_guide_has_a_runnable_example() -> None:
    pages = {page.name for page in GUIDES_WITH_EXAMPLES}
    formats = ["kagreport", "kag", "lm-eval", "helm", "promptfoo", "openai-evals", "inspect", "eee"]
    assert {f"import-{name}.md" for name in formats} <= pages


@pytest.mark.slow
@pytest.mark.parametrize("page", GUIDES_WITH_EXAMPLES, ids=lambda p: p.name)
def test_a_guide_s_examples_run_as_written(page: Path, copy: Path) -> None:
    for block in marked_blocks(page, "runnable"):
        _run(block.language, block.code, copy, _environment(copy, activated=True))


@pytest.mark.slow
def test_the_readme_picture_is_redrawn_from_the_simulated_example(tmp_path: Path) -> None:
    """``make figures`` draws it; the committed picture and a fresh one both say SIMULATED and
    where the data come from."""
    out = tmp_path / "accuracy-cost.svg"
    script = ROOT / "examples" / "build_readme_figure.py"
    _run(
        "python",
        f"import runpy; runpy.run_path({str(script)!r}, run_name='x')['main']({str(out)!r})",
        ROOT,
        dict(os.environ),
    )
    for svg in (out, ROOT / "docs" / "images" / "accuracy-cost.svg"):
        text = svg.read_text(encoding="utf-8")
        assert "SIMULATED: Accuracy against mean" in text
        assert "Data: SIMULATED by kagreport simulate" in text
        assert "no model was run" in text

"""The documentation site (``make docs``, issue 30): it builds with no warning and no broken
reference, the API page of ``AnswerEvaluation`` lists every member of the specification, the
CLI page has every command of the parser the command uses, and no page loads anything from the
network.

The build runs once, on a copy of ``docs/`` (so that the broken-reference test can add a page
to it), with the flags of ``make docs``, which a test reads from the Makefile."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kagreport.cli._main import build_parser

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("-W", "--keep-going", "-n")
# ANSWER_EVALUATION_SPEC.md, "AnswerEvaluation": its fields, then its methods and properties.
MEMBERS = (
    "metrics",
    "items",
    "judges",
    "agreement",
    "usage",
    "errors",
    "settings",
    "metadata",
    "compare",
    "dumps",
    "from_dict",
    "per_item",
    "read",
    "to_dict",
    "to_rows",
    "write",
    "coverage",
    "n_items",
)


def _sphinx(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sphinx", *FLAGS, "-q", "-b", "html"]
    return subprocess.run(
        [*command, "-d", str(out / "doctrees"), str(source), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The copied sources and the output folder of one build."""
    base = tmp_path_factory.mktemp("docs")
    source = base / "source"
    shutil.copytree(ROOT / "docs", source, ignore=shutil.ignore_patterns("_build"))
    done = _sphinx(source, base / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert "ERROR" not in done.stderr, done.stderr
    return source, base / "out"


@pytest.fixture(scope="module")
def html(build: tuple[Path, Path]) -> Path:
    return build[1] / "html"


def test_make_docs_fails_on_warnings_and_broken_references() -> None:
    recipe = re.search(r"^docs:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe is not None
    command = next(line for line in recipe.group(1).splitlines() if "sphinx" in line).split()
    assert set(FLAGS) <= set(command)
    assert command[-2:] == ["docs", "docs/_build/html"]


def test_the_answer_evaluation_page_lists_every_member_of_the_specification(
    html: Path,
) -> None:
    page = (html / "api" / "kagreport.evaluation.html").read_text()
    assert 'id="kagreport.evaluation.AnswerEvaluation"' in page
    missing = [m for m in MEMBERS if f'id="kagreport.evaluation.AnswerEvaluation.{m}"' not in page]
    assert missing == []


def test_each_public_name_has_one_home(html: Path) -> None:
    # AnswerEvaluation is exported by kagreport and kagreport.evaluation: documented once, in
    # the package that defines it; the top level links there.
    top = (html / "api" / "kagreport.html").read_text()
    assert 'id="kagreport.AnswerEvaluation"' not in top
    assert 'href="kagreport.evaluation.html#kagreport.evaluation.AnswerEvaluation"' in top


def _parsers(
    parser: argparse.ArgumentParser,
) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def test_the_cli_page_has_every_command_and_option_of_the_parser(html: Path) -> None:
    page = (html / "cli.html").read_text()
    parsers = _parsers(build_parser())
    assert {p.prog for p in parsers} >= {"kagreport stats find", "kagreport site build"}
    for parser in parsers:
        anchor = re.sub(r"[^a-z0-9]+", "-", parser.prog.lower())
        assert f'id="{anchor}"' in page, parser.prog
        for action in parser._actions:
            if action.help != argparse.SUPPRESS:
                for option in action.option_strings:
                    assert option in page, (parser.prog, option)
                if action.help:
                    assert _text(str(action.help).split("%(")[0][:40]) in page, action.help


def _text(value: str) -> str:
    """As the page writes it (HTML-escaped)."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Loads(HTMLParser):
    """The URLs a page loads (scripts, styles, images, frames, fonts), not the ones it links."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "link" or (tag != "a" and "src" in values):
            url = values.get("href") if tag == "link" else values.get("src")
            if url:
                self.urls.append(url)
        if values.get("style"):
            self.styles.append(values["style"] or "")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


_NETWORK = re.compile(r"^\s*['\"]?\s*(https?:)?//", re.I)
_CSS_URL = re.compile(r"url\(([^)]*)\)|@import\s+(['\"][^'\"]*['\"])", re.I)


def _css_network(css: str) -> list[str]:
    found = []
    for match in _CSS_URL.finditer(css):
        target = match.group(1) or match.group(2) or ""
        if _NETWORK.match(target):
            found.append(target)
    return found


def test_no_page_loads_anything_from_the_network(html: Path) -> None:
    pages = sorted(html.rglob("*.html"))
    assert len(pages) > 20
    remote: list[str] = []
    for page in pages:
        loads = _Loads()
        loads.feed(page.read_text())
        remote += [f"{page.name}: {url}" for url in loads.urls if _NETWORK.match(url)]
        remote += [f"{page.name}: {url}" for css in loads.styles for url in _css_network(css)]
    for sheet in sorted(html.rglob("*.css")):
        remote += [f"{sheet.name}: {url}" for url in _css_network(sheet.read_text())]
    for script in sorted(html.rglob("*.js")):
        # A script that fetches fonts or modules from a CDN names one.
        remote += [
            f"{script.name}: {m}" for m in re.findall(r"https?://cdn[^\s'\"]*", script.read_text())
        ]
    assert remote == []


def test_the_network_check_sees_what_it_must() -> None:
    loads = _Loads()
    loads.feed(
        '<script src="https://cdn.example/x.js"></script><link href="//fonts.example/f.css">'
        '<a href="https://example.org/">a link loads nothing</a>'
        "<style>@font-face { src: url(https://fonts.example/f.woff2) }</style>"
    )
    assert [u for u in loads.urls if _NETWORK.match(u)] == [
        "https://cdn.example/x.js",
        "//fonts.example/f.css",
    ]
    assert _css_network(loads.styles[0]) == ["https://fonts.example/f.woff2"]
    assert (
        _css_network("a { background: url('data:image/svg+xml,<svg xmlns=\"http://w\"/>') }") == []
    )
    assert _css_network('@import "https://fonts.example/css";') == ['"https://fonts.example/css"']


def test_a_broken_reference_fails_the_build(build: tuple[Path, Path]) -> None:
    source, out = build
    page = source / "broken.md"
    page.write_text("---\norphan: true\n---\n# Broken\n\n{py:func}`kagreport.no_such_function`\n")
    try:
        done = _sphinx(source, out)  # reads only the new page: the rest is cached
    finally:
        page.unlink()
    assert done.returncode != 0
    assert "kagreport.no_such_function" in done.stderr


def test_the_types_public_names_return_are_documented(html: Path) -> None:
    # A leaderboard row, a frontier point, a clustered mean: what users read the fields of,
    # documented on the page of the package whose names return them (not exported).
    expected = {
        "kagreport.runs": ["runs._leaderboard.LeaderboardRow", "runs._views.FrontierPoint"],
        "kagreport.grading": ["grading._report.SetupReport", "grading._items.ItemTable"],
        "kagreport.stats": ["stats._clustered.MeanEstimate", "stats._paired.PairedDifference"],
    }
    for package, paths in expected.items():
        page = (html / "api" / f"{package}.html").read_text()
        for path in paths:
            assert f'id="kagreport.{path}"' in page, (package, path)
    runs = (html / "api" / "kagreport.runs.html").read_text()
    assert 'href="#kagreport.runs._leaderboard.LeaderboardRow"' in runs  # from leaderboard

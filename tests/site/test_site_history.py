"""``kagreport site build --history DIR``: runs of any format ordered by the time each
records (the file time as a stated fallback), the history page and a light page per run,
stray entries skipped, names escaped. Numbers: the frame's, checked in tests/runs."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from markupsafe import escape

from conftest import run_cli
from kagreport.runs import Run

HOSTILE = '<script>alert("x")</script>&'
RUN_NAME = 'a-<img src=x onerror="alert(1)">&'  # a file name: no "/"
LMEVAL = Path(__file__).parents[1] / "data" / "sources" / "lm-eval" / "lm-eval-0.4.13" / "output"


def _run(rates: list[float], created: str | None, seed: int) -> Run:
    n = 150
    rng = np.random.default_rng(seed)
    values = np.concatenate([(rng.random(n) < r).astype(float) for r in rates])
    return Run(
        kind="answers",
        systems=("base", HOSTILE),
        dataset_names=("d",),
        question_names=tuple(f"q{i}" for i in range(n)),
        system=np.repeat(np.arange(2), n).astype(np.int32),
        dataset=np.zeros(len(values), dtype=np.int32),
        question=np.tile(np.arange(n), 2).astype(np.int32),
        outcome=np.where(values == 1.0, 0, 1).astype(np.int8),
        metrics={"correct": values},
        metadata={"tool": "test"} | ({} if created is None else {"created": created}),
    )


@pytest.fixture(scope="module")
def history_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("history")
    folder = root / "runs"
    folder.mkdir()
    _run([0.5, 0.2], "2026-01-01T00:00:00Z", 1).write(folder / "b-first.json")
    _run([0.5, 0.9], "2026-01-03T00:00:00Z", 2).write(folder / f"{RUN_NAME}.json")
    # No recorded time: its file time (2026-01-02) places it between the two.
    untimed = folder / "c-untimed.json"
    _run([0.5, 0.25], None, 3).write(untimed)
    stamp = 1767312000  # 2026-01-02T00:00:00Z (date -u -d @1767312000)
    os.utime(untimed, (stamp, stamp))
    shutil.copytree(LMEVAL, folder / "lm-eval-run")  # another format, its own systems
    (folder / "README.md").write_text("notes, not a run\n")
    (folder / ".DS_Store").write_bytes(b"\0\1")
    done = run_cli("site", "build", "--history", folder, "-o", root / "site")
    assert done.returncode == 0, done.stderr
    return root / "site", done.stderr


def test_runs_are_ordered_by_recorded_time_with_the_file_time_marked(
    history_site: tuple[Path, str],
) -> None:
    site, _ = history_site
    page = (site / "history" / "index.html").read_text()
    table = page[page.index('id="history-runs-table"') : page.index("</table>")]
    names = [html.unescape(n) for n in re.findall(r'<tr data-run="([^"]*)"', table)]
    assert names[:3] == ["b-first", "c-untimed", RUN_NAME]
    untimed = table[table.index('data-run="c-untimed"') :].split("</tr>")[0]
    assert "2026-01-02T00:00:00Z" in untimed
    assert "file time" in untimed
    run_page = (site / "history" / "c-untimed.html").read_text()
    assert "file time" in run_page
    assert "modification time" in run_page


def test_stray_entries_are_skipped_and_said(history_site: tuple[Path, str]) -> None:
    site, stderr = history_site
    assert "skipped README.md" in stderr
    assert ".DS_Store" in stderr
    page = (site / "history" / "index.html").read_text()
    assert "README.md" in page
    assert "Hidden entries left alone: .DS_Store" in page
    index = (site / "index.html").read_text()
    assert 'href="history/index.html"' in index


def test_names_are_escaped_and_rows_link_to_run_pages(history_site: tuple[Path, str]) -> None:
    site, _ = history_site
    for page in (site / "history").glob("*.html"):
        text = page.read_text()
        for raw in (HOSTILE, RUN_NAME):  # never raw: escaped in HTML, in the chart JSON
            assert raw not in text, page
        for href in re.findall(r'<a href="([^"#]+)"', text):
            if not href.startswith(("../", "http")):
                assert (page.parent / html.unescape(href)).is_file(), (page, href)
    page = (site / "history" / "index.html").read_text()
    assert str(escape(HOSTILE)) in page
    specs = re.findall(
        r'<script type="application/json" class="vega-spec"[^>]*>(.*?)</script>', page
    )
    assert specs
    data = [json.loads(s) for s in specs]
    hrefs = {v.get("href") for d in data for ds in d.get("datasets", {}).values() for v in ds}
    assert {"b-first.html", "c-untimed.html"} <= hrefs


def test_a_significant_change_is_marked(history_site: tuple[Path, str]) -> None:
    site, _ = history_site
    page = (site / "history" / "index.html").read_text()
    # The hostile system: 20% -> 25% -> 90% on 150 shared items: the jump is significant.
    section = page[page.index(f"{escape(HOSTILE)}: correct") :].split("</section>")[0]
    assert section.count('class="significant"') == 1
    assert "paired sign-flip" in section


def test_a_folder_with_no_run_fails_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "README.md").write_text("x")
    done = run_cli("site", "build", "--history", folder, "-o", tmp_path / "site")
    assert done.returncode == 1
    assert done.stderr.count("\n") <= 3
    assert "holds no run kagreport reads" in done.stderr
    assert str(folder) in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def converted_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A history of kag runs as a new user makes one: `kagreport simulate`, then `kagreport
    convert` (the tree records no time: convert keeps its files' newest modification time,
    created_from=file), a stray README beside them; a history-only site."""
    root = tmp_path_factory.mktemp("converted")
    folder = root / "hist"
    folder.mkdir()
    for k in (1, 2):
        tree = root / f"sim{k}"
        done = run_cli("simulate", "--questions", "8", "--datasets", "1", "--seed", str(k), tree)
        assert done.returncode == 0, done.stderr
        stamp = 1767225600 + 3600 * k  # 2026-01-01T01:00:00Z, 02:00 (date -u -d @1767229200)
        for path in [tree / "results", *(tree / "results").rglob("*")]:
            os.utime(path, (stamp, stamp))
        done = run_cli(
            "convert",
            "-d",
            tree / "datasets.json",
            tree / "results",
            "-o",
            folder / f"run-{k}.json",
        )
        assert done.returncode == 0, done.stderr
    (folder / "README.md").write_text("notes, not a run\n")
    _run([0.5, 0.2], "2026-01-03T00:00:00Z", 1).write(folder / "measured.json")  # not SIMULATED
    done = run_cli("site", "build", "--history", folder, "-o", root / "site")
    assert done.returncode == 0, done.stderr
    return root / "site", done.stderr


def test_a_converted_run_is_said_to_have_a_file_time(converted_site: tuple[Path, str]) -> None:
    site, _ = converted_site
    page = (site / "history" / "run-1.html").read_text()
    assert "2026-01-01T01:00:00Z" in page
    assert "file time" in page
    assert "recorded by" not in page  # kag records no time
    assert "kagreport convert" in page  # which file time: the one convert kept
    index = (site / "history" / "index.html").read_text()
    table = index[index.index('id="history-runs-table"') : index.index("</table>")]
    for run in ("run-1", "run-2"):
        row = table[table.index(f'data-run="{run}"') :].split("</tr>")[0]
        assert "file time" in row, row
        assert "kept by convert" in row, row


def test_the_fallback_file_time_is_the_entry_s(history_site: tuple[Path, str]) -> None:
    site, _ = history_site
    page = (site / "history" / "c-untimed.html").read_text()
    assert "history entry" in page
    assert "kagreport convert" not in page


def test_simulated_runs_are_labelled_on_the_history_pages(
    converted_site: tuple[Path, str],
) -> None:
    site, _ = converted_site
    for run in ("run-1", "run-2"):  # each one's page: the notice every SIMULATED page has
        page = (site / "history" / f"{run}.html").read_text()
        assert '<p class="simulated" role="note"><strong>SIMULATED</strong>' in page, run
    measured = (site / "history" / "measured.html").read_text()
    assert "SIMULATED" not in measured
    index = (site / "history" / "index.html").read_text()
    assert "2 of the 3 runs are SIMULATED data" in index
    table = index[index.index('id="history-runs-table"') : index.index("</table>")]
    for run in ("run-1", "run-2", "measured"):  # per run in the list of runs
        row = table[table.index(f'data-run="{run}"') :].split("</tr>")[0]
        assert ("SIMULATED" in row) == (run != "measured"), row
    # The charts of the SIMULATED runs' systems say so; those of the measured run's do not.
    sections = re.findall(
        r'<section class="history"[^>]* data-system="([^"]*)">(.*?)</section>', index, re.S
    )
    measured_systems = {"base", HOSTILE}
    assert measured_systems < {html.unescape(system) for system, _ in sections}
    for system, section in sections:
        spec = re.findall(
            r'<script type="application/json" class="vega-spec"[^>]*>(.*?)</script>', section, re.S
        )
        title = json.loads(spec[0])["title"]
        said = json.dumps(title["text"]).startswith('"SIMULATED: ')
        assert said == (html.unescape(system) not in measured_systems), (system, title)
    overview = (site / "index.html").read_text()
    section = overview[overview.index('<section id="history">') :].split("</section>")[0]
    assert "2 of the 3 runs are SIMULATED data" in section


def test_a_measured_run_is_not_labelled_simulated(history_site: tuple[Path, str]) -> None:
    site, _ = history_site
    for page in (site / "history").glob("*.html"):
        assert "SIMULATED" not in page.read_text(), page


def test_a_skipped_entry_is_said_in_one_phrase(converted_site: tuple[Path, str]) -> None:
    site, stderr = converted_site
    line = next(x for x in stderr.splitlines() if "skipped README.md" in x)
    assert line.count("kagreport reads") == 1, line
    page = (site / "history" / "index.html").read_text()
    skipped = page[page.index('id="history-skipped"') :].split("</p>")[0]
    assert skipped.count("kagreport reads") == 1, skipped


def test_a_history_only_site_offers_no_data(converted_site: tuple[Path, str]) -> None:
    site, _ = converted_site
    assert not (site / "data").exists()
    for page in [site / "index.html", *(site / "history").glob("*.html")]:
        assert "Data for download" not in page.read_text(), page


def test_a_site_with_a_run_offers_its_data(tmp_path: Path) -> None:
    document = tmp_path / "r.json"
    _run([0.5, 0.2], "2026-01-01T00:00:00Z", 1).write(document)
    done = run_cli("site", "build", "--run", document, "-o", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "Data for download" in (tmp_path / "site" / "index.html").read_text()


def test_a_missing_history_folder_is_said_to_be_missing(tmp_path: Path) -> None:
    missing = run_cli("site", "build", "--history", tmp_path / "nope", "-o", tmp_path / "s")
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0, missing.stderr
    assert "no such folder" in missing.stderr
    assert str(tmp_path / "nope") in missing.stderr
    afile = tmp_path / "a.json"
    afile.write_text("{}")
    done = run_cli("site", "build", "--history", afile, "-o", tmp_path / "s")
    assert done.returncode == 1
    assert "not a folder" in done.stderr
    assert "no such folder" not in done.stderr


def test_runs_whose_names_collide_are_all_kept(tmp_path: Path) -> None:
    # `m.json` (stem `m`, the name of the folder beside it) and `m.json.json` (stem
    # `m.json`, the other's whole name): before, one silently replaced the other.
    from types import SimpleNamespace

    from kagreport.site._history import read_history

    folder = tmp_path / "runs"
    folder.mkdir()
    _run([0.5, 0.2], "2026-01-01T00:00:00Z", 1).write(folder / "m.json")
    _run([0.5, 0.3], "2026-01-02T00:00:00Z", 2).write(folder / "m.json.json")
    shutil.copytree(LMEVAL, folder / "m")
    said: list[str] = []
    site = SimpleNamespace(say=said.append, warn=said.append)
    runs, _, _ = read_history(site, folder)  # type: ignore[arg-type]
    assert len(runs) == 3, sorted(runs)
    assert runs["m.json"].metadata["created"] == "2026-01-01T00:00:00Z"
    assert runs["m.json.json"].metadata["created"] == "2026-01-02T00:00:00Z"


def test_a_kag_tree_in_the_folder_is_skipped_saying_how_to_convert_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.site._history import read_history

    folder = tmp_path / "runs"
    folder.mkdir()
    _run([0.5, 0.2], "2026-01-01T00:00:00Z", 1).write(folder / "a.json")
    shutil.copytree(mmlu_pro_philosophy().results, folder / "tree")
    said: list[str] = []
    site = SimpleNamespace(say=said.append, warn=said.append)
    runs, _, found = read_history(site, folder)  # type: ignore[arg-type]
    assert list(runs) == ["a"]
    (skipped,) = found.skipped
    assert "kagreport convert tree --datasets FILE -o tree.json" in skipped

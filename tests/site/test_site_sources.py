"""Site pages of runs of other tools (``site build --run PATH``, ``[[sources]]``).

The expected leaderboard numbers come from each fixture's own aggregates: promptfoo's
``prompts[].metrics.testPassCount`` (over pass + fail + error counts), lm-eval's
``results[task]["acc,none"]`` / ``"exact_match,strict-match"`` times the task's
``n-samples.effective``; the Wilson bounds from the formula (Wilson 1927) written out here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from conftest import PAYLOAD, run_cli
from kagreport import KagreportError, read_run
from kagreport.runs import Run, leaderboard
from kagreport.site import SiteConfig, SourceConfig, build_site
from kagreport.site._run import headline_metric
from kagreport.site._slugs import slugify
from kagreport.site._templates import page_csp, script_loader

DATA = Path(__file__).resolve().parents[1] / "data" / "sources"
PROMPTFOO = DATA / "promptfoo" / "results.json"
TWO_PROMPTS = DATA / "promptfoo" / "two-prompts.jsonl"
LMEVAL = DATA / "lm-eval" / "lm-eval-0.4.13" / "output"  # lm-eval 0.4.13's own output


class _Page(HTMLParser):
    """The leaderboard cells (system -> data-key -> attributes) and every script tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: dict[str, dict[str, dict[str, str | None]]] = {}
        self.scripts: list[dict[str, str | None]] = []
        self.system: str | None = None
        self.in_leaderboard = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.in_leaderboard = "leaderboard" in str(a.get("class"))
        if tag == "script":
            self.scripts.append(a)
        if self.in_leaderboard and tag == "tr" and a.get("data-system"):
            self.system = a["data-system"]
            self.cells[str(self.system)] = {}
        if self.in_leaderboard and tag == "td" and self.system and a.get("data-key"):
            self.cells[self.system][str(a["data-key"])] = a

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_leaderboard = False


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _promptfoo_counts() -> dict[str, tuple[int, int]]:
    """System -> (passed, tests) from promptfoo's own prompts[].metrics."""
    document = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    found = {}
    for prompt in document["results"]["prompts"]:
        m = prompt["metrics"]
        total = m["testPassCount"] + m["testFailCount"] + m["testErrorCount"]
        found[prompt["provider"]] = (m["testPassCount"], total)
    return found


def _lmeval_counts() -> dict[str, tuple[int, int]]:
    """System -> (correct, items) from lm-eval's results_*.json: the run's headline is the
    first metric lm-eval prints, acc under the filter none (arc_easy; gsm8k has none), x
    n-samples."""
    found = {}
    for path in sorted(LMEVAL.glob("*/results_*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        correct = total = 0.0
        for task, values in document["results"].items():
            if "acc,none" not in values or task in document.get("groups", {}):
                continue  # a group's acc is its tasks' items again
            n = document["n-samples"][task]["effective"]
            correct += values["acc,none"] * n
            total += n
        found[document["model_name"]] = (round(correct), int(total))
    return found


def _check_leaderboard(page: Path, expected: dict[str, tuple[int, int]], run: Run) -> None:
    """The leaderboard rows of ``expected``'s systems on ``page`` (the index): a run whose
    every row has an outcome shows kag's columns (accuracy, correct, total), any other its
    metric's mean (mean, correct, n_defined)."""
    cells = _parse(page).cells
    assert set(expected) <= set(cells)
    # The API's leaderboard of the metric the pages rank by: the run's headline.
    api = {row.system: row for row in leaderboard(run, headline_metric(run))}
    for system, (k, n) in expected.items():
        mine = cells[system]
        mean = mine.get("accuracy") or mine["mean"]
        assert float(str(mean["data-value"])) == pytest.approx(k / n, abs=1e-12)
        assert float(str(mean["data-value"])) == pytest.approx(api[system].mean, abs=1e-12)
        low, high = _wilson(k, n)
        assert float(str(mean["data-low"])) == pytest.approx(low, abs=1e-9)
        assert float(str(mean["data-high"])) == pytest.approx(high, abs=1e-9)
        assert int(str(mine["correct"]["data-value"])) == k
        assert int(str((mine.get("total") or mine["n_defined"])["data-value"])) == n


def _section(out: Path, slug: str) -> str:
    """The index's section of one run."""
    index = (out / "index.html").read_text(encoding="utf-8")
    start = index.index(f'<section class="run" id="run-{slug}">')
    return index[start : index.index("</section>", start)]


def test_cli_builds_a_page_set_per_run(tmp_path: Path) -> None:
    out = tmp_path / "site"
    lmeval = tmp_path / "lm-eval"  # a run is named by its folder
    shutil.copytree(LMEVAL, lmeval)
    done = run_cli("site", "build", "--run", PROMPTFOO, "--run", lmeval, "-o", out)
    assert done.returncode == 0, done.stderr
    _check_leaderboard(out / "index.html", _promptfoo_counts(), read_run(PROMPTFOO))
    _check_leaderboard(out / "index.html", _lmeval_counts(), read_run(LMEVAL))
    index = (out / "index.html").read_text(encoding="utf-8")
    for name, path in (("results", PROMPTFOO), ("lm-eval", LMEVAL)):
        # The run document keeps texts cut as on the pages (every fixture's are shorter).
        assert Run.read(out / f"data/runs/{name}/run.json") == read_run(path)
        assert f'href="#run-{name}"' in index
    # lm-eval: three systems on the same items, each against the best (lm-eval's tiny25
    # acc: seed0 0.2727, seed3 0.1818, seed1 0), one Holm family, its forest plot.
    assert "paired sign-flip test" in index
    documents = sorted((out / "data/comparisons").glob("lm-eval--*.json"))
    assert len(documents) == 2
    for document in documents:
        comparison = json.loads(document.read_text("utf-8"))
        assert comparison["metadata"]["holm_family"] == [  # in the run's system order
            "mock/dummy-seed1 vs mock/dummy-seed0",
            "mock/dummy-seed3 vs mock/dummy-seed0",
        ]
    assert (out / "figures/lm-eval--comparisons-forest.svg").is_file()
    # 16 items both hold, 11 of them with acc (the multiple-choice ones): the page says both
    # counts, as its table's Pairs column counts 11 (it said "16 paired items" only).
    for page in sorted((out / "comparisons").glob("lm-eval--*.html")):
        text = page.read_text("utf-8")
        assert "over 16 paired items, 11 of them with acc defined for both" in text
    # ... ranked by lm-eval's own headline (acc), not by every item's outcome: no
    # accuracy-against-cost chart, and a sentence saying so.
    assert "acc, the tool&#39;s own headline metric" in _section(out, "lm-eval")
    assert not list(out.glob("figures/lm-eval--accuracy-cost*"))
    # promptfoo records latency: the generation-time chart.
    assert (out / "figures/results--accuracy-cost.svg").is_file()
    for system in read_run(LMEVAL).systems:
        page = out / f"setups/lm-eval--{slugify(system)}.html"
        assert "items-data" in page.read_text(encoding="utf-8")


def test_site_toml_sources(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text(
        f'title = "Other tools"\n[[sources]]\npath = "{TWO_PROMPTS}"\nformat = "promptfoo"\n'
        'name = "Prompt A/B"\ncompare = "all-pairs"\nbaseline = "mini / polite"\n'
        f'[[sources]]\npath = "{LMEVAL / "mock__dummy-seed0"}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "site"
    done = run_cli("site", "build", config, "-o", out)
    assert done.returncode == 0, done.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "Every pair of systems" in index
    counts = {"mini / terse": (2, 2), "mini / polite": (0, 2)}  # by hand from the 4 lines
    _check_leaderboard(out / "index.html", counts, read_run(TWO_PROMPTS))
    assert "one system only" in _section(out, "mock__dummy-seed0")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[[sources]]\nformat = 'promptfoo'\n", "sources[0].path"),
        ("[[sources]]\npath = 'x'\nformat = 'nope'\n", "sources[0].format"),
        ("[[sources]]\npath = 'x'\nbogus = 1\n", "sources[0].bogus"),
        ("[[sources]]\npath = 'x'\ncompare = 'some'\n", "sources[0].compare"),
        ("[[sources]]\npath = 'x'\nname = ' '\n", "sources[0].name"),
        ("sources = 3\n", "sources"),
    ],
)
def test_sources_config_errors_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "site.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KagreportError, match=re.escape(f"`{key}`")):
        SiteConfig.from_toml(path)


def _promptfoo_line(provider: str, test: int, output: str, success: bool) -> str:
    return json.dumps(
        {
            "provider": {"id": provider},
            "prompt": {"raw": "Q?", "label": "p"},
            "promptIdx": 0,
            "testIdx": test,
            "vars": {"q": "x"},
            "response": {"output": output},
            "success": success,
            "score": 1 if success else 0,
            "namedScores": {},
            "latencyMs": 100,
            "failureReason": 0 if success else 1,
        }
    )


def test_hostile_response_is_escaped(tmp_path: Path) -> None:
    run = tmp_path / "hostile.jsonl"
    lines = [
        _promptfoo_line("evil" + PAYLOAD, 0, PAYLOAD + "<script>window.__xss=1</script>", True),
        _promptfoo_line("evil" + PAYLOAD, 1, "fine", False),
    ]
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    build_site(SiteConfig(sources=(SourceConfig(run),)), out)
    for page in sorted(out.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        root = "../" * len(page.relative_to(out).parent.parts)
        csp = escape(page_csp(root))
        assert f'<meta http-equiv="Content-Security-Policy" content="{csp}">' in text
        assert "<script>window.__xss" not in text
        assert "<script>alert(1)" not in text
        # every script is a vega spec or inline JSON data, but the one that adds the site's
        assert text.count(f"<script>{script_loader(root)}</script>") == 1
        data = [s for s in _parse(page).scripts if s.get("type") == "application/json"]
        assert len(_parse(page).scripts) == len(data) + 1, page
    system_pages = sorted(out.glob("setups/hostile--*.html"))
    assert len(system_pages) == 1
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in system_pages[0].read_text("utf-8")


def test_rebuild_is_byte_identical(tmp_path: Path) -> None:
    config = SiteConfig(sources=(SourceConfig(PROMPTFOO), SourceConfig(LMEVAL)))
    build_site(config, tmp_path / "a")
    build_site(config, tmp_path / "b")

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_runs_that_cannot_show_everything_still_build(tmp_path: Path) -> None:
    # No shared item: each provider answers a different test.
    apart = tmp_path / "apart.jsonl"
    apart.write_text(
        _promptfoo_line("a", 0, "x", True) + "\n" + _promptfoo_line("b", 1, "y", False) + "\n",
        encoding="utf-8",
    )
    # No `correct` metric: the promptfoo run without it, as a kagreport.run document.
    base = read_run(TWO_PROMPTS)
    metrics = {k: v for k, v in base.metrics.items() if k != "correct"}
    plain = tmp_path / "no-correct.json"
    dataclasses.replace(base, metrics=metrics).write(plain)
    out = tmp_path / "site"
    config = SiteConfig(sources=(SourceConfig(apart), SourceConfig(plain, compare="all-pairs")))
    build_site(config, out)
    text = (out / "index.html").read_text(encoding="utf-8")
    assert "share no item" in text
    assert not list((out / "data/comparisons").glob("apart--*.json"))
    text = _section(out, "no-correct")
    assert "no `correct` metric" in text
    first = next(iter(metrics))  # ranked by its first metric (the reader's order) instead
    assert f'data-metric="{first}"' in text


def test_unreadable_run_is_one_line_and_keeps_the_old_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert run_cli("site", "build", "--run", TWO_PROMPTS, "-o", out).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    missing = tmp_path / "missing.jsonl"
    done = run_cli("site", "build", "--run", TWO_PROMPTS, "--run", missing, "-o", out)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert str(missing) in done.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_unknown_baseline_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text(
        f'[[sources]]\npath = "{TWO_PROMPTS}"\nbaseline = "nobody"\n', encoding="utf-8"
    )
    out = tmp_path / "site"
    done = run_cli("site", "build", config, "-o", out)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert f"{config}: `sources[0].baseline`" in done.stderr
    assert "'nobody'" in done.stderr
    assert not out.exists()


def test_the_bundled_examples_include_the_inspect_logs_with_their_attribution() -> None:
    from kagreport.examples import inspect_popularity
    from kagreport.examples._attribution import INSPECT_ATTRIBUTION

    (source,) = SiteConfig.default().sources
    assert source.format == "inspect"
    assert source.attribution == INSPECT_ATTRIBUTION
    assert set(inspect_popularity().logs) <= set(source.path.iterdir())


def test_a_sources_attribution_is_shown_escaped(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text(
        f'[[sources]]\npath = "{TWO_PROMPTS}"\nattribution = "data <b>CC-BY</b>"\n',
        encoding="utf-8",
    )
    out = tmp_path / "site"
    done = run_cli("site", "build", config, "-o", out)
    assert done.returncode == 0, done.stderr
    page = _section(out, "two-prompts")
    assert '<p class="attribution">data &lt;b&gt;CC-BY&lt;/b&gt;</p>' in page


def test_a_partial_correct_ranks_and_compares_by_a_metric_every_system_has(
    tmp_path: Path,
) -> None:
    # The bundled Inspect logs: Llama's epoch means (0.5) leave its `correct` undefined,
    # so the pages use `match`, which both logs define, and pair their 2 shared samples
    # (1 and 2: the 10-sample log holds 1-10, the other 1-2).
    from kagreport.examples import inspect_popularity

    logs = inspect_popularity().logs
    out = tmp_path / "site"
    build_site(SiteConfig(sources=(SourceConfig(logs[0].parent, name="pop"),)), out)
    text = _section(out, "pop")
    assert 'data-metric="match"' in text
    assert "match, the tool&#39;s own headline metric" in text
    (document,) = (out / "data/comparisons").glob("pop--*.json")
    comparison = json.loads(document.read_text("utf-8"))
    (match,) = comparison["metrics"]
    assert (match["metric"], match["n_pairs"]) == ("match", 2)

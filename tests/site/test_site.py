"""The static report site: layout, links, offline assets, safe inline JSON, determinism,
atomic replacement and configuration errors (no browser here: see tests/browser/)."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import BIG_INT, LONG, PAYLOAD
from kagreport import KagreportError, grade
from kagreport.examples import mmlu_pro_philosophy
from kagreport.kag import simulate_run
from kagreport.runs import Run
from kagreport.site import RunConfig, SiteConfig, build_site
from kagreport.site._items import RESPONSE_LIMIT
from kagreport.site._json import inline_json
from kagreport.site._output import MARKER
from kagreport.site._slugs import slugify
from kagreport.site._templates import page_csp, script_loader


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.add(str(attributes["id"]))
        if tag == "script":
            self._script, self._text = attributes, []

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None


def _parse(path: Path) -> _Tags:
    parser = _Tags()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


# ---------------------------------------------------------------------- layout


def test_layout(site: Path, site_inputs: dict[str, Any]) -> None:
    config: SiteConfig = site_inputs["config"]
    first = grade(config.runs[0].datasets, config.runs[0].results)
    assert (site / "index.html").is_file()
    assert (site / MARKER).is_file()
    # data/report.json is the first run's kag stats JSON, byte for byte
    assert (site / "data/report.json").read_text(encoding="utf-8") == first.to_json()
    run_slug = slugify(config.runs[0].name)
    assert (site / f"data/runs/{run_slug}/report.json").read_text(
        encoding="utf-8"
    ) == first.to_json()
    assert (site / "data/runs/mmlu-pro-philosophy/report.json").is_file()
    for setup in first.setup_names:
        assert (site / f"setups/{run_slug}--{setup}.html").is_file()
    n = len(first.setup_names)
    comparisons = sorted((site / "comparisons").glob(f"{run_slug}--*--vs--*.html"))
    assert len(comparisons) == n * (n - 1) // 2  # all pairs
    for page in comparisons:
        assert (site / "data/comparisons" / (page.stem + ".json")).is_file()
    assert (site / "evaluations/answers.html").is_file()
    assert (site / "evaluations/comparison.html").is_file()
    assert (site / "data/evaluations/answers.json").is_file()
    svgs = sorted((site / "figures").glob("*.svg"))
    assert svgs
    for svg in svgs:
        assert svg.read_text(encoding="utf-8").lstrip().startswith("<svg")
    assert "window.vegaEmbed" in (site / "assets/vega.js").read_text(encoding="utf-8")
    assert (site / "assets/site.css").is_file()
    assert (site / "assets/site.js").is_file()
    assert (site / "assets/charts.js").is_file()


def test_each_run_folder_holds_its_run_document(site: Path, site_inputs: dict[str, Any]) -> None:
    """data/runs/<run>/run.json is the run's kagreport.run document: it reads back into the
    run model of the report the site graded, and the run's section of the index links it."""
    config: SiteConfig = site_inputs["config"]
    index = _parse(site / "index.html")
    links = [str(a.get("href")) for tag, a in index.tags if tag == "a"]
    for run_config in config.runs:
        relative = f"data/runs/{slugify(run_config.name)}/run.json"
        text = (site / relative).read_text(encoding="utf-8")
        assert json.loads(text)["schema"] == "kagreport.run"
        report = grade(
            run_config.datasets, run_config.results, run_config.prefix, keep_text=RESPONSE_LIMIT
        )
        # The texts cut as on the pages (what grading keeps with keep_text).
        assert Run.read(site / relative) == Run.from_stats(report)
        # Published without the local paths the run was read from.
        assert str(run_config.results) not in text
        # Linked beside the kag stats JSON (the runs table, the leaderboard's paragraph and
        # the Data list).
        assert links.count(relative) == 3
    # Independently of the run model: of the simulated run's graded datasets, one row per
    # result file (<dataset>/<question>/<setup>.json), the responses cut as on the setup
    # pages, one error message per error record.
    run = Run.read(site / f"data/runs/{slugify(config.runs[0].name)}/run.json")
    graded = {run.dataset_names[d] for d in run.dataset.tolist()}
    files = [
        p for p in sorted(site_inputs["results"].glob("sim-*/*/*.json")) if p.parts[-3] in graded
    ]
    records = [json.loads(path.read_text(encoding="utf-8")) for path in files]
    rows = {
        (run.dataset_names[d], run.question_names[q], run.systems[s])
        for s, d, q in zip(
            run.system.tolist(), run.dataset.tolist(), run.question.tolist(), strict=True
        )
    }
    assert len(rows) == len(run) == len(files)
    assert rows == {(p.parts[-3], p.parts[-2], p.stem) for p in files}
    assert run.responses is not None
    assert run.errors is not None
    assert "x" * RESPONSE_LIMIT in run.responses  # the LONG response, cut
    assert max(len(r or "") for r in run.responses) == RESPONSE_LIMIT
    assert sum(e is not None for e in run.errors) == sum("error" in r for r in records)


def test_every_chart_has_a_div_and_figures_have_an_svg(site: Path) -> None:
    linked: set[Path] = set()
    detail = 0
    for page in _pages(site):
        tags = _parse(page)
        svg_links = {
            (page.parent / str(a["href"])).resolve()
            for tag, a in tags.tags
            if tag == "a" and str(a.get("href", "")).endswith(".svg")
        }
        for attributes, text in tags.scripts:
            if "vega-spec" not in (attributes.get("class") or ""):
                continue
            spec = json.loads(text)
            assert "$schema" in spec
            chart_id = attributes.get("data-chart")
            if not chart_id:  # notebook charts have no figure file
                continue
            assert chart_id in tags.ids
            figure = (site / "figures" / f"{chart_id.removeprefix('chart-')}.svg").resolve()
            if figure in svg_links:
                assert figure.is_file()
                assert figure.read_text(encoding="utf-8").lstrip().startswith("<svg")
                linked.add(figure)
            else:  # a page's detail chart: drawn in the browser only
                where = page.parent.name
                assert (where, chart_id.rsplit("--", 1)[1]) in {
                    ("setups", "outcomes"),  # one setup's outcomes per dataset
                    ("comparisons", "forest"),  # all pairs: the rows of the two setups
                }, (page, chart_id)
                assert not figure.exists()
                detail += 1
    assert detail > 0
    # Every figure file is shown on some page; the run-level ones are there.
    assert linked == {p.resolve() for p in (site / "figures").glob("*.svg")}
    names = {p.name for p in linked}
    for kind in ("heatmap", "outcomes", "comparisons-forest"):
        assert f"mmlu-pro-philosophy--{kind}.svg" in names, kind
    # The simulated run recorded retrieval times; the MMLU-Pro predictions recorded no cost,
    # so their run says why it has no accuracy-against-cost chart instead of an empty one.
    assert any(n.endswith("--accuracy-cost.svg") and n.startswith("simulated") for n in names)
    assert "mmlu-pro-philosophy--accuracy-cost.svg" not in names
    assert "so there is no accuracy-against-cost chart" in (site / "index.html").read_text(
        encoding="utf-8"
    )


def test_links_resolve_and_nothing_comes_from_the_network(site: Path) -> None:
    parsed: dict[Path, _Tags] = {}  # each page parsed once: many links point into the same pages

    def parse(page: Path) -> _Tags:
        if page not in parsed:
            parsed[page] = _parse(page)
        return parsed[page]

    for page in _pages(site):
        tags = parse(page)
        for tag, attributes in tags.tags:
            for name in ("href", "src"):
                value = attributes.get(name)
                if value is None:
                    continue
                assert not re.match(r"(?i)\s*(https?:)?//", value), (page, tag, value)
                if value.startswith(("data:", "mailto:")):
                    continue
                path, _, fragment = value.partition("#")
                target = (page.parent / path).resolve() if path else page
                assert target.is_file(), f"{page.relative_to(site)}: {value}"
                if fragment and target.suffix == ".html":
                    assert fragment in parse(target).ids, f"{page}: {value}"
        for tag, attributes in tags.tags:
            if tag == "script" and attributes.get("src"):
                assert attributes["src"].endswith(
                    ("assets/vega.js", "assets/site.js", "assets/charts.js")
                )


def test_pages_use_the_one_shared_script(site: Path) -> None:
    # The page's one script that is not data adds the shared scripts, in this order.
    for page in _pages(site):
        root = "" if page.parent == site else "../"
        code = [text for a, text in _parse(page).scripts if a.get("type") != "application/json"]
        assert code == [script_loader(root)]
        shared = f'["{root}assets/vega.js","{root}assets/site.js","{root}assets/charts.js"]'
        assert f"var n={shared}," in code[0]


# ---------------------------------------------------------------------- safety


def test_inline_json_escapes() -> None:
    value = {"a": PAYLOAD, "b": "line\u2028sep\u2029", "c": BIG_INT, "d": float("nan")}
    text = inline_json(value)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == {**value, "d": None}
    assert f":{BIG_INT}" in text  # exact digits, a JSON number


def test_untrusted_text_cannot_break_out(site: Path) -> None:
    for page in _pages(site):
        html = page.read_text(encoding="utf-8")
        assert "</script><script>alert" not in html, page
        assert "<img src=x" not in html, page
        tags = _parse(page)
        # Every script element is one the site wrote: the one that adds the shared scripts
        # or inline JSON.
        opening = len(re.findall(r"<script\b", html, flags=re.IGNORECASE))
        assert opening == len(tags.scripts), page
        root = "" if page.parent == site else "../"
        for attributes, text in tags.scripts:
            if not attributes:
                assert text == script_loader(root)
                continue
            assert attributes.get("type") == "application/json", (page, attributes)
            assert "<" not in text, page
            json.loads(text)


def test_payload_survives_as_data(site: Path) -> None:
    """The markup is shown as text: the JSON holds it intact and the HTML holds it escaped."""
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Simulated &lt;/script&gt;&lt;script&gt;alert(1)" in index
    seen = False
    for page in sorted((site / "setups").glob("simulated-*.html")):
        tags = _parse(page)
        data = next(text for attrs, text in tags.scripts if attrs.get("id") == "items-data")
        rows = json.loads(data)["rows"]
        seen = seen or any(PAYLOAD in (row[4] or "") or PAYLOAD in (row[6] or "") for row in rows)
        assert all(row[4] is None or len(row[4]) <= RESPONSE_LIMIT for row in rows)
    assert seen


def test_big_integers_stay_exact(site: Path) -> None:
    page = (site / "evaluations/answers.html").read_text(encoding="utf-8")
    tags = _parse(site / "evaluations/answers.html")
    data = next(t for a, t in tags.scripts if a.get("id") == "evaluation-data")
    assert f'"ns_total":{BIG_INT}' in data
    assert str(BIG_INT) in page
    assert json.loads(data)["metadata"]["ns_total"] == BIG_INT


# ---------------------------------------------------------------------- content


def test_leaderboard_shows_the_report_numbers(site: Path, site_inputs: dict[str, Any]) -> None:
    report = json.loads((site / "data/report.json").read_text(encoding="utf-8"))
    wanted = f"data/runs/{slugify(site_inputs['config'].runs[0].name)}/report.json"
    cells: dict[str, dict[str, str]] = {}
    setup = None
    inside = False
    for tag, attributes in _parse(site / "index.html").tags:
        if tag == "table":
            inside = attributes.get("data-report") == wanted
        if not inside:
            continue
        if tag == "tr" and attributes.get("data-setup"):
            setup = str(attributes["data-setup"])
            cells[setup] = {}
        if tag == "td" and setup and attributes.get("data-key"):
            cells[setup][str(attributes["data-key"])] = str(attributes["data-value"])
    assert set(cells) == {s["setup"] for s in report["setups"]}
    for entry in report["setups"]:
        overall = entry["overall"]
        got = cells[entry["setup"]]
        assert json.loads(got["accuracy"]) == overall["accuracy"]
        assert int(got["correct"]) == overall["correct"]
        assert int(got["total"]) == overall["total"]
        assert int(got["errors"]) == overall["errors"]


def test_setup_page_items(site: Path, site_inputs: dict[str, Any]) -> None:
    config: SiteConfig = site_inputs["config"]
    report = grade(config.runs[0].datasets, config.runs[0].results)
    slug = slugify(config.runs[0].name)
    for setup in report.setups:
        page = site / f"setups/{slug}--{setup.setup}.html"
        tags = _parse(page)
        for needed in ("item-search", "items", "items-prev", "items-next", "items-count"):
            assert needed in tags.ids
        data = json.loads(next(t for a, t in tags.scripts if a.get("id") == "items-data"))
        col = {name: k for k, name in enumerate(data["columns"])}
        assert {"system", "dataset", "question", "outcome", "response"} <= set(col)
        assert len(data["rows"]) == setup.overall.total
        assert {row[col["system"]] for row in data["rows"]} == {setup.setup}
        outcomes = [row[col["outcome"]] for row in data["rows"]]
        assert outcomes.count("correct") == setup.overall.correct
        assert outcomes.count("error") == setup.overall.errors
    lengths = []
    for page in (site / "setups").glob(f"{slug}--*.html"):
        data = json.loads(next(t for a, t in _parse(page).scripts if a.get("id") == "items-data"))
        at = data["columns"].index("response_length")
        lengths += [row[at] for row in data["rows"]]
    assert LONG in lengths  # the full length is kept beside the cut response


def _example_comparisons(site: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The MMLU-Pro run's comparison documents, keyed (candidate, baseline)."""
    found = {}
    for path in sorted((site / "data/comparisons").glob("mmlu-pro-philosophy--*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        found[document["candidate"], document["baseline"]] = document
    return found


def _holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment, written out from Holm (1979), for the test only."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def test_setups_with_different_items_compare_on_the_shared_ones(site: Path) -> None:
    from scipy.stats import binomtest

    from kagreport.grading import Outcome

    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    # Independent pairing: (dataset, question) -> correct, per setup, from ItemRow objects.
    correct: dict[str, dict[tuple[str, str], bool]] = {}
    for row in report.items:
        correct.setdefault(row.setup, {})[row.dataset, row.question] = (
            row.outcome is Outcome.CORRECT
        )
    baseline = report.setup_names[0]
    # deepseek-coder-v2 has no answer to 8 MMLU-Pro questions: its item set differs.
    candidate = "deepseek-coder-v2"
    assert len(correct[candidate]) != len(correct[baseline])
    shared = correct[candidate].keys() & correct[baseline].keys()
    gained = sum(correct[candidate][k] and not correct[baseline][k] for k in shared)
    lost = sum(correct[baseline][k] and not correct[candidate][k] for k in shared)

    document = _example_comparisons(site)[candidate, baseline]
    metric = document["metrics"][0]
    assert document["n_items"] == metric["n_pairs"] == len(shared)
    meta = document["metadata"]
    assert meta["items_only_in_candidate"] == len(correct[candidate].keys() - shared)
    assert meta["items_only_in_baseline"] == len(correct[baseline].keys() - shared) > 0
    assert metric["mean_difference"] == pytest.approx((gained - lost) / len(shared), abs=1e-15)
    # 0/1 differences: the sign-flip test is the two-sided sign test on the discordant pairs.
    expected = binomtest(gained, gained + lost, 0.5).pvalue
    tolerance = 1e-12 if metric["exact"] else 0.03  # Monte Carlo with 10,000 resamples
    assert metric["p_value"] == pytest.approx(expected, abs=tolerance)

    slug = f"mmlu-pro-philosophy--{slugify(candidate)}--vs--{slugify(baseline)}"
    page = (site / f"comparisons/{slug}.html").read_text(encoding="utf-8")
    assert 'id="item-difference"' in page
    assert f"{meta['items_only_in_baseline']} for {baseline} only" in page
    scripts = _parse(site / f"comparisons/{slug}.html").scripts
    flips = json.loads(next(t for a, t in scripts if a.get("id") == "flips-data"))
    assert len(flips["rows"]) == gained + lost
    assert sum(row[1] == "correct" for row in flips["rows"]) == gained
    assert "not compared" not in (site / "index.html").read_text(encoding="utf-8")


def test_comparisons_are_holm_adjusted_across_the_run(site: Path) -> None:
    documents = _example_comparisons(site)
    pairs = list(documents)
    raw = [documents[pair]["metrics"][0]["p_value"] for pair in pairs]
    adjusted = _holm(raw)
    tags = _parse(site / "index.html")
    shown = [
        float(str(a["data-value"]))
        for _, a in tags.tags
        if a.get("data-key") == "p_value_holm_across_run"
    ]
    assert len(shown) >= len(pairs)
    for pair, p_holm in zip(pairs, adjusted, strict=True):
        meta = documents[pair]["metadata"]
        assert meta["comparisons_in_run"] == len(pairs)
        # The family adjusted over is named: every comparison of the run.
        assert sorted(meta["holm_family"]) == sorted(f"{c} vs {b}" for c, b in pairs)
        assert documents[pair]["metrics"][0]["method"] in ("exact-lattice", "exact-enumeration")
        assert meta["p_value_holm_across_run"] == pytest.approx(p_holm, rel=1e-12)
        assert any(v == pytest.approx(p_holm, rel=1e-12) for v in shown)


def test_comparisons_match_the_item_level_api(site: Path) -> None:
    """The site pairs items from arrays; AnswerEvaluation.compare pairs item objects."""
    from kagreport.evaluation import evaluation_from_stats

    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    documents = _example_comparisons(site)
    checked = differing = 0
    for (candidate, baseline), document in documents.items():
        mine = evaluation_from_stats(report, candidate, answers=False)
        theirs = evaluation_from_stats(report, baseline, answers=False)
        # Pairs whose items differ too (deepseek-coder-v2 misses 8): the site pairs the
        # shared items in key order, compare(shared_only=True) in the candidate's order;
        # the results depend on the set of pairs only, so they agree to the last digit.
        differing += len(mine.items) != len(theirs.items)
        expected = mine.compare(theirs, n_resamples=10_000, seed=0, shared_only=True).to_dict()
        # Everything but the Holm adjustment, which the site makes across the run, and the
        # interval, at the Holm level of the pair there (issue #28; tests/site/
        # test_verdicts_agree.py checks it), a bootstrap one in a lone comparison.
        [row], [wanted] = document["metrics"], expected["metrics"]
        assert row.pop("p_value_holm") == document["metadata"]["p_value_holm_across_run"]
        for key in ("p_value_holm", "ci_low", "ci_high"):
            wanted.pop(key)
        row.pop("ci_low"), row.pop("ci_high")
        assert row == wanted
        assert document["n_items"] == expected["n_items"]
        checked += 1
    assert checked >= 3
    assert differing >= 1


def test_index_is_small(site: Path) -> None:
    assert (site / "index.html").stat().st_size < 1_000_000
    assert "items-data" not in (site / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------- builds


@pytest.mark.slow
def test_deterministic(site_inputs: dict[str, Any], site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_site(site_inputs["config"], again)
    first = sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    for relative in first:
        assert (site / relative).read_bytes() == (again / relative).read_bytes(), relative


@pytest.mark.slow
def test_failed_build_leaves_the_old_site(
    site_inputs: dict[str, Any], mmlu_site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    small = SiteConfig(title="small", runs=(site_inputs["config"].runs[1],))
    shutil.copytree(mmlu_site, out)  # the old site: the session's build of the same run
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    failing = SiteConfig(title="other", runs=small.runs, evaluations=(broken,))
    with pytest.raises(KagreportError, match=r"broken\.json"):
        build_site(failing, out)
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "site"]
    # A good build replaces it whole.
    build_site(SiteConfig(title="new title", runs=small.runs), out)
    assert "new title" in (out / "index.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "site"]


def test_refuses_to_replace_a_foreign_folder(site_inputs: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(KagreportError, match="not a site built by kagreport"):
        build_site(SiteConfig(runs=(site_inputs["config"].runs[1],)), out)
    assert (out / "thesis.tex").read_text(encoding="utf-8") == "precious"


def test_refuses_an_output_inside_an_input(site_inputs: dict[str, Any]) -> None:
    run = site_inputs["config"].runs[0]
    with pytest.raises(KagreportError, match="input"):
        build_site(SiteConfig(runs=(run,)), run.results / "site")


@pytest.mark.slow
def test_template_override(site_inputs: dict[str, Any], tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "_footer.html.j2").write_text(
        '<footer>OUR FOOTER {{ "<b>" }}</footer>\n'
        '<script src="{{ root }}assets/vega.js"></script>\n'
        '<script src="{{ root }}assets/site.js"></script>\n',
        encoding="utf-8",
    )
    config = SiteConfig(runs=(site_inputs["config"].runs[1],), templates=templates)
    index = build_site(config, tmp_path / "site")
    html = index.read_text(encoding="utf-8")
    assert "OUR FOOTER &lt;b&gt;" in html  # the user's template, autoescaped


# ---------------------------------------------------------------------- configuration


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_from_toml(tmp_path: Path) -> None:
    path = _toml(
        tmp_path,
        'title = "T"\nevaluations = ["e.json"]\nnotebooks = ["n.ipynb"]\ntemplates = "tpl"\n'
        '[[runs]]\nname = "R"\ndatasets = "d.json"\nresults = "res"\nbaseline = "b"\n'
        'compare = "all-pairs"\n',
    )
    config = SiteConfig.from_toml(path)
    assert config.title == "T"
    assert config.runs[0].datasets == tmp_path / "d.json"
    assert config.runs[0].results == tmp_path / "res"
    assert config.runs[0].compare == "all-pairs"
    assert config.runs[0].baseline == "b"
    assert config.evaluations[0].path == tmp_path / "e.json"
    assert config.notebooks == (tmp_path / "n.ipynb",)
    assert config.templates == tmp_path / "tpl"


def test_repository_config_loads() -> None:
    path = Path(__file__).resolve().parents[2] / "site" / "site.toml"
    config = SiteConfig.from_toml(path)
    assert config.runs[0].datasets.is_file()
    assert config.runs[0].results.is_dir()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("title = 3\n", "`title` must be a string"),
        ('colour = "red"\n', "`colour` is not a known key"),
        ('[[runs]]\nname = "R"\nresults = "r"\n', "`runs[0].datasets` is required"),
        (
            '[[runs]]\nname = "R"\ndatasets = "d"\nresults = "r"\ncompare = "some"\n',
            "`runs[0].compare` must be one of baseline, all-pairs",
        ),
        (
            '[[runs]]\nname = "R"\ndatasets = "d"\nresults = "r"\nextra = 1\n',
            "`runs[0].extra` is not a known key",
        ),
        ('evaluations = "e.json"\n', "`evaluations` must be a list"),
        (
            '[[runs]]\nname = "R"\ndatasets = "d"\nresults = "r"\n'
            '[[runs]]\nname = "R"\ndatasets = "d"\nresults = "r"\n',
            "`runs[1].name` repeats",
        ),
        ("title = \n", "is not valid TOML"),
    ],
)
def test_config_errors_name_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = _toml(tmp_path, text)
    with pytest.raises(KagreportError, match=re.escape(key)) as caught:
        SiteConfig.from_toml(path)
    assert str(path) in str(caught.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(KagreportError, match="cannot read the site configuration"):
        SiteConfig.from_toml(tmp_path / "nope.toml")


def test_unknown_baseline(site_inputs: dict[str, Any], tmp_path: Path) -> None:
    example = mmlu_pro_philosophy()
    path = _toml(
        tmp_path,
        f'[[runs]]\nname = "R"\ndatasets = "{example.datasets}"\n'
        f'results = "{example.results}"\nbaseline = "nobody"\n',
    )
    with pytest.raises(KagreportError, match=r"`runs\[0\].baseline` names no setup") as caught:
        build_site(SiteConfig.from_toml(path), tmp_path / "out")
    assert str(path) in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_missing_templates_folder(tmp_path: Path) -> None:
    config = SiteConfig(templates=tmp_path / "nowhere")
    with pytest.raises(KagreportError, match="templates folder"):
        build_site(config, tmp_path / "out")


# ---------------------------------------------------------------------- notebooks, CLI


@pytest.mark.notebook
def test_notebook_page(notebook_site: Path) -> None:
    """A notebook executed on a real kernel (``notebook_site``: an Altair chart, widgets,
    math), as a page of the site."""
    out = notebook_site
    page = out / "notebooks/offline-check.html"
    html = page.read_text(encoding="utf-8")
    tags = _parse(page)
    specs = [t for a, t in tags.scripts if "vega-spec" in (a.get("class") or "")]
    assert len(specs) == 1
    assert json.loads(specs[0])["mark"]["type"] == "bar"
    assert "application/vnd.jupyter.widget-view+json" not in html
    assert "mathjax" not in html.lower()
    assert "require.js" not in html
    assert "$\\alpha = 0.81$" in html
    assert "In\xa0[1]:" in html  # the hidden setup cell takes no number
    assert 'href="../index.html"' in html  # the site's navigation
    for _tag, attributes in tags.tags:
        for name in ("src", "href"):
            assert not re.match(r"(?i)\s*(https?:)?//", attributes.get(name) or ""), attributes
    assert 'href="notebooks/offline-check.html"' in (out / "index.html").read_text(encoding="utf-8")
    assert _first_in_head(html) == ("meta", {"http-equiv": "Content-Security-Policy",
                                             "content": page_csp("../", inline_styles=True)})  # fmt: skip


def _first_in_head(html: str) -> tuple[str, dict[str, str | None]]:
    """The first element of <head> that is not ``<meta charset>``."""
    tags = _Tags()
    tags.feed(html)
    head = [t for t in tags.tags if t[0] not in ("html", "head")]
    return next(t for t in head if not (t[0] == "meta" and "charset" in t[1]))


def test_every_page_starts_with_the_content_security_policy(site: Path) -> None:
    """Issue #10 item 17: the policy applies before anything on the page (browser tests check
    that it holds: tests/browser). No page has a script the policy would block: its scripts
    are data (JSON) but one, the loader the policy names by its hash (issue 27, item 5)."""
    for page in _pages(site):
        root = "../" * len(page.relative_to(site).parent.parts)
        policy = page_csp(root)
        assert "'unsafe-inline'" not in policy
        assert "'unsafe-eval'" not in policy
        assert "'self'" not in policy.split("script-src", 1)[1].split(";")[0]
        html = page.read_text(encoding="utf-8")
        expected = {"http-equiv": "Content-Security-Policy", "content": policy}
        assert _first_in_head(html) == ("meta", expected), page
        code = [
            (a, text) for a, text in _parse(page).scripts if a.get("type") != "application/json"
        ]
        assert code == [({}, script_loader(root))], page
        digest = base64.b64encode(hashlib.sha256(code[0][1].encode()).digest()).decode()
        assert f"script-src 'sha256-{digest}' 'strict-dynamic';" in policy


@pytest.mark.slow
def test_cli(
    site_inputs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kagreport.cli._main import _verbosity_parent
    from kagreport.cli._site import add_parsers, run_site

    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"), _verbosity_parent())
    example = mmlu_pro_philosophy()
    out = tmp_path / "out"
    args = parser.parse_args(
        [
            "site",
            "build",
            "-r",
            str(example.results),
            "-d",
            str(example.datasets),
            "--name",
            "cli run",
            "--compare",
            "all-pairs",
            "-o",
            str(out),
        ]
    )
    assert run_site(args, 40) == 0
    assert str(out) in capsys.readouterr().out
    assert (out / "setups/cli-run--yi-34b.html").is_file()


@pytest.mark.slow
def test_cli_on_a_simulated_run(tmp_path: Path) -> None:
    """As a user runs it: one warning line for unparsable files, the SIMULATED notice, a
    default name from the run folder, and missing parent folders created."""
    from conftest import run_cli

    run = simulate_run(tmp_path / "my-sim", questions=8, datasets=2, unparsable_files=2)
    out = tmp_path / "public" / "deep" / "site"
    done = run_cli("site", "build", "-r", run.results_path, "-d", run.datasets_path, "-o", out)
    assert done.returncode == 0, done.stderr
    # Some of the damaged files may belong to questions kag does not grade.
    unparsable = len(grade(run.datasets_path, run.results_path).unparsable_files)
    assert unparsable >= 1
    assert done.stderr.splitlines() == [
        f"kagreport: run 'my-sim': {unparsable} result file{'s' if unparsable > 1 else ''} did "
        f"not parse and {'were' if unparsable > 1 else 'was'} skipped (the index lists them "
        "with the reason)"
    ]
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "SIMULATED data: no model was run" in index
    assert '<a href="#run-my-sim">my-sim (SIMULATED)</a>' in index


@pytest.mark.slow
def test_setup_addresses_do_not_depend_on_rank(tree: Any, tmp_path: Path) -> None:
    """kag setup names that slugify alike keep their own page address, whatever their rank."""
    from conftest import mcq

    names = ["-a-b-", "a--b", "a-b-2", "a---b", "a-b", "x" * 240]
    for q in range(4):
        tree.question("ds", f"q{q}", mcq("A"))
        for rank, name in enumerate(names):
            # Setup k answers k of the 4 questions right: ranks follow the list backwards.
            tree.ok("ds", f"q{q}", name, "A" if q < rank % 5 else "B")
    out = tmp_path / "site"
    build_site(SiteConfig(runs=(RunConfig("r", tree.datasets_path, tree.results),)), out)
    for name in ("a-b-2", "a-b"):  # URL-safe names are their own address
        page = (out / f"setups/r--{name}.html").read_text(encoding="utf-8")
        assert f"<h1>{name} <span" in page, name
    pages = {p.name for p in (out / "setups").iterdir()}
    # The others ("--" separates parts of comparison file names) got addresses of their own.
    assert len(pages) == len(names)
    assert all(len(p.encode()) < 255 for p in pages)
    assert all(len(p.name.encode()) < 255 for p in (out / "comparisons").iterdir())


@pytest.mark.slow
def test_run_data_and_evaluation_data_do_not_collide(
    site_inputs: dict[str, Any], tmp_path: Path
) -> None:
    example = mmlu_pro_philosophy()
    config = SiteConfig(
        runs=(
            RunConfig(example.name, example.datasets, example.results),
            RunConfig("evaluations", example.datasets, example.results),
        ),
        evaluations=(site_inputs["base"] / "answers.json",),
    )
    out = tmp_path / "site"
    build_site(config, out)
    stats = grade(example.datasets, example.results).to_json()
    assert (out / "data/runs/evaluations/report.json").read_text(encoding="utf-8") == stats
    assert (
        json.loads((out / "data/evaluations/answers.json").read_text(encoding="utf-8"))["schema"]
        == "kagreport.AnswerEvaluation"
    )


@pytest.mark.slow
def test_output_folder_refusals_and_mode(site_inputs: dict[str, Any], mmlu_site: Path,
                                         tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import os
    import stat

    small = SiteConfig(runs=(site_inputs["config"].runs[1],))
    real = tmp_path / "real"
    shutil.copytree(mmlu_site, real)  # a site to replace: the session's build of the same run
    # Folders get the umask's mode (as mkdir gives), not tempfile's owner-only 0700.
    old = os.umask(0o022)
    try:
        build_site(small, real)
    finally:
        os.umask(old)
    assert stat.S_IMODE(real.stat().st_mode) == 0o755
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(KagreportError, match="is a symbolic link"):
        build_site(small, link)
    monkeypatch.chdir(real)
    with pytest.raises(KagreportError, match="current folder"):
        build_site(small, ".")
    assert (real / "index.html").is_file()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["site/site.toml", "--baseline", "x"], "--baseline: only for a run given with --results"),
        (["--compare", "all-pairs"], "--compare: only for a run given with --results"),
        (["site/site.toml", "--with-notebooks"], "--with-notebooks goes with the bundled"),
        (["-r", "results", "-d", "d.json", "--name", "  "], "--name must not be blank"),
    ],
)
def test_cli_refuses_contradictory_flags(flags: list[str], message: str, tmp_path: Path) -> None:
    from conftest import run_cli

    done = run_cli("site", "build", *flags, "-o", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_setup_names_holding_the_separator_do_not_collide(tree: Any, tmp_path: Path) -> None:
    from conftest import mcq

    names = ["y--vs--z", "z", "x", "x--vs--y"]
    for q in range(3):
        tree.question("ds", f"q{q}", mcq("A"))
        for name in names:
            tree.ok("ds", f"q{q}", name, "A")
    out = tmp_path / "site"
    config = SiteConfig(
        runs=(RunConfig("r", tree.datasets_path, tree.results, compare="all-pairs"),)
    )
    build_site(config, out)
    assert len(list((out / "comparisons").glob("*.html"))) == 6  # 4 setups: 6 pairs
    assert len(list((out / "data/comparisons").glob("*.json"))) == 6


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ 1/0 }}", "cannot be rendered: ZeroDivisionError"),
        ('{% include "index.html.j2" %}', "includes or extends itself"),
        ("{% if %}", "is not valid Jinja"),
    ],
)
def test_broken_templates_give_one_line(
    site_inputs: dict[str, Any], tmp_path: Path, source: str, message: str
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "index.html.j2").write_text(source, encoding="utf-8")
    config = SiteConfig(runs=(site_inputs["config"].runs[1],), templates=templates)
    with pytest.raises(KagreportError, match=message):
        build_site(config, tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_comparison_page_states_the_family_and_how_p_was_computed(site: Path) -> None:
    # Issue #10 items 1 and 4: the page of a stored comparison names Holm's family (the
    # judges' two metrics here, token_f1 and exact_match) and each p-value's method.
    page = (site / "evaluations/comparison.html").read_text(encoding="utf-8")
    assert "Holm over exact_match, token_f1 (2 metrics)" in page
    assert "two-sided paired sign-flip test" in page
    assert "exact (enumeration)" in page  # 3 items: 2**3 assignments fit any budget


def test_notebook_outputs_cannot_navigate_away(tmp_path: Path) -> None:
    # A CSP does not govern navigation: a notebook's own HTML output holding
    # <meta http-equiv="refresh"> sent the reader's browser to any host on opening the page
    # (the adversarial trial saw http://127.0.0.1:9/leak requested from file://). Issue 27,
    # item 4: markup that Python's html.parser reads apart from a browser kept its refresh.
    # tests/browser/test_pages_take_over.py opens such a page in Chromium.
    from kagreport.site._notebooks import convert_notebook
    from kagreport.site._templates import Templates

    refresh = '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/{}">'
    outputs = [
        '<p>kept</p><meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/leak">',
        '<META HTTP-EQUIV="&#114;efresh" content="0;url=http://127.0.0.1:9/b">',
        '<link rel="dns-prefetch" href="//leak.example"><link rel="stylesheet" href="x.css">',
        "<!-->" + refresh.format("c") + "-->",
        "<!-- a --!>" + refresh.format("d") + "-->",
        "<script></script/>" + refresh.format("e"),
        "<svg><style>" + refresh.format("f") + "</style></svg>",
        "<math><style>" + refresh.format("g"),
        '<base href="http://127.0.0.1:9/"><form action="http://127.0.0.1:9/"></form>',
        '<iframe src="http://127.0.0.1:9/"></iframe><object data="http://127.0.0.1:9/">',
        '<a href="javascript:alert(1)">j</a><a href="https://example.org/">kept link</a>',
    ]
    notebook = tmp_path / "nav.ipynb"
    notebook.write_text(json.dumps({
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": outputs[3]},
                  {"cell_type": "raw", "metadata": {"raw_mimetype": "text/html"},
                   "source": outputs[7]},
                  {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x",
                   "outputs": [{"output_type": "display_data", "metadata": {},
                                "data": {"text/html": html}} for html in outputs]}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }), encoding="utf-8")  # fmt: skip
    page = convert_notebook(notebook, execute=False, template_dirs=Templates().notebook_dirs(),
                            header="", footer="", root="../", title="t")  # fmt: skip
    assert "<p>kept</p>" in page
    assert "127.0.0.1:9" not in page
    assert "leak.example" not in page
    assert "javascript:" not in page
    assert '<a href="https://example.org/" rel="noopener noreferrer">kept link</a>' in page
    body = page[page.index('<main class="site-main">') :].lower()
    for tag in ("meta", "link", "base", "form", "iframe", "object", "svg", "math", "script"):
        assert f"<{tag}" not in body, tag
    assert 'http-equiv="Content-Security-Policy"' in page  # the page's own meta stays


def test_the_site_computes_no_statistic_of_its_own() -> None:
    """What the site shows of a test, an interval, a family or a frontier comes from
    kagreport.runs, kagreport.evaluation or kagreport.grading: no module of the site imports
    kagreport.stats, a statistics module or a statistics function (wherever it is
    re-exported), or calls a reducer over items."""
    import ast
    import inspect

    import kagreport.site
    import kagreport.stats

    stats = kagreport.stats
    functions = {n for n in stats.__all__ if inspect.isfunction(getattr(stats, n))}
    functions |= {"compare_items", "compare_scores", "krippendorff_alpha", "alpha_interval"}
    modules = ("kagreport.stats", "kagreport.evaluation._compare", "statistics", "scipy")
    reducers = {"mean", "nanmean", "median", "nanmedian", "std", "nanstd", "var", "average"}
    reducers |= {"fsum", "quantile", "percentile"}
    folder = Path(kagreport.site.__file__).parent
    checked = 0
    for path in sorted(folder.rglob("*.py")):
        checked += 1
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(modules), f"{path.name} imports {node.module}"
                used = functions & {alias.name for alias in node.names}
                assert not used, f"{path.name} imports {used}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith(modules), f"{path.name} imports {alias.name}"
            elif isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                assert name not in reducers, f"{path.name}:{node.lineno} calls {name}"
    assert checked >= 10  # the package's modules were found

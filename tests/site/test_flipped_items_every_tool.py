"""Every run with responses gets flipped-item pages, whatever tool wrote it (issue #24).

For each tool's real output with two systems that score an item differently, the site's
comparison page shows the flipped item side by side: the question text (from the tool's
own file, read here with ``json``), both responses with the word differences marked
(``<del>``/``<ins>``), the expected answer; and each system page shows every item's
question. The flipped items are counted here from the tool's per-sample scores, not from
kagreport.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markupsafe import escape

from kagreport import read_run
from kagreport.examples import inspect_popularity
from kagreport.site import SiteConfig, SourceConfig, build_site

DATA = Path(__file__).resolve().parents[1] / "data" / "sources"


OPENAI_EVALS = DATA / "openai-evals" / "evals-3.0.1" / "records"  # evals 3.0.1's own logs


def _openai_evals() -> tuple[dict[str, str], dict[tuple[str, str], bool]]:
    """Question text by (eval, sample), and (completion fn, eval/sample) -> correct, from
    the record logs."""
    questions: dict[str, str] = {}
    correct: dict[tuple[str, str], bool] = {}
    for path in sorted(OPENAI_EVALS.glob("*.jsonl")):
        spec: dict[str, object] = {}
        for line in path.read_text(encoding="utf-8").split("\n"):
            event = json.loads(line) if line else {}
            spec = event.get("spec", spec)
            item = f"{spec.get('eval_name')}/{event.get('sample_id')}"
            if event.get("type") == "sampling":
                prompt = event["data"]["prompt"]
                questions[item] = next(m["content"] for m in prompt if m["role"] == "user")
            elif event.get("type") == "match":
                (system,) = spec["completion_fns"]  # type: ignore[misc]
                correct[system, item] = event["data"]["correct"]
    return questions, correct


def _promptfoo() -> tuple[dict[str, str], dict[tuple[str, int], bool]]:
    questions: dict[str, str] = {}
    correct: dict[tuple[str, int], bool] = {}
    for line in (DATA / "promptfoo" / "two-prompts.jsonl").read_text("utf-8").splitlines():
        result = json.loads(line)
        questions[f"test {result['testIdx']}"] = result["prompt"]["raw"]
        system = f"{result['provider']['id']} / {result['prompt']['label']}"
        correct[system, result["testIdx"]] = result["success"]
    return questions, correct


def _flipped(correct: dict[tuple[str, object], bool]) -> int:
    """Items two systems (the only two) score differently."""
    systems = sorted({s for s, _ in correct})
    assert len(systems) == 2
    items = {i for _, i in correct if all((s, i) in correct for s in systems)}
    return sum(correct[systems[0], i] != correct[systems[1], i] for i in items)


CASES = {
    "openai-evals": (OPENAI_EVALS, "openai-evals"),
    "promptfoo": (DATA / "promptfoo" / "two-prompts.jsonl", "promptfoo"),
    "lm-eval": (DATA / "lm-eval" / "lm-eval-0.4.13" / "output", "lm-eval"),
    "inspect": (inspect_popularity().logs[0].parent, "inspect"),
}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory, inspect_site: Path) -> dict[str, Path]:
    """Each tool's site, its run named after the tool (the Inspect one is the session's
    ``inspect_site``: the same source, built the same way)."""
    found = {"inspect": inspect_site}
    for name, (path, format_) in CASES.items():
        if name in found:
            continue
        out = tmp_path_factory.mktemp(name) / "site"
        build_site(SiteConfig(sources=(SourceConfig(path, name=name, format=format_),)), out)
        found[name] = out
    return found


def _articles(page: str) -> list[str]:
    return re.findall(r'<article class="flip[^"]*".*?</article>', page, flags=re.S)


@pytest.mark.parametrize("name", sorted(CASES))
def test_flipped_items_side_by_side_for_every_tool(name: str, sites: dict[str, Path]) -> None:
    out = sites[name]
    pages = sorted((out / "comparisons").glob("*.html"))
    assert pages, f"{name}: no comparison page"
    articles = [a for page in pages for a in _articles(page.read_text(encoding="utf-8"))]
    run = read_run(CASES[name][0])
    assert run.question_texts is not None
    questions = {str(escape(q.strip())) for q in run.question_texts if q}
    assert articles, f"{name}: no flipped item side by side"
    for article in articles:
        assert "flip-question" in article
        shown = re.search(r'<p class="flip-question"><span class="label">Question</span> (.*?)</p>',
                          article, flags=re.S)  # fmt: skip
        assert shown is not None
        assert shown.group(1) in questions
        assert "<del>" in article or "<ins>" in article
        assert len(re.findall(r'class="flip-side[ "]', article)) == 2


def test_the_number_of_flips_is_the_tools_own() -> None:
    # openai-evals and promptfoo: counted from the tools' own files.
    for name, (counts, source) in {
        "openai-evals": (_openai_evals()[1], CASES["openai-evals"][0]),
        "promptfoo": (_promptfoo()[1], CASES["promptfoo"][0]),
    }.items():
        from kagreport.runs import compare_setups

        (comparison,) = compare_setups(read_run(source), n_resamples=100)
        assert len(comparison.flips) == _flipped(counts), name  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_system_page_shows_each_items_question(name: str, sites: dict[str, Path]) -> None:
    run = read_run(CASES[name][0])
    assert run.question_texts is not None
    for page in sorted((sites[name] / "setups").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        data = json.loads(re.search(r'id="items-data">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
        at = data["columns"].index("question_text")
        assert all(row[at] for row in data["rows"]), page.name
        # The first page of rows is in the HTML (no script needed), question text included.
        first = str(escape(data["rows"][0][at]))
        assert first in text

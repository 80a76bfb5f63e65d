"""The systems page: retrieval systems of the same items side by side, with paired tests;
and retrieval against answer for the setups that have both evaluations.

Retrieval reports holding the same item identifiers (two or more) form one group and get
one page, ``systems/<slug>.html``: each system's metrics with 95% intervals
(:func:`kagreport.runs.metric_summaries`), and the paired sign-flip test of every pair of
systems (:func:`kagreport.runs.compare_setups`, all pairs, Holm-adjusted across every pair
x metric). An answer report and a retrieval report of one setup (the same
``metadata["setup"]``, else the same ``metadata["name"]``) sharing items give that setup's
2 x 2 of retrieval hit/miss by answer right/wrong
(``evaluation._retrieval_answer.retrieval_answer_from_reports``), shown on the systems page,
on the retrieval report's page and as a chart. No statistic is computed here.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError
from kagreport._format import difference_interval, p_value, percent_interval
from kagreport.site._config import EvaluationSource
from kagreport.site._evaluations import cutoffs, headline_metrics, is_percent, shown_interval
from kagreport.site._json import dumps_json
from kagreport.site._templates import Page
from kagreport.site._templates import split_interval as _split

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation
    from kagreport.site._context import SiteContent

__all__ = ["Systems", "answer_metric_for", "build_systems", "plan_systems", "retrieval_metric_for"]

#: Metrics of the paired tests (the family is every pair x these, those a group has).
TESTED = ("mrr", "complete")


@dataclass
class _Group:
    sources: list[tuple[EvaluationSource, RetrievalEvaluation]] = field(default_factory=list)
    href: str = ""


@dataclass
class Systems:
    """What the evaluation pages and the systems pages share during one build.

    Attributes
    ----------
    pages : dict of str to str
        Evaluation source name -> the systems page comparing it (from the site root).
    retrieval_answer : dict of str to dict
        Evaluation source name -> its setup's retrieval-against-answer entry.
    evaluation_pages : dict of str to str
        Evaluation source name -> its page (filled as the pages are written).
    """

    pages: dict[str, str] = field(default_factory=dict)
    retrieval_answer: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluation_pages: dict[str, str] = field(default_factory=dict)
    groups: list[_Group] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)


def _label(source: EvaluationSource, report: Any) -> str:
    name = report.metadata.get("name")
    return name if isinstance(name, str) and name else source.name


def _setup(source: EvaluationSource, report: Any) -> str:
    setup = report.metadata.get("setup")
    return setup if isinstance(setup, str) and setup else _label(source, report)


def _load(site: SiteContent) -> list[tuple[EvaluationSource, Any]]:
    """The reports of the site's evaluation sources that can be read (the others fail
    on their own page, with the message)."""
    from kagreport.evaluation._read import read_report

    loaded = []
    for source in site.config.evaluations:
        report = source.report
        if report is None and source.path is not None:
            try:
                report = read_report(source.path)
            except (KagreportError, ValueError, OSError):
                continue
        if report is not None:
            loaded.append((source, report))
    return loaded


def retrieval_metric_for(report: RetrievalEvaluation) -> str | None:
    """What "hit" means for retrieval against answer: ``complete@k`` (every gold id
    retrieved, fast-graphrag's "perfect retrieval") at the largest k, else ``hit@k``."""
    for family in ("complete", "hit"):
        ks = cutoffs(report.metrics, family)
        if ks:
            return f"{family}@{max(ks)}"
    return None


def answer_metric_for(report: AnswerEvaluation) -> str | None:
    """What "right" means: ``correct`` when the report has it, else its first metric with
    0/1 per item (a judge's verdict)."""
    if "correct" in report.metrics:
        return "correct"
    for name in report.metrics:
        values = [item.scores.get(name) for item in report.items]
        if any(v is not None for v in values) and all(
            v in (0.0, 1.0) for v in values if v is not None
        ):
            return name
    return None


def plan_systems(site: SiteContent) -> Systems:
    """Before the evaluation pages: the groups of retrieval reports of the same items (two
    or more), the systems page of each, and each setup's retrieval-against-answer table,
    so that every evaluation page can link to them."""
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation

    plan = Systems()
    loaded = _load(site)
    retrievals = [(s, r) for s, r in loaded if isinstance(r, RetrievalEvaluation)]
    answers = [(s, r) for s, r in loaded if isinstance(r, AnswerEvaluation)]
    plan.pairs = _retrieval_answer(plan, retrievals, answers)
    groups: dict[frozenset[str], _Group] = {}
    for source, report in retrievals:
        if report.items:
            key = frozenset(item.identifier for item in report.items)
            groups.setdefault(key, _Group()).sources.append((source, report))
    for group in groups.values():
        if len(group.sources) < 2:
            continue
        labels = _labels(group)
        # Named after what the systems' names share ("fast-graphrag"), else generically.
        words = [label.split() for label in labels]
        common = " ".join(
            itertools.takewhile(
                bool, (w[0] if len(set(w)) == 1 else "" for w in zip(*words, strict=False))
            )
        )
        text = f"{common} systems" if len(common) >= 3 else "retrieval systems"
        group.href = f"systems/{site.slug('systems', text)}.html"
        for source, _ in group.sources:
            plan.pages[source.name] = group.href
        plan.groups.append(group)
    return plan


def build_systems(site: SiteContent) -> None:
    """After the evaluation pages: write the systems page of each group ``site.systems``
    planned (:func:`plan_systems`)."""
    for group in site.systems.groups:
        try:
            _build_group(site, group, site.systems.pairs)
        except (KagreportError, ValueError) as exc:
            # Reports of the same items that cannot be compared (no metric they share,
            # none defined) still have their own pages; say why this one is missing.
            site.warn(f"no systems page for {', '.join(_labels(group))}: {exc}")


def _labels(group: _Group) -> list[str]:
    labels = [_label(s, r) for s, r in group.sources]
    if len(set(labels)) != len(labels):
        labels = [s.name for s, _ in group.sources]
    return labels


def _retrieval_answer(
    plan: Systems,
    retrievals: list[tuple[EvaluationSource, RetrievalEvaluation]],
    answers: list[tuple[EvaluationSource, AnswerEvaluation]],
) -> list[dict[str, Any]]:
    """Each setup with both a retrieval and an answer report sharing items: its table."""
    from kagreport.evaluation._retrieval_answer import retrieval_answer_from_reports

    by_setup = {_setup(s, r): (s, r) for s, r in answers}
    found = []
    for source, retrieval in retrievals:
        match = by_setup.get(_setup(source, retrieval))
        if match is None:
            continue
        answer_source, answer = match
        hit, right = retrieval_metric_for(retrieval), answer_metric_for(answer)
        if hit is None or right is None:
            continue
        table = retrieval_answer_from_reports(
            retrieval, answer, retrieval_metric=hit, answer_metric=right
        )
        if not table.n:
            continue
        entry = {
            "setup": _setup(source, retrieval),
            "table": table,
            "rows": _cell_rows(table),
            "retrieval_source": source.name,
            "answer_source": answer_source.name,
        }
        plan.retrieval_answer[source.name] = entry
        plan.retrieval_answer[answer_source.name] = entry
        found.append(entry)
    return found


def _cell_rows(table: Any) -> list[dict[str, Any]]:
    from kagreport.charts._retrieval_answer import CELL_LABELS

    def row(cell: Any, label: str) -> dict[str, Any]:
        return {
            "label": label,
            "blame": cell.blame or "",
            "count": cell.count,
            "trials": cell.trials,
            "value": cell.proportion,
            "shown": percent_interval(cell.proportion, cell.low, cell.high),
        }

    rows = [row(c, CELL_LABELS[c.retrieval, c.answer]) for c in table.cells]
    rows.append(row(table.right_given_hit, "right, given a hit"))
    rows.append(row(table.right_given_miss, "right, given a miss"))
    return rows


# Over 80 lines: one page's context, read top to bottom.
def _build_group(site: SiteContent, group: _Group, pairs: list[dict[str, Any]]) -> None:
    from kagreport.evaluation._text import method_label
    from kagreport.runs import Run, compare_setups, metric_summaries

    labels = _labels(group)
    reports = [r for _, r in group.sources]
    run = Run.from_evaluations(reports, labels=labels)
    names = [m for m in reports[0].metrics if all(m in r.metrics for r in reports)]
    if not names:
        raise KagreportError("the reports share no metric")
    shown_metrics = headline_metrics(names) or names[:4]
    tested = [
        m for m in shown_metrics if m == "mrr" or m.partition("@")[0] in TESTED
    ] or shown_metrics[:1]
    summaries = metric_summaries(run, names)
    table: dict[str, dict[str, Any]] = {label: {} for label in labels}
    for summary in summaries:
        pct = is_percent(summary.metric, run.metrics[summary.metric])
        value, interval = _split(shown_interval(summary.mean, summary.low, summary.high, pct))
        table[summary.system][summary.metric] = {
            "value": summary.mean,
            "shown": value,
            "interval": interval,
            "method": summary.method,
        }
    first = shown_metrics[0]

    def rank(label: str) -> tuple[bool, float, int]:
        value = table[label][first]["value"]
        return math.isnan(value), 0.0 if math.isnan(value) else -value, labels.index(label)

    order = sorted(labels, key=rank)
    comparisons = compare_setups(run, "all-pairs", metrics=tested)
    tests = []
    for c in comparisons:
        for metric in comparisons.metrics:
            m = c.comparison.metrics[metric]
            pct = is_percent(metric, run.metrics[metric])
            difference, bounds = _split(
                difference_interval(m.mean_difference, m.ci_low, m.ci_high, proportion=pct)
            )
            tests.append(
                {
                    "candidate": c.candidate,
                    "baseline": c.baseline,
                    "metric": metric,
                    "n_pairs": m.n_pairs,
                    "difference": m.mean_difference,
                    "shown": difference,
                    "interval": bounds,
                    "p_value": m.p_value,
                    "p_shown": p_value(m.p_value),
                    "p_family": c.p_values_family[metric],
                    "p_family_shown": p_value(c.p_values_family[metric]),
                    "method": m.method,
                    "method_shown": method_label(m),
                    "verdict": c.verdicts[metric].verdict,
                    "sentence": c.verdicts[metric].sentence(proportion=pct),
                }
            )
    # Metrics equal on every item are one hypothesis: counted once (same_as).
    family_size = comparisons.comparisons[0].family_size if comparisons.comparisons else 0
    href = group.href
    slug = href.removeprefix("systems/").removesuffix(".html")
    mine = [p for p in pairs if p["retrieval_source"] in {s.name for s, _ in group.sources}]
    charts = []
    from kagreport.charts import forest_plot, retrieval_answer_chart

    charts.append(
        site.chart(
            forest_plot(comparisons, metric=tested[0]),
            f"systems--{slug}--forest",
            f"Paired differences in {tested[0]}, every pair",
        )
    )
    if mine:
        charts.append(
            site.chart(
                retrieval_answer_chart({p["setup"]: p["table"] for p in mine}),
                f"systems--{slug}--retrieval-answer",
                "Retrieval against answer",
            )
        )
    data = f"data/systems/{slug}.json"
    site.write(
        data,
        dumps_json(
            {
                "systems": order,
                "summaries": [dataclasses.asdict(summary) for summary in summaries],
                "paired_tests": [
                    {k: v for k, v in t.items() if not k.endswith("shown") and k != "interval"}
                    for t in tests
                ],
                "family": {
                    "adjust": "holm",
                    "size": family_size,
                    "metrics": [m for m in tested if m not in comparisons.same_as],
                    **({"same_as": dict(comparisons.same_as)} if comparisons.same_as else {}),
                },
                "retrieval_answer": {p["setup"]: p["table"].to_dict() for p in mine},
            }
        ),
    )
    title = "Retrieval systems side by side: " + ", ".join(labels)
    site.page(
        href,
        "systems.html.j2",
        title=title,
        systems=order,
        metrics=shown_metrics,
        all_metrics=names,
        table=table,
        tests=tests,
        tested=tested,
        same_as=dict(comparisons.same_as),
        family_size=family_size,
        n_pairs=len(comparisons),
        skipped=list(comparisons.skipped),
        pages={
            label: site.systems.evaluation_pages.get(source.name)
            for label, (source, _) in zip(labels, group.sources, strict=True)
        },
        retrieval_answer=mine,
        charts=charts,
        data=data,
        n_items=len(reports[0].items),
        attribution=reports[0].metadata.get("attribution"),
    )
    note = f"{len(labels)} retrieval systems, {len(tests)} paired tests (Holm)"
    site.evaluations.append(Page(title, href, note))

"""The page of an evaluation report: an answer or retrieval evaluation, or a comparison.

An answer or retrieval page is compact: the headline numbers and the chart first; the
metrics sorted by mean, highest first (proportions in percent, each with the 95% interval
of :func:`kagreport.runs.metric_summaries`); for answers the judges table (one column per
criterion, ``<table class="data sortable">`` with ``data-value`` on numeric cells for
site.js's sorting); usage and error tables of all zeros collapsed into a ``<details>``
whose summary says so in one line. Links to the systems page and the setup's retrieval
against answer come from :mod:`kagreport.site._systems` (``site.systems``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError, SiteError
from kagreport._format import (
    MISSING,
    count,
    is_missing,
    is_proportion,
    isolated,
    percent,
    percent_interval,
    plural,
    score,
    score_interval,
)
from kagreport.site._config import EvaluationSource
from kagreport.site._json import dumps_json
from kagreport.site._templates import Page

if TYPE_CHECKING:
    from kagreport.evaluation import (
        AnswerEvaluation,
        EvaluationComparison,
        RetrievalEvaluation,
    )
    from kagreport.site._context import SiteContent

__all__ = ["build_evaluation", "cutoffs", "headline_metrics", "is_percent", "metric_rows", "shown"]

#: Evaluation documents larger than this (bytes of JSON) are inlined without their items.
INLINE_LIMIT = 2_000_000


def build_evaluation(site: SiteContent, source: EvaluationSource) -> None:
    """Write the page and the JSON document of one evaluation report; the index lists it
    (``site.evaluations``).

    Raises
    ------
    SiteError
        If the report cannot be read, or holds values of a kind its page cannot show.
    """
    try:
        _build_evaluation(site, source)
    except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as exc:
        # A report object read from a file can hold values of the wrong kind that the
        # page then trips on; name the file rather than show a traceback.
        where = source.path if source.path is not None else source.name
        raise SiteError(
            f"{where} is not an evaluation report kagreport can show: {exc}",
            path=source.path,
        ) from None


def _build_evaluation(site: SiteContent, source: EvaluationSource) -> None:
    site.say(f"evaluation {source.name}")
    report = source.report if source.report is not None else _read_evaluation(source)
    slug = site.slug("evaluations", source.name)
    href = f"evaluations/{slug}.html"
    data = f"data/evaluations/{slug}.json"
    document = report.dumps("json")
    site.write(data, document)
    parsed = json.loads(document)
    inline = parsed
    trimmed = False
    if len(document) > INLINE_LIMIT and "items" in parsed:
        inline = {k: v for k, v in parsed.items() if k != "items"}
        trimmed = True
    context: dict[str, Any] = {
        "name": source.name,
        "data": data,
        "document": inline,
        "trimmed": trimmed,
        "metadata": dict(report.metadata),
        "source_path": None if source.path is None else source.path.name,
        # The systems page comparing this report with others (site/_systems.py), if any.
        "systems": site.systems.pages.get(source.name),
        "retrieval_answer": site.systems.retrieval_answer.get(source.name),
    }
    kind, note, details = _details(site, report, slug)
    context.update(details)
    site.page(
        href,
        "evaluation.html.j2",
        title=str(report.metadata.get("name") or source.name),
        kind=kind,
        **context,
    )
    site.evaluations.append(Page(str(report.metadata.get("name") or source.name), href, note))
    site.systems.evaluation_pages[source.name] = href


def _details(
    site: SiteContent,
    report: AnswerEvaluation | RetrievalEvaluation | EvaluationComparison,
    slug: str,
) -> tuple[str, str, dict[str, Any]]:
    """The kind of ``report``, its note on the index, and what its page shows of it
    (``charts`` among them)."""
    from kagreport.evaluation import (
        AnswerEvaluation,
        EvaluationComparison,
        RetrievalEvaluation,
    )

    if isinstance(report, EvaluationComparison):
        note = f"comparison {isolated(report.candidate)} vs {isolated(report.baseline)}"
        return "comparison", note, _comparison_context(site, report, slug)
    if isinstance(report, AnswerEvaluation):
        context = _answer_context(report)
        context["charts"] = []
        if report.agreement:
            from kagreport.charts import agreement_chart

            context["charts"].append(
                site.chart(
                    agreement_chart(report),
                    f"evaluation--{slug}--agreement",
                    "Agreement between judges",
                )
            )
        note = (
            f"answer evaluation, {plural(len(report.items), 'item')}, "
            f"{plural(len(report.judges), 'judge')}"
        )
        return "answers", note, context
    if isinstance(report, RetrievalEvaluation):
        context = _retrieval_context(report)
        context["charts"] = []
        return "retrieval", f"retrieval evaluation, {plural(len(report.items), 'item')}", context
    raise TypeError(type(report).__name__)  # pragma: no cover - none of the three


def _comparison_context(
    site: SiteContent, report: EvaluationComparison, slug: str
) -> dict[str, Any]:
    from kagreport.charts import forest_plot
    from kagreport.evaluation._text import compared_proportion, family_label

    verdicts = report.verdicts()
    rows = []
    for name, m in report.metrics.items():
        v, percent = verdicts[name], compared_proportion(report, name)
        # Beside the p-values the page draws the verdict's interval, at the family's Holm
        # level; the spec's bootstrap interval stays in the data file (ci_low, ci_high).
        rows.append(
            {
                **m.to_dict(),
                "ci_low": v.low,
                "ci_high": v.high,
                "percent": percent,
                "verdict": v.verdict,
                "interval": v.label,
                "margin": v.margin,
                "sentence": v.sentence(proportion=percent) if v.adjusted else "",
            }
        )
    return {
        "comparison": report,
        "rows": rows,
        "family": family_label(report),
        "left_out": {
            report.candidate: int(report.metadata.get("items_only_in_candidate") or 0),
            report.baseline: int(report.metadata.get("items_only_in_baseline") or 0),
        },
        "charts": [
            site.chart(
                forest_plot(report),
                f"evaluation--{slug}--forest",
                f"{report.candidate} − {report.baseline}",
            )
        ],
    }


def _read_evaluation(
    source: EvaluationSource,
) -> AnswerEvaluation | RetrievalEvaluation | EvaluationComparison:
    from kagreport.evaluation._read import read_report

    assert source.path is not None
    try:
        return read_report(source.path)
    except ValueError as exc:  # the suffix names no format
        raise SiteError(
            f"cannot read the evaluation {source.path}: {exc}", path=source.path
        ) from None


def _answer_context(report: AnswerEvaluation) -> dict[str, Any]:
    metrics = metric_rows(report)
    judges, criteria = _judge_rows(report, metrics)
    errors = _errors(report)
    best = next((m for m in metrics if m["value"] is not None), None)
    headline = [
        ("Items", count(len(report.items))),
        ("Judges", count(len(report.judges))),
        ("Best metric", f"{best['name']}: {best['shown_interval']}" if best else MISSING),
        ("Errors", errors["summary"].removeprefix("errors: ")),
    ]
    intervals = report.agreement_intervals
    headline += [
        (
            f"Krippendorff's alpha, {criterion} [95%]",
            score_interval(alpha, *(intervals.get(criterion) or (None, None))),
        )
        for criterion, alpha in list(report.agreement.items())[:4]
    ]
    return {
        "headline": headline,
        "metrics": metrics,
        "judges": judges,
        "criteria": criteria,
        "usage": _usage(report),
        "errors": errors,
        "agreement": [
            {
                "criterion": criterion,
                "alpha": alpha,
                "interval": report.agreement_intervals.get(criterion),
                "note": report.agreement_note(criterion),
            }
            for criterion, alpha in report.agreement.items()
        ],
        "corrections": _corrections(report),
        "n_items": len(report.items),
        "settings": dict(report.settings),
    }


def _corrections(report: AnswerEvaluation) -> dict[str, Any]:
    """The human labels' corrections as the text view shows them (one row per labelled
    metric, the intervals' method, one sentence per metric); empty without labels."""
    from kagreport.evaluation._correction import (
        METHOD_NOTE,
        TITLES,
        correction_cells,
        correction_sentence,
        is_proportion_correction,
    )

    corrections = report.label_corrections.values()
    shown = [(c, is_proportion_correction(c, report.items)) for c in corrections]
    return {
        "header": TITLES,
        "rows": [correction_cells(c, pct) for c, pct in shown],
        "method": METHOD_NOTE,
        "sentences": [correction_sentence(c, pct) for c, pct in shown],
    }


def _retrieval_context(report: RetrievalEvaluation) -> dict[str, Any]:
    metrics = metric_rows(report)
    by_name = {m["name"]: m for m in metrics}
    key = [by_name[n] for n in headline_metrics(report.metrics) if n in by_name]
    errors = _errors(report)
    headline = [("Items", count(len(report.items)))]
    headline += [(m["name"], m["shown_interval"]) for m in key]
    headline.append(("Errors", errors["summary"].removeprefix("errors: ")))
    return {
        "headline": headline,
        "metrics": metrics,
        "errors": errors,
        "settings": dict(report.settings),
    }


def headline_metrics(names: Any) -> list[str]:
    """The retrieval metrics a headline shows: ``complete@k`` (fast-graphrag's "perfect
    retrieval", first), ``hit@k`` and ``recall@k`` at their largest k, then ``mrr``, those
    the report has."""
    chosen = []
    for family in ("complete", "hit", "recall"):
        ks = cutoffs(names, family)
        if ks:
            chosen.append(f"{family}@{max(ks)}")
    return [*chosen, "mrr"] if "mrr" in names else chosen


def cutoffs(names: Any, family: str) -> list[int]:
    """The k of each ``<family>@<k>`` among ``names`` (``hit@5`` -> 5)."""
    prefix = f"{family}@"
    return [
        int(n[len(prefix) :]) for n in names if n.startswith(prefix) and n[len(prefix) :].isdigit()
    ]


def is_percent(name: str, values: Any = ()) -> bool:
    """Whether a metric shows as a percentage (:func:`kagreport._format.is_proportion`: by
    its name, ``recall@5`` being a recall, or its 0/1 items)."""
    return is_proportion(name, values)


def shown(value: Any, percent_: bool) -> str:
    """A metric's value as every view shows it: a percentage for a proportion, else a score
    with 3 decimals (:mod:`kagreport._format`)."""
    return percent(value) if percent_ else score(value)


def shown_interval(value: Any, low: Any, high: Any, percent_: bool) -> str:
    """A metric's value and interval as every view shows them: ``72.3% [68.3%, 76.1%]`` or
    ``0.725 [0.690, 0.760]`` (the value alone when a bound is undefined)."""
    if percent_:
        return percent_interval(value, low, high)
    return score_interval(value, low, high)


def metric_rows(report: AnswerEvaluation | RetrievalEvaluation) -> list[dict[str, Any]]:
    """The report's metrics, highest mean first (undefined last, ties by name), each with
    its 95% interval (:func:`kagreport.runs.metric_summaries`: Wilson for a proportion,
    else the percentile bootstrap) and its cells' text."""
    summaries = _summaries(report)
    coverage = report.coverage
    rows: list[dict[str, Any]] = []
    for name, value in report.metrics.items():
        pct = is_percent(name, (item.scores.get(name) for item in report.items))
        summary = summaries.get(name)
        low = None if summary is None or is_missing(summary.low) else summary.low
        high = None if summary is None or is_missing(summary.high) else summary.high
        text = shown(value, pct)
        rows.append(
            {
                "name": name,
                "value": None if is_missing(value) else float(value),
                "percent": pct,
                "shown": text,
                "low": low,
                "high": high,
                "method": None if summary is None else summary.method,
                "shown_interval": shown_interval(value, low, high, pct),
                "coverage": coverage.get(name),
            }
        )
    rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0), r["name"]))
    return rows


def _summaries(report: AnswerEvaluation | RetrievalEvaluation) -> dict[str, Any]:
    """Metric -> its ``kagreport.runs.MetricSummary``; none when the report cannot
    be a run (an item held twice)."""
    from kagreport.runs import Run, metric_summaries

    if not report.items or not report.metrics:
        return {}
    try:
        run = Run.from_evaluations([report], labels=["report"])
    except KagreportError:
        return {}
    return {s.metric: s for s in metric_summaries(run, list(report.metrics))}


def _judge_rows(
    report: AnswerEvaluation, metrics: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per judge with its metric per criterion (the judges' shared criteria as
    columns), errors and responses; highest first on the first criterion."""
    # The report's own metric order, so the criteria come in the judges' order.
    by_name = {row["name"]: row for row in metrics}
    by_name = {name: by_name[name] for name in report.metrics if name in by_name}
    criteria: list[str] = []
    rows = []
    for judge, identity in report.judges.items():
        own: dict[str, dict[str, Any]] = {}
        for name, row in by_name.items():
            if name == judge:
                own["score"] = row
            elif name.startswith(judge + ".") and name[len(judge) + 1 :] not in own:
                own[name[len(judge) + 1 :]] = row
        for criterion in own:
            if criterion not in criteria:
                criteria.append(criterion)
        usage = report.usage.get(judge, {})
        rows.append(
            {
                "name": judge,
                "identity": dumps_json(identity),
                "metrics": own,
                "errors": int(report.errors.get(judge, 0)),
                "responses": usage.get("responses"),
            }
        )
    criteria = criteria[:8]  # first seen: the judges' own order
    first = criteria[0] if criteria else None

    def key(row: dict[str, Any]) -> tuple[bool, float, str]:
        cell = row["metrics"].get(first) if first else None
        value = None if cell is None else cell["value"]
        return value is None, -(value or 0.0), row["name"]

    rows.sort(key=key)
    return rows, criteria


def _usage(report: AnswerEvaluation) -> dict[str, Any]:
    """The usage rows, and whether any count is recorded (not 0): all-zero usage
    collapses into one line."""
    rows = []
    for judge, counts in sorted(report.usage.items()):
        responses = int(counts.get("responses", 0))
        cached = int(counts.get("cached_responses", 0))
        rows.append(
            {
                "judge": judge,
                "responses": responses,
                "cached": cached,
                "saved": cached / responses if responses else None,
                "input_tokens": counts.get("input_tokens"),
                "output_tokens": counts.get("output_tokens"),
                "without_counts": counts.get("responses_without_token_counts"),
            }
        )
    recorded = any(bool(v) for counts in report.usage.values() for v in counts.values())
    if not rows:
        summary = "usage: none recorded (rule-based or replayed judges)"
    elif not recorded:
        summary = f"usage: none recorded ({plural(len(rows), 'judge')}, no model called)"
    else:
        calls = sum(int(counts.get("responses", 0)) for counts in report.usage.values())
        summary = f"usage: {plural(calls, 'response')} from {plural(len(rows), 'judge')}"
    return {"rows": rows, "recorded": recorded, "summary": summary}


def _errors(report: AnswerEvaluation | RetrievalEvaluation) -> dict[str, Any]:
    """The error counts, non-zero first, and a one-line summary (``"errors: none"``)."""
    counts = [(str(k), int(v)) for k, v in report.errors.items()]
    failing = [(k, v) for k, v in counts if v]
    total = sum(v for _, v in failing)
    if not failing:
        summary = "errors: none"
    else:
        summary = f"errors: {count(total)} in {len(failing)} of {plural(len(counts), 'count')}"
    counts.sort(key=lambda kv: (-kv[1], kv[0]))
    return {"rows": counts, "any": bool(failing), "summary": summary}

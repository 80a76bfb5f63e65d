"""The page of an evaluation report: an answer or retrieval evaluation, or a comparison."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kagreport._errors import SiteError
from kagreport._format import is_proportion
from kagreport.site._config import EvaluationSource
from kagreport.site._json import dumps_json
from kagreport.site._templates import Page

if TYPE_CHECKING:
    from kagreport.evaluation import (
        AnswerEvaluation,
        EvaluationComparison,
        RetrievalEvaluation,
    )
    from kagreport.site._build import Builder

__all__ = ["build_evaluation"]

#: Evaluation documents larger than this (bytes of JSON) are inlined without their items.
INLINE_LIMIT = 2_000_000


def build_evaluation(site: Builder, source: EvaluationSource) -> None:
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


def _build_evaluation(site: Builder, source: EvaluationSource) -> None:
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


def _details(
    site: Builder,
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
        note = f"comparison {report.candidate} vs {report.baseline}"
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
        note = f"answer evaluation, {len(report.items)} items, {len(report.judges)} judge(s)"
        return "answers", note, context
    if isinstance(report, RetrievalEvaluation):
        context = {
            "metrics": [
                {
                    "name": k,
                    "value": v,
                    "coverage": report.coverage.get(k),
                    "percent": _percent(report, k),
                }
                for k, v in report.metrics.items()
            ],
            "errors": dict(report.errors),
            "settings": dict(report.settings),
            "charts": [],
        }
        return "retrieval", f"retrieval evaluation, {len(report.items)} items", context
    raise TypeError(type(report).__name__)  # pragma: no cover - none of the three


def _comparison_context(site: Builder, report: EvaluationComparison, slug: str) -> dict[str, Any]:
    from kagreport.charts import forest_plot
    from kagreport.evaluation._text import family_label

    return {
        "comparison": report,
        "rows": [m.to_dict() for m in report.metrics.values()],
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
    from kagreport.evaluation import read_report

    assert source.path is not None
    try:
        return read_report(source.path)
    except ValueError as exc:  # the suffix names no format
        raise SiteError(
            f"cannot read the evaluation {source.path}: {exc}", path=source.path
        ) from None


def _answer_context(report: AnswerEvaluation) -> dict[str, Any]:
    coverage = report.coverage
    usage = []
    for judge, counts in sorted(report.usage.items()):
        responses = int(counts.get("responses", 0))
        cached = int(counts.get("cached_responses", 0))
        usage.append(
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
    return {
        "metrics": [
            {"name": k, "value": v, "coverage": coverage.get(k), "percent": _percent(report, k)}
            for k, v in report.metrics.items()
        ],
        "judges": [
            {"name": name, "identity": dumps_json(identity)}
            for name, identity in report.judges.items()
        ],
        "usage": usage,
        "errors": dict(report.errors),
        "agreement": [
            {
                "criterion": criterion,
                "alpha": alpha,
                "interval": report.agreement_intervals.get(criterion),
                "note": report.agreement_note(criterion),
            }
            for criterion, alpha in report.agreement.items()
        ],
        "n_items": len(report.items),
        "settings": dict(report.settings),
    }


def _percent(report: AnswerEvaluation | RetrievalEvaluation, metric: str) -> bool:
    """Whether ``metric`` is a proportion (a judge's 0/1 verdicts, a hit rate), shown as a
    percentage (:func:`kagreport._format.is_proportion`).

    A metric at a cut-off (``precision@2``) is decided with its family (``precision@*``),
    so one table never shows ``precision@1`` in percent and ``precision@2`` as a fraction.
    """
    base = metric.split("@")[0]
    family = [m for m in report.metrics if m == metric or m.split("@")[0] == base]
    values = (item.scores.get(m) for item in report.items for m in family)
    return is_proportion(base, values)

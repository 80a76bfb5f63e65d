"""The comparisons of a run's setups: the paired tests, with their run-level Holm family
and flipped items, from :func:`kagreport.runs.compare_setups` on the run model (nothing
here computes a statistic), the run's forest plot and one page per comparison.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kagreport.runs import Run, compare_setups
from kagreport.site._diff import FlipDetail, flip_details
from kagreport.site._templates import PAGE_SIZE

if TYPE_CHECKING:
    from kagreport.evaluation import EvaluationComparison
    from kagreport.site._build import Builder
    from kagreport.site._runs import SiteRun

__all__ = ["N_RESAMPLES", "SiteComparison", "comparison_pages", "run_comparisons"]

#: Resamples of the paired sign-flip test between setups.
N_RESAMPLES = 10_000
#: Flipped items a comparison page shows side by side (the first, by item); every flip is
#: in its table. Each shows two responses of up to RESPONSE_LIMIT characters.
SIDE_BY_SIDE_LIMIT = 500


@dataclass
class SiteComparison:
    """One comparison of two setups of a run, as its page and the index show it."""

    run: str
    candidate: str
    baseline: str
    href: str
    data: str
    comparison: EvaluationComparison
    flips: list[tuple[str, str, str]]  # (item, candidate outcome, baseline outcome), sorted
    only_candidate: int  # items graded for the candidate only
    only_baseline: int
    p_value_family: float  # Holm-adjusted across the run's comparisons
    details: list[FlipDetail] = field(default_factory=list)  # the flips side by side


def run_comparisons(site: Builder, run: SiteRun, model: Run) -> None:
    """Paired sign-flip tests of per-item correctness between the run's setups
    (:func:`kagreport.runs.compare_setups`: on the items graded for both setups,
    Holm-adjusted across the run's comparisons); unpaired pairs are noted."""
    found = compare_setups(
        model,
        pairs="all-pairs" if run.config.compare == "all-pairs" else "baseline",
        baseline=run.baseline,
        n_resamples=N_RESAMPLES,
        seed=0,
    )
    for candidate, baseline, only_c, only_b in found.skipped:
        note = (
            f"{candidate} vs {baseline}: not compared, no item was graded for both "
            f"({only_c} item(s) only in {candidate}, {only_b} only in {baseline})"
        )
        run.skipped.append(note)
        site.warn(f"run {run.name!r}: {note}")
    # Imported here: _runs imports this module (the setup pages' expected answers).
    from kagreport.site._runs import _expected, _question

    truth = run.report.ground_truth

    def expected(dataset: str, question: str) -> str | None:
        return _expected(truth, dataset, question)

    def question_text(dataset: str, question: str) -> str | None:
        return _question(truth, dataset, question)[0]

    slugs = run.setup_slugs
    for found_c in found.comparisons:
        candidate, baseline = found_c.candidate, found_c.baseline
        name = f"{run.slug}--{slugs[candidate]}--vs--{slugs[baseline]}"
        c = SiteComparison(
            run.name,
            candidate,
            baseline,
            f"comparisons/{name}.html",
            f"data/comparisons/{name}.json",
            found_c.comparison,
            [(item, str(a), str(b)) for item, a, b in found_c.flips],
            found_c.only_candidate,
            found_c.only_baseline,
            p_value_family=found_c.p_values_family["correct"],
        )
        c.comparison = _with_context(c, found_c.family_comparison(), list(found.family))
        c.details = flip_details(
            model,
            candidate,
            baseline,
            [f[0] for f in c.flips[:SIDE_BY_SIDE_LIMIT]],
            question_text,
            expected,
        )
        run.comparisons.append(c)


def comparison_pages(site: Builder, run: SiteRun, hrefs: Mapping[str, str]) -> None:
    """The run's forest plot, then one page per comparison (with the forest plot)."""
    from kagreport.site._runs import RESPONSE_LIMIT

    if not run.comparisons:
        return
    run.forest = site.chart(
        _run_forest(run),
        f"{run.slug}--comparisons-forest",
        "Accuracy differences, every comparison of the run",
    )
    all_pairs = run.config.compare == "all-pairs"
    for c in run.comparisons:
        document = c.comparison.dumps("json")
        site.write(c.data, document)
        figure = run.forest
        if all_pairs:
            # The rows of the two setups only: with every pair, the run's plot has
            # n(n-1)/2 rows, and one copy a page would grow the site as n^4.
            near = [
                other
                for other in run.comparisons
                if {other.candidate, other.baseline} & {c.candidate, c.baseline}
            ]
            figure = site.chart(
                _run_forest(
                    run,
                    near,
                    title=f"Accuracy differences involving {c.candidate} or "
                    f"{c.baseline} ({run.name})",
                ),
                f"{c.href.removeprefix('comparisons/').removesuffix('.html')}--forest",
                f"Accuracy differences involving {c.candidate} or {c.baseline}",
                figure=False,
            )
        site.page(
            c.href,
            "comparison.html.j2",
            title=f"{c.candidate} vs {c.baseline} ({run.name})",
            run=run,
            c=c,
            candidate=c.candidate,
            baseline=c.baseline,
            candidate_href=hrefs[c.candidate],
            baseline_href=hrefs[c.baseline],
            comparison=c.comparison,
            rows=[m.to_dict() for m in c.comparison.metrics.values()],
            document=json.loads(document),
            data=c.data,
            figure=figure,
            all_pairs=all_pairs,
            forest_row=_forest_label(run, c),
            flips={"columns": ["item", "candidate", "baseline"], "rows": c.flips},
            first_flips=c.flips[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            n_flips=len(c.flips),
            gained=sum(1 for _, o, _ in c.flips if o == "correct"),
            details=c.details,
            response_limit=RESPONSE_LIMIT,
            family=len(run.comparisons),
        )


def _forest_label(run: SiteRun, comparison: SiteComparison) -> str:
    if run.config.compare == "all-pairs":
        return f"{comparison.candidate} − {comparison.baseline}"
    return comparison.candidate


def _run_forest(
    run: SiteRun, comparisons: list[SiteComparison] | None = None, title: str | None = None
) -> Any:
    """The forest plot of the comparisons of ``run`` (default all): one row per pair.

    The rows carry the Holm adjustment across the run's comparisons, so a filled point
    means significant after correcting for all of them.
    """
    import pandas as pd

    from kagreport.charts import forest_plot

    rows = []
    for c in run.comparisons if comparisons is None else comparisons:
        m = c.comparison.metrics["correct"].to_dict()
        m["metric"] = _forest_label(run, c)
        m["p_value_holm"] = c.p_value_family
        rows.append(m)
    if title is None and run.config.compare == "all-pairs":
        title = f"Accuracy differences between the setups of {run.name}"
    elif title is None:
        title = f"Accuracy difference against {run.baseline} ({run.name})"
    return forest_plot(pd.DataFrame(rows), title=title, percent=True)


def _with_context(
    c: SiteComparison, comparison: EvaluationComparison, family: list[str]
) -> EvaluationComparison:
    """``comparison`` (its Holm-adjusted p-value already the one across the run's
    comparisons, named in ``family`` as ``"candidate vs baseline"``) as the site reports
    it: the site's context, that family included, is in its metadata."""
    size = len(family)
    p_value = c.p_value_family
    settings = dict(comparison.settings)
    settings["adjustment"] = f"holm across the {size} comparison(s) of run {c.run!r}"
    return dataclasses.replace(
        comparison,
        settings=settings,
        metadata={
            "run": c.run,
            "items_only_in_candidate": c.only_candidate,
            "items_only_in_baseline": c.only_baseline,
            "comparisons_in_run": size,
            "holm_family": list(family),
            "p_value_holm_across_run": None if math.isnan(p_value) else p_value,
        },
    )

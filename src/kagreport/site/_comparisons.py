"""The comparisons of a run's systems: the paired tests with their run-level Holm family
(:func:`kagreport.runs.compare_setups`), the flipped items side by side
(:func:`kagreport.runs.flipped_items`, with word diffs), the run's forest plot and one page
per comparison. Nothing here computes a statistic.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any, NamedTuple

from kagreport import _format
from kagreport._format import isolated
from kagreport.runs import compare_setups, flipped_items
from kagreport.site._diff import flip_detail
from kagreport.site._items import RESPONSE_LIMIT
from kagreport.site._pagedata import SiteComparison, SiteRun
from kagreport.site._templates import PAGE_SIZE, holm_family

if TYPE_CHECKING:
    from kagreport.evaluation import EvaluationComparison
    from kagreport.site._context import SiteContent

__all__ = [
    "ALPHA",
    "FIRST_FLIPS",
    "N_RESAMPLES",
    "SIDE_BY_SIDE_LIMIT",
    "Verdict",
    "plan_comparisons",
    "verdict",
]

#: Resamples of the paired sign-flip test between systems.
N_RESAMPLES = 10_000
#: Flipped items a comparison page shows side by side (the first, by item); every flip is
#: in its table. Each shows two responses of up to RESPONSE_LIMIT characters.
SIDE_BY_SIDE_LIMIT = 500
#: Flipped items side by side on a comparison page's first screenful of them; the others
#: are a page away (assets/site.js) or, without scripts, in a fold below them.
FIRST_FLIPS = 20
#: The level below which a Holm-adjusted p-value makes a comparison significant (as the
#: forest plot's filled points, :func:`kagreport.charts.forest_plot`).
ALPHA = 0.05


class Verdict(NamedTuple):
    """One comparison as one of its two systems reads it: the other system, its page, the
    difference (this system minus the other, as the pages show it), the Holm-adjusted
    p-value across the run's comparisons and what it says (``"higher"``, ``"lower"`` or
    ``"not significant"``, at :data:`ALPHA`), and the comparison's verdict as this system
    reads it (``decision``: better / worse / equivalent / inconclusive, better and worse
    swapped for the baseline, :class:`~kagreport.evaluation.MetricVerdict`) with its margin of
    equivalence as shown (``margin``, e.g. ``"1.0 pp"``)."""

    other: str
    href: str
    difference: str
    p_value: str
    word: str
    decision: str = "inconclusive"
    margin: str = ""

    @property
    def significant(self) -> bool:
        return self.word != "not significant"


def plan_comparisons(site: SiteContent, entry: SiteRun) -> None:
    """Paired sign-flip tests of the run's headline metric between its systems, on the
    items both hold, Holm-adjusted across the run's comparisons; then the forest plot and
    one page per comparison. Pairs that share no item are noted, not compared."""
    run, metric = entry.run, entry.metric
    assert metric is not None
    if len(run.systems) < 2:
        entry.notes.append("The run has one system only, so there is nothing to compare.")
        return
    found = compare_setups(
        run,
        pairs="all-pairs" if entry.compare == "all-pairs" else "baseline",
        metrics=(metric,),
        baseline=entry.baseline,
        n_resamples=N_RESAMPLES,
        seed=0,
    )
    for candidate, baseline, only_c, only_b in found.skipped:
        note = (
            f"{isolated(candidate)} vs {isolated(baseline)}: not compared, the two share no "
            f"item ({_format.plural(only_c, 'item')} only in {isolated(candidate)}, "
            f"{_format.count(only_b)} only in {isolated(baseline)})"
        )
        entry.skipped.append(note)
        site.warn(f"run {entry.name!r}: {note}")
    slugs = entry.system_slugs
    for found_c in found.comparisons:
        candidate, baseline = found_c.candidate, found_c.baseline
        name = f"{entry.slug}--{slugs[candidate]}--vs--{slugs[baseline]}"
        c = SiteComparison(
            entry.name,
            candidate,
            baseline,
            metric,
            f"comparisons/{name}.html",
            f"data/comparisons/{name}.json",
            found_c.comparison,
            [(item, a or "unknown", b or "unknown") for item, a, b in found_c.flips],
            found_c.only_candidate,
            found_c.only_baseline,
            p_value_family=found_c.p_values_family[metric],
        )
        c.comparison = _with_context(c, found_c.comparison, list(found.family))
        c.decision = found_c.verdicts.get(metric)
        if c.decision is not None:
            c.sentence = c.decision.sentence(proportion=entry.percent)
            c.margin = _format.difference(c.decision.margin, proportion=entry.percent)
            c.margin = c.margin.removeprefix("+")
        # Every flip's scores are needed to count those the candidate gains on a score;
        # pass/fail outcomes say it for correctness.
        limit = SIDE_BY_SIDE_LIMIT if metric == "correct" else None
        items = flipped_items(run, candidate, baseline, metric, limit=limit)
        if metric == "correct":
            c.gained = sum(1 for _, outcome, _ in c.flips if outcome == "correct")
        else:
            c.gained = sum(1 for f in items if f.candidate.score > f.baseline.score)
        c.details = [flip_detail(f) for f in items[:SIDE_BY_SIDE_LIMIT]]
        entry.comparisons.append(c)
    _verdicts(entry)
    _pages(site, entry)


def verdict(entry: SiteRun, c: SiteComparison, system: str) -> Verdict:
    """Comparison ``c`` as ``system`` (its candidate or its baseline) reads it."""
    m = c.result
    sign = 1.0 if system == c.candidate else -1.0
    raw = math.nan if m is None else sign * float(m.mean_difference)
    shown = _format.difference(raw, proportion=entry.percent)
    p = c.p_value_family
    word = "not significant"
    if not math.isnan(p) and p < ALPHA and not math.isnan(raw) and raw != 0:
        word = "higher" if raw > 0 else "lower"
    other = c.baseline if system == c.candidate else c.candidate
    decision, margin = "inconclusive", ""
    if c.decision is not None:
        swap = {"better": "worse", "worse": "better"} if sign < 0 else {}
        decision = swap.get(c.decision.verdict, c.decision.verdict)
        margin = _format.difference(c.decision.margin, proportion=entry.percent).lstrip("+")
    return Verdict(other, c.href, shown, _format.p_value(p), word, decision, margin)


def _verdicts(entry: SiteRun) -> None:
    """Each leaderboard row's verdicts (its ``"verdicts"``): against the baseline for a
    candidate (none for the baseline itself), against every other system with all pairs."""
    for row in entry.leaderboard:
        system = row["system"]
        row["verdicts"] = [
            verdict(entry, c, system)
            for c in entry.comparisons
            if system == c.candidate or (entry.compare == "all-pairs" and system == c.baseline)
        ]


def _pages(site: SiteContent, entry: SiteRun) -> None:
    """The run's forest plot, then one page per comparison (with the forest plot)."""
    if not entry.comparisons:
        return
    entry.forest = site.chart(
        _forest(entry),
        f"{entry.slug}--comparisons-forest",
        f"{_noun(entry).capitalize()} differences, every comparison of the run",
    )
    all_pairs = entry.compare == "all-pairs"
    rows = {row["system"]: row for row in entry.leaderboard}
    for c in entry.comparisons:
        document = c.comparison.dumps("json")
        site.write(c.data, document)
        figure = entry.forest
        if all_pairs:
            # The rows of the two systems only: with every pair, the run's plot has
            # n(n-1)/2 rows, and one copy a page would grow the site as n^4.
            near = [
                other
                for other in entry.comparisons
                if {other.candidate, other.baseline} & {c.candidate, c.baseline}
            ]
            figure = site.chart(
                _forest(
                    entry,
                    near,
                    title=f"{_chart_noun(entry)} differences involving "
                    f"{_drawn(c.candidate)} or {_drawn(c.baseline)} ({_drawn(entry.name)})",
                ),
                f"{c.href.removeprefix('comparisons/').removesuffix('.html')}--forest",
                f"Differences involving {c.candidate} or {c.baseline}",
                figure=False,
            )
        # Each flip links to its article side by side (``flip-<n>``) where it has one; each
        # article says whether the candidate gained it (correct, or the higher score).
        anchors = {d.item: f"flip-{n}" for n, d in enumerate(c.details, start=1)}
        flips = [(item, a, b, anchors.get(item)) for item, a, b in c.flips]
        sides = [
            "gained"
            if (
                d.candidate.outcome == "correct"
                if c.metric == "correct"
                else d.candidate.score > d.baseline.score
            )
            else "lost"
            for d in c.details
        ]
        site.page(
            c.href,
            "comparison.html.j2",
            title=f"{isolated(c.candidate)} vs {isolated(c.baseline)} ({isolated(entry.name)})",
            run=entry,
            c=c,
            candidate=c.candidate,
            baseline=c.baseline,
            candidate_href=entry.system_hrefs[c.candidate],
            baseline_href=entry.system_hrefs[c.baseline],
            comparison=c.comparison,
            rows=[m.to_dict() for m in c.comparison.metrics.values()],
            headline_rows=[rows[s] for s in (c.candidate, c.baseline) if s in rows],
            verdict=verdict(entry, c, c.candidate),
            document=json.loads(document),
            data=c.data,
            figure=figure,
            all_pairs=all_pairs,
            forest_row=_forest_label(entry, c),
            flips={"columns": ["item", "candidate", "baseline", "anchor"], "rows": flips},
            first_flips=flips[:PAGE_SIZE],
            page_size=PAGE_SIZE,
            n_flips=len(c.flips),
            gained=c.gained,
            details=c.details,
            first_details=FIRST_FLIPS,
            sides=sides,
            response_limit=RESPONSE_LIMIT,
            family=len(entry.comparisons),
        )


def _noun(entry: SiteRun) -> str:
    return "accuracy" if entry.metric == "correct" else str(entry.metric)


def _chart_noun(entry: SiteRun) -> str:
    """:func:`_noun` at the start of a chart's title: drawn, its first letter a capital."""
    noun = _drawn(_noun(entry))
    return noun[:1].upper() + noun[1:]


def _drawn(name: str) -> str:
    """A name in a chart's title, as the charts draw names (printable, cut, isolated)."""
    return _format.isolated(name, _format.NAME_LIMIT)


def _forest_label(entry: SiteRun, comparison: SiteComparison) -> str:
    if entry.compare == "all-pairs":
        return f"{comparison.candidate} − {comparison.baseline}"
    return comparison.candidate


def _forest(
    entry: SiteRun, comparisons: list[SiteComparison] | None = None, title: str | None = None
) -> Any:
    """The forest plot of the comparisons of ``entry`` (default all): one row per pair.

    The rows carry the Holm adjustment across the run's comparisons, so a filled point
    means significant after correcting for all of them, and the Holm-adjusted intervals
    that agree with it (a bar excludes 0 exactly when its point is filled).
    """
    import pandas as pd

    from kagreport.charts import forest_plot

    rows = []
    for c in entry.comparisons if comparisons is None else comparisons:
        m = c.comparison.metrics[c.metric].to_dict()
        # Both names of a pair stay visible in its row however long they are.
        m["metric"] = (
            _format.pair_label(c.candidate, c.baseline)
            if entry.compare == "all-pairs"
            else c.candidate
        )
        m["p_value_holm"] = c.p_value_family
        m["interval"] = str(c.comparison.settings.get("interval", ""))
        rows.append(m)
    noun, run = _chart_noun(entry), _drawn(entry.name)
    if title is None and entry.compare == "all-pairs":
        title = f"{noun} differences between the systems of {run}"
    elif title is None:
        title = f"{noun} difference against {_drawn(str(entry.baseline))} ({run})"
    return forest_plot(pd.DataFrame(rows), title=title, percent=entry.percent)


def _with_context(
    c: SiteComparison, comparison: EvaluationComparison, family: list[str]
) -> EvaluationComparison:
    """``comparison`` (its Holm-adjusted p-value already the one across the run's
    comparisons, named in ``family`` as ``"candidate vs baseline"``) as the site reports
    it: the site's context, that family included, is in its metadata."""
    size = len(family)
    p_value = c.p_value_family
    settings = dict(comparison.settings)
    settings["adjustment"] = f"holm across {holm_family(size)} (run {c.run!r})"
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

"""The page data of a run: :class:`SiteRun` and :class:`SiteComparison`, what the index,
the system pages and the comparison pages of a run show (plain data: the templates and
``assets/site.js`` read them; nothing here computes or writes anything)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kagreport.evaluation import EvaluationComparison
    from kagreport.runs import Run
    from kagreport.site._config import RunConfig, SourceConfig
    from kagreport.site._diff import FlipDetail
    from kagreport.site._templates import Chart

__all__ = ["SiteComparison", "SiteRun"]


@dataclass
class SiteRun:
    """One run of the site: what the index shows of it and what its pages link to."""

    name: str
    slug: str
    config: RunConfig | SourceConfig
    key: str  # "runs[0]" or "sources[1]": where the configuration names it
    run: Run
    tool: str
    document: str  # its run model, a kagreport.run document
    response_lengths: list[int | None] | None = None  # of the whole responses
    data: str | None = None  # its kag stats JSON (a kag tree's run)
    baseline: str | None = None
    metric: str | None = None  # the headline metric: "correct", else the run's first
    percent: bool = False  # whether the metric is a proportion (shown as a percentage)
    wilson: bool = False  # whether the leaderboard's means are proportions with Wilson intervals
    clustered: bool = False  # a run with repeats: cluster-robust (CR1) leaderboard intervals
    passk: list[dict[str, Any]] = field(default_factory=list)  # runs.pass_k rows (repeats)
    kag: bool = False  # every row has an outcome and the metric is correct: kag's columns
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    costs: list[tuple[str, str]] = field(default_factory=list)  # leaderboard cost columns
    charts: list[Chart] = field(default_factory=list)
    comparisons: list[Any] = field(default_factory=list)  # site._comparisons.SiteComparison
    forest: Chart | None = None
    notes: list[str] = field(default_factory=list)  # said under the run's charts
    skipped: list[str] = field(default_factory=list)  # pairs not compared, and why
    attribution: str = ""
    simulated: str = ""  # the SIMULATED notice of a run `kagreport simulate` wrote
    unparsable: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    system_slugs: dict[str, str] = field(default_factory=dict)
    system_hrefs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)  # kag stats' datasets, questions

    @property
    def compare(self) -> str:
        return self.config.compare

    @property
    def ranked(self) -> bool:
        """Whether the leaderboard has rank intervals and tie groups (a 0/1 metric)."""
        return any(row.get("rank_low") is not None for row in self.leaderboard)

    @property
    def convention(self) -> str | None:
        """How the tool's files were read (said on the run's pages)."""
        found = self.run.metadata.get("convention")
        return found if isinstance(found, str) else None


@dataclass
class SiteComparison:
    """One comparison of two systems of a run, as its page and the index show it."""

    run: str
    candidate: str
    baseline: str
    metric: str
    href: str
    data: str
    comparison: EvaluationComparison
    flips: list[tuple[str, str, str]]  # (item, candidate outcome, baseline outcome), sorted
    only_candidate: int  # items the candidate holds and the baseline does not
    only_baseline: int
    p_value_family: float  # Holm-adjusted across the run's comparisons
    details: list[FlipDetail] = field(default_factory=list)  # the flips side by side
    decision: Any = None  # kagreport.evaluation.MetricVerdict of the metric: better, worse, ...
    sentence: str = ""  # the decision in words (MetricVerdict.sentence)
    margin: str = ""  # the decision's practical margin as the page writes it ("1.0 pp")
    gained: int = 0  # flips the candidate is right on (or scores higher on)

    @property
    def result(self) -> Any:
        """The compared metric's result (:class:`kagreport.evaluation.MetricComparison`)."""
        return self.comparison.metrics.get(self.metric)

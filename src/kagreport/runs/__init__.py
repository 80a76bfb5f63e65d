"""The format-neutral run model: systems (setups) x items, and the views drawn from it.

:class:`Run` holds per-item metrics, outcomes, costs and texts in columns; it is built
from a graded kag tree (:meth:`Run.from_stats`) or from evaluations of the same items
(:meth:`Run.from_evaluations`) and round-trips through a versioned JSON document.
:func:`leaderboard`, :func:`compare_setups` and :func:`cost_frontier` are what the site,
widgets and notebooks show; :func:`setup_metrics` gives kag's per-setup metrics of any run
and :data:`COSTS` the cost axes the charts share, :func:`cost_intervals` the bootstrap
interval of each mean cost; :data:`OUTCOMES` names the outcome codes.
:func:`flipped_items` gives the items two systems score differently, with both sides'
texts and costs (the same items as ``compare_setups``' flips); :class:`LazyTexts` is a
text column read on demand (a kag tree's responses stay in its result files).
:func:`history` follows each system across runs in time order, each change tested.
:func:`repeat_scores` gives every repeat's score (Inspect epochs, promptfoo repeats) and
the item, the cluster, it repeats, and :func:`pass_k` each system's pass@k and pass^k over
those repeats.
"""

from __future__ import annotations

from kagreport.evaluation import VERDICTS, MetricVerdict  # a run comparison's verdicts
from kagreport.runs._costs import COSTS, CostAxis, cost_axis, recorded_columns, recorded_costs
from kagreport.runs._flips import FlippedItem, FlippedSide, flipped_items
from kagreport.runs._history import history
from kagreport.runs._intervals import CostInterval, cost_intervals
from kagreport.runs._leaderboard import CLUSTER_INTERVAL, LeaderboardRow, leaderboard
from kagreport.runs._metrics import kag_stats_json, setup_metrics
from kagreport.runs._model import OUTCOMES, Run
from kagreport.runs._passk import PassRow, pass_k
from kagreport.runs._repeats import RepeatScores, repeat_scores
from kagreport.runs._search import response_matcher
from kagreport.runs._summaries import MetricSummary, metric_summaries, retrieval_answer_tables
from kagreport.runs._texts import LazyTexts
from kagreport.runs._views import (
    FrontierPoint,
    SetupComparison,
    SetupComparisons,
    compare_setups,
    cost_frontier,
)

__all__ = [
    "CLUSTER_INTERVAL",
    "COSTS",
    "OUTCOMES",
    "VERDICTS",
    "CostAxis",
    "CostInterval",
    "FlippedItem",
    "FlippedSide",
    "FrontierPoint",
    "LazyTexts",
    "LeaderboardRow",
    "MetricSummary",
    "MetricVerdict",
    "PassRow",
    "RepeatScores",
    "Run",
    "SetupComparison",
    "SetupComparisons",
    "compare_setups",
    "cost_axis",
    "cost_frontier",
    "cost_intervals",
    "flipped_items",
    "history",
    "kag_stats_json",
    "leaderboard",
    "metric_summaries",
    "pass_k",
    "recorded_columns",
    "recorded_costs",
    "repeat_scores",
    "response_matcher",
    "retrieval_answer_tables",
    "setup_metrics",
]

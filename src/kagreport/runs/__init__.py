"""The format-neutral run model: systems (setups) x items, and the views drawn from it.

:class:`Run` holds per-item metrics, outcomes, costs and texts in columns; it is built
from a graded kag tree (:meth:`Run.from_stats`) or from evaluations of the same items
(:meth:`Run.from_evaluations`) and round-trips through a versioned JSON document.
:func:`leaderboard`, :func:`compare_setups` and :func:`cost_frontier` are what the site,
widgets and notebooks show; :func:`setup_metrics` gives kag's per-setup metrics of any
run.
:func:`flipped_items` gives the items two systems score differently, with both sides'
texts and costs (the same items as ``compare_setups``' flips); ``LazyTexts`` is a
text column read on demand (a kag tree's responses stay in its result files).
:func:`history` follows each system across runs in time order, each change tested.
:func:`repeat_scores` gives every repeat's score (Inspect epochs, promptfoo repeats) and
the item, the cluster, it repeats, and :func:`pass_k` each system's pass@k and pass^k over
those repeats.
"""

from __future__ import annotations

from kagreport.runs._flips import FlippedItem, FlippedSide, flipped_items
from kagreport.runs._history import history
from kagreport.runs._leaderboard import leaderboard
from kagreport.runs._metrics import setup_metrics
from kagreport.runs._model import Run
from kagreport.runs._passk import pass_k
from kagreport.runs._repeats import repeat_scores
from kagreport.runs._summaries import metric_summaries
from kagreport.runs._views import SetupComparison, SetupComparisons, compare_setups, cost_frontier

__all__ = [
    "FlippedItem",
    "FlippedSide",
    "Run",
    "SetupComparison",
    "SetupComparisons",
    "compare_setups",
    "cost_frontier",
    "flipped_items",
    "history",
    "leaderboard",
    "metric_summaries",
    "pass_k",
    "repeat_scores",
    "setup_metrics",
]

"""pandas DataFrames, confidence intervals and LaTeX tables from kagreport's reports.

Importing this module loads pandas; the layers below it never do.
"""

from __future__ import annotations

from kagreport.frames._latex import latex_escape, to_latex
from kagreport.frames._tables import (
    COST_AXES,
    OVERALL,
    RETRIEVAL_COSTS,
    agreement_frame,
    comparison_frame,
    cost_values,
    evaluation_frame,
    items_frame,
    metrics_frame,
    no_retrieval,
    stats_frame,
)
from kagreport.stats import pareto_front, wilson_interval

__all__ = [
    "COST_AXES",
    "OVERALL",
    "RETRIEVAL_COSTS",
    "agreement_frame",
    "comparison_frame",
    "cost_values",
    "evaluation_frame",
    "items_frame",
    "latex_escape",
    "metrics_frame",
    "no_retrieval",
    "pareto_front",
    "stats_frame",
    "to_latex",
    "wilson_interval",
]

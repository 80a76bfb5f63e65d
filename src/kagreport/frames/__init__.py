"""pandas DataFrames, confidence intervals and LaTeX tables from kagreport's reports and runs.

Importing this module loads pandas; the layers below it never do.
"""

from __future__ import annotations

from kagreport._optional import need, optional

# What this package needs from its extra: one line naming the extra when one is missing.
_NEEDS = ("pandas",)
with optional(*_NEEDS):
    need(*_NEEDS)
    from kagreport.frames._latex import to_latex
    from kagreport.frames._tables import (
        OVERALL,
        agreement_frame,
        comparison_frame,
        evaluation_frame,
        items_frame,
        metrics_frame,
        stats_frame,
    )


__all__ = [
    "OVERALL",
    "agreement_frame",
    "comparison_frame",
    "evaluation_frame",
    "items_frame",
    "metrics_frame",
    "stats_frame",
    "to_latex",
]

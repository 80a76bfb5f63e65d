"""Plain-text summaries of evaluations and comparisons (for terminals and logs)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["render_comparison", "render_evaluation"]


def _number(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.2e}" if value < 1e-4 else f"{value:.4f}"


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(header), *(line(r) for r in rows)]


def render_evaluation(evaluation: Any) -> str:
    """Metrics (mean, items defined), errors, agreement and judge usage as text."""
    coverage = evaluation.coverage
    rows = [
        [name, _number(value), str(coverage.get(name, 0))]
        for name, value in evaluation.metrics.items()
    ]
    out = [f"{evaluation.n_items} items"]
    if rows:
        out += ["", *_table(["METRIC", "MEAN", "ITEMS"], rows)]
    errors = {k: v for k, v in evaluation.errors.items() if v}
    out += ["", "errors: " + (", ".join(f"{k} {v}" for k, v in errors.items()) or "none")]
    agreement = getattr(evaluation, "agreement", {})
    if agreement:
        intervals = getattr(evaluation, "agreement_intervals", {})
        cells = []
        for name, alpha in agreement.items():
            low, high = intervals.get(name, (math.nan, math.nan))
            cells.append([name, _number(alpha, 3), f"[{_number(low, 3)}, {_number(high, 3)}]"])
        out += ["", *_table(["CRITERION", "ALPHA", "95% CI"], cells)]
    usage = getattr(evaluation, "usage", {})
    if usage:
        cells = [
            [
                name,
                str(u.get("responses", 0)),
                str(u.get("cached_responses", 0)),
                str(u.get("input_tokens", 0)),
                str(u.get("output_tokens", 0)),
            ]
            for name, u in usage.items()
        ]
        out += ["", *_table(["JUDGE", "RESPONSES", "CACHED", "IN_TOKENS", "OUT_TOKENS"], cells)]
    return "\n".join(out) + "\n"


def render_comparison(comparison: Any, alpha: float = 0.05) -> str:
    """The paired sign-flip test per metric as a table; ``*`` marks Holm p < alpha."""
    rows = []
    for name, m in comparison.metrics.items():
        mark = "*" if m.p_value_holm is not None and m.p_value_holm < alpha else ""
        rows.append(
            [
                name,
                str(m.n_pairs),
                _number(m.candidate_mean),
                _number(m.baseline_mean),
                _number(m.mean_difference),
                f"[{_number(m.ci_low)}, {_number(m.ci_high)}]",
                _p(m.p_value),
                _p(m.p_value_holm) + mark,
            ]
        )
    out = [
        f"{comparison.candidate} vs {comparison.baseline}: {comparison.n_items} paired items "
        f"(paired sign-flip test, two-sided; Holm across metrics)",
        "",
        *_table(
            ["METRIC", "PAIRS", "CANDIDATE", "BASELINE", "DIFF", "95% CI", "P", "P_HOLM"], rows
        ),
        "",
        f"* Holm-adjusted p < {alpha}",
    ]
    if comparison.judge_mismatch:
        judges = ", ".join(sorted(comparison.judge_mismatch))
        out.append(
            f"warning: judges with different identities in the two reports: {judges} "
            "(the difference is then partly the judges')"
        )
    return "\n".join(out) + "\n"

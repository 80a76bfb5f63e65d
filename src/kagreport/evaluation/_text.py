"""Plain-text summaries of evaluations and comparisons (for terminals and logs)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kagreport._format import (
    MISSING,
    count,
    difference,
    difference_interval,
    is_proportion,
    metric,
    p_value,
    percent,
    plural,
    score,
    score_interval,
)

__all__ = [
    "compared_proportion",
    "family_label",
    "method_label",
    "render_comparison",
    "render_comparison_html",
    "render_evaluation",
    "render_evaluation_html",
]


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if c not in (9,)}


def _safe(text: object) -> str:
    """Text from a report, safe for a terminal: control characters (ESC...) shown escaped."""
    return str(text).translate(_CONTROL)


def _table(header: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    header = [_safe(h) for h in header]
    rows = [[_safe(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _mean(evaluation: Any, name: str, value: Any) -> str:
    """A metric's mean (:func:`kagreport._format.metric`): in percent for a proportion (by
    name, or 0/1 items), else a score with 3 decimals."""
    per_item = getattr(evaluation, "per_item", None)
    values = per_item(name) if per_item is not None and name in evaluation.metrics else ()
    return metric(name, value, values)


def compared_proportion(comparison: Any, name: str) -> bool:
    """Whether a compared metric is a proportion: by its name, or scored 0 or 1 on every
    item of both sides (``settings["proportions"]`` of the comparison)."""
    settings = getattr(comparison, "settings", None) or {}
    return is_proportion(name) or name in (settings.get("proportions") or ())


def _difference(m: Any, proportion: bool, verdict: Any) -> tuple[str, str, str]:
    """Candidate and baseline means, and their difference with its verdict's interval (at
    the family's adjusted level, :meth:`EvaluationComparison.verdicts`): percentages and
    percentage points for a proportion (``−10.6 pp [−14.6, −6.6]``), else scores
    (``−0.250 [−0.500, 0.000]``)."""
    mean = percent if proportion else score
    return (
        mean(m.candidate_mean),
        mean(m.baseline_mean),
        difference_interval(m.mean_difference, verdict.low, verdict.high, proportion=proportion),
    )


def _verdicts(comparison: Any) -> dict[str, Any]:
    """The comparison's verdicts (:meth:`EvaluationComparison.verdicts`)."""
    return dict(comparison.verdicts())


def _verdict_cell(v: Any) -> str:
    """``better``, ``worse``, ``equivalent (±1.0 pp)``... with the margin of equivalence;
    ``inconclusive`` marks a metric judged outside the family with ``(unadjusted)``."""
    return str(v.verdict) + ("" if v.adjusted else " (unadjusted)")


def _interval_note(verdicts: Mapping[str, Any], comparison: Any) -> str:
    """What the tables' intervals are, and the verdicts' margin."""
    alone = any(not v.adjusted for v in verdicts.values())
    margin = next(iter(verdicts.values())).margin if verdicts else 0.01
    shown = difference(margin, proportion=True).lstrip("+") if verdicts else ""
    if verdicts and not all(compared_proportion(comparison, m) for m in verdicts):
        shown += f" ({margin:g} on a score)"
    return (
        "95% CI: Holm-adjusted 95% interval (test-based, at the level Holm tested the metric "
        "at: it excludes 0 exactly when P_HOLM < 0.05)"
        + ("; unadjusted 95% for a metric outside the family (judged on P)" if alone else "")
        + "; the bootstrap 95% interval is in the report's data (ci_low, ci_high). "
        + f"VERDICT: better/worse when the test rejects; equivalent within ±{shown}; "
        "else inconclusive"
    )


def render_evaluation(evaluation: Any) -> str:
    """Metrics (mean, items defined), errors, agreement and judge usage as text; a
    proportion's mean in percent."""
    coverage = evaluation.coverage
    rows = [
        [name, _mean(evaluation, name, value), count(coverage.get(name, 0))]
        for name, value in evaluation.metrics.items()
    ]
    out = [plural(evaluation.n_items, "item")]
    if rows:
        out += ["", *_table(["METRIC", "MEAN", "ITEMS"], rows)]
    errors = {k: v for k, v in evaluation.errors.items() if v}
    out += ["", "errors: " + _safe(", ".join(f"{k} {v}" for k, v in errors.items()) or "none")]
    agreement = getattr(evaluation, "agreement", {})
    if agreement:
        intervals = getattr(evaluation, "agreement_intervals", {})
        cells = []
        for name, alpha in agreement.items():
            low, high = intervals.get(name, (math.nan, math.nan))
            cells.append([name, score_interval(alpha, low, high)])
        out += ["", *_table(["CRITERION", "ALPHA [95% CI]"], cells)]
        notes = [(name, evaluation.agreement_note(name)) for name in agreement]
        if any(note for _, note in notes):
            out += [""] + [_safe(f"{name}: {note}") for name, note in notes if note]
    corrected, lines = _corrections(evaluation)
    if corrected:
        from kagreport.evaluation._correction import HEADER

        out += ["", *_table(HEADER, corrected), *(_safe(line) for line in lines)]
    usage = getattr(evaluation, "usage", {})
    if usage:
        cells = [
            [
                name,
                count(u.get("responses", 0)),
                count(u.get("cached_responses", 0)),
                count(u.get("input_tokens", 0)),
                count(u.get("output_tokens", 0)),
            ]
            for name, u in usage.items()
        ]
        out += ["", *_table(["JUDGE", "RESPONSES", "CACHED", "IN_TOKENS", "OUT_TOKENS"], cells)]
    return "\n".join(out) + "\n"


def _corrections(evaluation: Any) -> tuple[list[list[str]], list[str]]:
    """The human labels' corrections: one row per labelled metric (judge alone, labels
    alone, PPI++) and the lines under the table (what the intervals are, then one sentence
    per metric); nothing without labels."""
    from kagreport.evaluation._correction import (
        METHOD_NOTE,
        correction_cells,
        correction_sentence,
        is_proportion_correction,
    )

    corrections = getattr(evaluation, "label_corrections", None) or {}
    shown = [(c, is_proportion_correction(c, evaluation.items)) for c in corrections.values()]
    rows = [correction_cells(c, proportion) for c, proportion in shown]
    lines = [correction_sentence(c, proportion) for c, proportion in shown]
    return rows, [METHOD_NOTE, *lines] if rows else []


def method_label(m: Any) -> str:
    """How a metric's p-value was computed, for a table cell: ``exact (enumeration)``,
    ``exact (lattice)``, ``Monte Carlo, N resamples`` or the missing mark (no pair)."""

    def get(key: str) -> Any:  # a MetricComparison or its to_dict()
        return m.get(key) if isinstance(m, Mapping) else getattr(m, key, None)

    method = get("method") or ("exact-enumeration" if get("exact") else "monte-carlo")
    if method == "exact-enumeration":
        return "exact (enumeration)"
    if method == "exact-lattice":
        return "exact (lattice)"
    if method == "monte-carlo":
        return f"Monte Carlo, {get('n_resamples')} resamples"
    return MISSING


def family_label(comparison: Any) -> str:
    """The metrics Holm's adjustment ran over, as ``Holm over a, b (2 metrics)``."""
    family = tuple(getattr(comparison, "family", None) or ())
    if not family:
        return "Holm over no metric (none tested)"
    names = _safe(", ".join(family))
    same = getattr(comparison, "same_as", None) or {}
    again = "".join(f"; {_safe(m)} = {_safe(first)}, tested once" for m, first in same.items())
    return f"Holm over {names} ({len(family)} metric{'s' if len(family) != 1 else ''}{again})"


def render_comparison(comparison: Any, alpha: float = 0.05) -> str:
    """The paired sign-flip test per metric as a table; ``*`` marks Holm p < alpha.

    A proportion's means are in percent, their difference and its interval in percentage
    points (``−10.6 pp [−14.6, −6.6]``, a real minus sign); a score's with 3 decimals
    (``−0.250 [−0.500, 0.000]``) (``kagreport._format``). A metric is a proportion by
    its name or its 0/1 items (``compared_proportion``).

    Each row names how its p-value was computed (exact by enumeration or on a lattice,
    or Monte Carlo); the header names Holm's family, the metrics under test (the others
    have no Holm p-value).
    """
    verdicts = _verdicts(comparison)
    rows = []
    for name, m in comparison.metrics.items():
        mark = "*" if m.p_value_holm is not None and m.p_value_holm < alpha else ""
        rows.append(
            [
                name,
                count(m.n_pairs),
                *_difference(m, compared_proportion(comparison, name), verdicts[name]),
                p_value(m.p_value),
                p_value(m.p_value_holm) + mark,
                _verdict_cell(verdicts[name]),
                method_label(m),
            ]
        )
    out = [
        f"{_safe(comparison.candidate)} vs {_safe(comparison.baseline)}: "
        f"{plural(comparison.n_items, 'paired item')} "
        f"(paired sign-flip test, two-sided; {family_label(comparison)})",
        "",
        *_table(
            [
                "METRIC",
                "PAIRS",
                "CANDIDATE",
                "BASELINE",
                "DIFF [95% CI]",
                "P",
                "P_HOLM",
                "VERDICT",
                "TEST",
            ],
            rows,
            left=1,
        ),
        "",
        f"* Holm-adjusted p < {alpha}; P_HOLM '{MISSING}': not among the metrics under test; "
        + _interval_note(verdicts, comparison),
        *(
            _safe(f"{name}: {v.sentence(proportion=compared_proportion(comparison, name))}")
            for name, v in verdicts.items()
            if v.adjusted  # the family's; the others' verdicts are in the table
        ),
    ]
    left_out = [
        (value if isinstance(value := comparison.metadata.get(key), int) else 0, who)
        for key, who in (
            ("items_only_in_candidate", comparison.candidate),
            ("items_only_in_baseline", comparison.baseline),
        )
    ]
    held = [comparison.metadata.get(k) for k in ("items_in_candidate", "items_in_baseline")]
    if any(n for n, _ in left_out):
        parts = [f"{count(n)} only in {_safe(str(who))}" for n, who in left_out if n]
        line = f"left out (not in both): {', '.join(parts)}"
        if all(isinstance(n, int) for n in held):
            line += (
                f" (of {count(held[0])} in {_safe(str(comparison.candidate))}, "
                f"{count(held[1])} in {_safe(str(comparison.baseline))})"
            )
        out.append(line)
    if comparison.judge_mismatch:
        judges = _safe(", ".join(sorted(comparison.judge_mismatch)))
        out.append(
            f"warning: judges with different identities in the two reports: {judges} "
            "(the difference is then partly the judges')"
        )
    return "\n".join(out) + "\n"


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    from html import escape

    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_evaluation_html(evaluation: Any) -> str:
    """Metrics, errors and agreement as escaped HTML (a notebook's bare display)."""
    from html import escape

    coverage = evaluation.coverage
    parts = [
        f"<p>{escape(type(evaluation).__name__)}: {plural(evaluation.n_items, 'item')}"
        + (
            f" ({escape(str(evaluation.metadata['name']))})"
            if "name" in evaluation.metadata
            else ""
        )
        + "</p>",
        _html_table(
            ["metric", "mean", "items"],
            [
                [n, _mean(evaluation, n, v), count(coverage.get(n, 0))]
                for n, v in evaluation.metrics.items()
            ],
        ),
    ]
    errors = {k: v for k, v in evaluation.errors.items() if v}
    if errors:
        parts.append(
            "<p>errors: " + escape(", ".join(f"{k} {v}" for k, v in errors.items())) + "</p>"
        )
    agreement = getattr(evaluation, "agreement", {})
    if agreement:
        intervals = getattr(evaluation, "agreement_intervals", {})
        rows = [
            [
                c,
                score_interval(a, *intervals.get(c, (math.nan, math.nan))),
                evaluation.agreement_note(c),
            ]
            for c, a in agreement.items()
        ]
        header = ["criterion", "Krippendorff's alpha [95% CI]", "note"]
        if not any(row[-1] for row in rows):
            header, rows = header[:-1], [row[:-1] for row in rows]
        parts.append(_html_table(header, rows))
    corrected, lines = _corrections(evaluation)
    if corrected:
        from kagreport.evaluation._correction import TITLES

        parts.append(_html_table(TITLES, corrected))
        parts += [f"<p>{escape(line)}</p>" for line in lines]
    return "".join(parts)


def render_comparison_html(comparison: Any, alpha: float = 0.05) -> str:
    """The paired test table as escaped HTML."""
    from html import escape

    verdicts = _verdicts(comparison)
    rows = [
        [
            name,
            count(m.n_pairs),
            *_difference(m, compared_proportion(comparison, name), verdicts[name]),
            p_value(m.p_value),
            p_value(m.p_value_holm)
            + (" *" if m.p_value_holm is not None and m.p_value_holm < alpha else ""),
            _verdict_cell(verdicts[name]),
            method_label(m),
        ]
        for name, m in comparison.metrics.items()
    ]
    header = ["metric", "pairs", "candidate", "baseline", "diff [Holm-adjusted 95%]"]
    return (
        f"<p>{escape(str(comparison.candidate))} vs {escape(str(comparison.baseline))}: "
        f"{plural(comparison.n_items, 'paired item')} (sign-flip test; "
        f"{escape(family_label(comparison))}; * Holm p &lt; {alpha})</p>"
        + _html_table([*header, "p", "p (Holm)", "verdict", "test"], rows)
        + f"<p>{escape(_interval_note(verdicts, comparison))}</p>"
    )

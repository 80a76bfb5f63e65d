"""What a gate writes: ``gate.md`` (a CI job summary or pull-request comment), ``gate.xml``
(JUnit XML), ``badge.svg``, the terminal's table and a notebook's HTML.

Every name shown (systems, metrics, slices, inputs) comes from result files and may hold
anything: Markdown gets it with its controls escaped (:func:`kagreport._format.printable`,
bidi controls too) and every ASCII punctuation character as an HTML character reference,
so no markup, link, mention, emoji code or table cell border can come from a name; XML and
SVG get it through :mod:`xml.etree.ElementTree` (or :func:`xml.sax.saxutils.escape`),
controls escaped first (XML 1.0 cannot hold them).
"""

from __future__ import annotations

import html as _html
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from kagreport._format import (
    MISSING,
    count,
    difference,
    difference_interval,
    metric,
    p_value,
    plural,
    printable,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kagreport.gates._hypothesis import GateHypothesis


class GateResult(Protocol):
    """What the outputs read of a :class:`kagreport.gates.GateResult`."""

    @property
    def verdict(self) -> str: ...
    @property
    def hypotheses(self) -> tuple[GateHypothesis, ...]: ...
    @property
    def candidate(self) -> str: ...
    @property
    def baseline(self) -> str: ...
    @property
    def settings(self) -> Mapping[str, Any]: ...
    @property
    def candidate_only_systems(self) -> tuple[str, ...]: ...
    @property
    def baseline_only_systems(self) -> tuple[str, ...]: ...
    @property
    def margin(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def inconclusive(self) -> str: ...


__all__ = ["FILES", "GateResult", "badge", "html", "junit", "markdown", "text"]

#: The files :func:`write_folder` writes.
FILES = ("gate.md", "gate.xml", "gate.json", "badge.svg")

_MARK = {"pass": "✅", "fail": "❌", "inconclusive": "⚠️"}
_COLOUR = {"pass": "#2e7d32", "fail": "#c62828", "inconclusive": "#757575"}
_NAME_LIMIT = 120


def _md(name: str) -> str:
    """``name`` as inert Markdown and HTML text."""
    shown = printable(name, _NAME_LIMIT, bidi=True)
    return "".join(
        f"&#{ord(c)};" if c.isascii() and not (c.isalnum() or c in " -.,/") else c for c in shown
    )


def _plain(name: str) -> str:
    return printable(name, _NAME_LIMIT, bidi=True)


def _shown(name: str, limit: int) -> str:
    """A name for the terminal: controls and bidi controls escaped (a CI log shows U+202E
    as it is: it would reorder the line), cut to ``limit``."""
    return printable(name, limit, bidi=True)


def _diff(h: GateHypothesis) -> str:
    return difference_interval(h.difference, h.low, h.high, proportion=h.proportion)


def _margin(result: GateResult) -> str:
    proportion = {h.proportion for h in result.hypotheses} == {True}
    return difference(result.margin, proportion=proportion).lstrip("+")


def _value(h: GateHypothesis, value: float) -> str:
    return metric(h.metric, value, [0, 1] if h.proportion else [0.5])


def _mde(h: GateHypothesis) -> str:
    return difference(h.mde, proportion=h.proportion).lstrip("+")


def _needed(h: GateHypothesis) -> str:
    return MISSING if h.n_needed is None else plural(h.n_needed, "item")


def _power(h: GateHypothesis) -> str:
    return MISSING if h.power != h.power else f"{100 * h.power:.0f}%"


def _hypotheses(n: int) -> str:
    return plural(n, "hypothesis", "hypotheses")


def _family(n: int) -> str:
    """The Holm family in words: the hypotheses that have a pair."""
    if n == 1:
        return "the gate's one hypothesis with a pair"
    return f"the gate's {_hypotheses(n)} with a pair"


def _headline(result: GateResult) -> str:
    fails = sum(h.verdict == "fail" for h in result.hypotheses)
    open_ = sum(h.verdict == "inconclusive" for h in result.hypotheses)
    n = len(result.hypotheses)
    if result.verdict == "pass":
        where = "the one hypothesis" if n == 1 else f"any of {_hypotheses(n)}"
        return f"no regression beyond the margin in {where}"
    of = "the one hypothesis" if n == 1 else f"{count(fails)} of {_hypotheses(n)}"
    if result.verdict == "fail":
        return f"{of} regressed by more than the margin"
    of = "the one hypothesis" if n == 1 else f"{count(open_)} of {_hypotheses(n)}"
    return f"{of} cannot be decided"


#: What each policy does with an inconclusive row (gate.md and the terminal).
_POLICY = {
    "exit": "an inconclusive gate exits 3 here (--inconclusive pass or fail counts it "
    "as a pass or a failure)",
    "pass": "inconclusive rows count as a pass here (--inconclusive pass)",
    "fail": "inconclusive rows count as a failure here (--inconclusive fail)",
}


def _left_out(result: GateResult, name: Callable[[str], str]) -> str:
    """One line naming the systems of one run only, or "" when there is none."""
    parts = []
    if result.candidate_only_systems:
        names = ", ".join(name(x) for x in result.candidate_only_systems)
        parts.append(f"only in the candidate (new, not gated): {names}")
    if result.baseline_only_systems:
        names = ", ".join(name(x) for x in result.baseline_only_systems)
        parts.append(f"only in the baseline (not in the candidate run: inconclusive): {names}")
    return f"Systems left out: {'; '.join(parts)}." if parts else ""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _verdict(h: GateHypothesis, name: Callable[[str], str]) -> str:
    return h.verdict + (f" ({name(h.reason)})" if h.reason else "")


def markdown(result: GateResult) -> str:
    """The Markdown summary (see :meth:`GateResult.markdown`)."""
    s = result.settings
    lines = [
        f"## {_MARK[result.verdict]} Regression gate: **{result.verdict}**",
        "",
        f"{_capital(_headline(result))}.",
        "",
        f"Candidate {_md(result.candidate)} against baseline {_md(result.baseline)}; "
        f"margin {_margin(result)}, alpha {s['alpha']:g} (family-wise, Holm), "
        f"slices by {s['slice']}; {_POLICY[result.inconclusive]}.",
        "",
    ]
    if left_out := _left_out(result, _md):
        lines += [left_out, ""]
    lines += [
        "| System | Metric | Slice | Baseline¹ | Candidate¹ | Difference [interval] "
        "| Adjusted p (H0: Δ = −margin)² | Verdict |",
        "|---|---|---|---:|---:|---|---:|---|",
    ]
    for h in result.hypotheses:
        lines.append(
            f"| {_md(h.system)} | {_md(h.metric)} | {_md(h.slice)} "
            f"| {_value(h, h.baseline_mean)} | {_value(h, h.candidate_mean)} | {_diff(h)} "
            f"| {p_value(h.p_value_holm)} | {_MARK[h.verdict]} {_verdict(h, _md)} |"
        )
    lines += [
        "",
        "¹ Means over the paired items (those both runs scored): they can differ from the "
        "leaderboard's when items are left out.  ",
        "² The adjusted p tests Δ = −margin (a regression of exactly the margin), not "
        '"no change": a small p means pass when Δ lies above −margin and fail when below.',
    ]
    left = [h for h in result.hypotheses if h.candidate_only or h.baseline_only]
    lines.append("")
    if left:
        lines += ["**Items left out** (scored in one run only):", ""]
        lines += ["| System | Metric | Slice | Candidate only | Baseline only |"]
        lines += ["|---|---|---|---:|---:|"]
        lines += [
            f"| {_md(h.system)} | {_md(h.metric)} | {_md(h.slice)} | "
            f"{count(h.candidate_only)} | {count(h.baseline_only)} |"
            for h in left
        ]
        lines.append("")
    else:
        lines += ["No item was left out: both runs scored the same items.", ""]
    open_ = [h for h in result.hypotheses if h.verdict == "inconclusive" and h.n_pairs]
    if open_:
        lines += [
            "**Inconclusive**: the interval holds the margin. The smallest change this "
            "benchmark could detect at its size (MDE, 80% power) and the items needed to "
            "show non-inferiority when nothing changed:",
            "",
            "| System | Metric | Slice | Items | MDE | Items needed | Power at 2× margin |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {_md(h.system)} | {_md(h.metric)} | {_md(h.slice)} | {count(h.n_pairs)} "
            f"| {_mde(h)} | {MISSING if h.n_needed is None else count(h.n_needed)} "
            f"| {_power(h)} |"
            for h in open_
        ]
        lines.append("")
    methods = ", ".join(sorted({h.method for h in result.hypotheses if h.n_pairs}) or ["none"])
    tested = sum(h.n_pairs > 0 for h in result.hypotheses)
    lines += [
        "---",
        f"Each row tests H0: candidate − baseline = −margin by the paired sign-flip test "
        f"of the differences plus the margin ({methods}); p-values are Holm-adjusted over "
        f"{_family(tested)} (systems × metrics × slices), and "
        f"each interval is at Holm's level for its row, so it lies "
        f"above −margin exactly when the row passes and below when it fails. The gate "
        f"refuses runs with less than {s['min_paired'] * 100:g}% of their items paired. "
        f"Written by kagreport gate.",
        "",
    ]
    return "\n".join(lines)


def _case_name(h: GateHypothesis) -> tuple[str, str]:
    return _plain(h.system), f"{_plain(h.metric)} [{_plain(h.slice)}]"


def _numbers(result: GateResult, h: GateHypothesis) -> str:
    return (
        f"candidate {_value(h, h.candidate_mean)}, baseline {_value(h, h.baseline_mean)}, "
        f"difference {_diff(h)}, margin {_margin(result)}, adjusted p "
        f"{p_value(h.p_value_holm)} ({count(h.n_pairs)} items, {h.method})"
    )


def _undecided(h: GateHypothesis, numbers: str) -> str:
    """Why a row is inconclusive: the reason of a row without a pair, else its numbers,
    the smallest change it could detect and the items it would need."""
    if h.reason:
        left = f"{count(h.candidate_only)} candidate-only, {count(h.baseline_only)} "
        return f"{_plain(h.reason)} ({left}baseline-only items)"
    return f"{numbers}; smallest detectable change {_mde(h)}, {_needed(h)} needed"


def junit(result: GateResult) -> str:
    """JUnit XML (see :meth:`GateResult.junit`)."""
    # With --inconclusive fail an inconclusive row is a failure (the build fails on it).
    failures = sum(h.verdict == "fail" for h in result.hypotheses)
    skipped = sum(h.verdict == "inconclusive" for h in result.hypotheses)
    if result.inconclusive == "fail":
        failures, skipped = failures + skipped, 0
    tests = str(len(result.hypotheses))
    attributes = {"tests": tests, "failures": str(failures), "errors": "0", "time": "0"}
    suites = ET.Element("testsuites", {"name": "kagreport gate", **attributes})
    suite = ET.SubElement(
        suites, "testsuite", {"name": "kagreport gate", **attributes, "skipped": str(skipped)}
    )
    for h in result.hypotheses:
        classname, name = _case_name(h)
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": name})
        case.set("time", "0")
        numbers = _numbers(result, h)
        if h.verdict == "fail":
            failure = ET.SubElement(case, "failure", {"type": "regression"})
            failure.set("message", f"regression beyond the margin: {numbers}")
            failure.text = numbers
        elif h.verdict == "inconclusive":
            reason = _undecided(h, numbers)
            if result.inconclusive == "fail":
                failure = ET.SubElement(case, "failure", {"type": "inconclusive"})
                failure.set("message", f"inconclusive, counted as a failure: {reason}")
                failure.text = f"{reason} (--inconclusive fail)"
            else:
                ET.SubElement(case, "skipped", {"message": f"inconclusive: {reason}"})
        else:
            ET.SubElement(case, "system-out").text = numbers
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def badge(result: GateResult) -> str:
    """A static SVG badge (see :meth:`GateResult.badge`): no network, no font file."""
    label, value = "kagreport gate", result.verdict
    # Widths from a 7-pixel average advance of an 11 px sans-serif, plus padding.
    left, right = 10 + 7 * len(label), 10 + 7 * len(value)
    width = left + right
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": str(width),
            "height": "20",
            "role": "img",
            "aria-label": f"{label}: {value}",
        },
    )
    ET.SubElement(svg, "title").text = f"{label}: {value}"
    ET.SubElement(svg, "rect", {"width": str(left), "height": "20", "fill": "#555"})
    ET.SubElement(
        svg,
        "rect",
        {"x": str(left), "width": str(right), "height": "20", "fill": _COLOUR[value]},
    )
    font = {
        "fill": "#fff",
        "font-family": "DejaVu Sans,Verdana,Geneva,sans-serif",
        "font-size": "11",
        "text-anchor": "middle",
    }
    ET.SubElement(svg, "text", {"x": str(left / 2), "y": "14", **font}).text = label
    ET.SubElement(svg, "text", {"x": str(left + right / 2), "y": "14", **font}).text = value
    return ET.tostring(svg, encoding="unicode") + "\n"


def text(result: GateResult) -> str:
    """The terminal's table (names printable; widths from the cells)."""
    rows = [("system", "metric", "slice", "difference [interval]", "adj. p", "verdict", "items")]
    for h in result.hypotheses:
        rows.append(
            (
                _shown(h.system, 40),
                _shown(h.metric, 30),
                _shown(h.slice, 30),
                _diff(h),
                p_value(h.p_value_holm),
                _verdict(h, lambda x: x),
                count(h.n_pairs),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    table = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    head = f"{result.verdict.upper()}: {_headline(result)} (margin {_margin(result)}, "
    head += f"alpha {result.alpha:g})"
    if result.inconclusive != "exit":  # the default goes without saying on a terminal
        head += f"\n{_capital(_POLICY[result.inconclusive])}."
    if left_out := _left_out(result, lambda x: _shown(x, 40)):
        head += "\n" + left_out
    tail = []
    open_ = [h for h in result.hypotheses if h.verdict == "inconclusive" and h.mde == h.mde]
    for h in open_[:5]:
        tail.append(
            f"  {_shown(h.system, 40)} {_shown(h.metric, 30)} [{_shown(h.slice, 30)}]: "
            f"detects {_mde(h)} at {plural(h.n_pairs, 'item')}; needs {_needed(h)}"
        )
    return "\n".join([head, "", *table, *(["", *tail] if tail else [])]) + "\n"


def html(result: GateResult) -> str:
    """A notebook's HTML table, every name escaped."""
    e = html_escape
    head = "".join(
        f"<th>{c}</th>"
        for c in ("System", "Metric", "Slice", "Baseline", "Candidate", "Difference [interval]",
                  "Adjusted p", "Verdict", "Items", "MDE", "Items needed")
    )  # fmt: skip
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{e(x)}</td>"
            for x in (
                _plain(h.system),
                _plain(h.metric),
                _plain(h.slice),
                _value(h, h.baseline_mean),
                _value(h, h.candidate_mean),
                _diff(h),
                p_value(h.p_value_holm),
                h.verdict,
                count(h.n_pairs),
                _mde(h) if h.verdict == "inconclusive" else "",
                _needed(h) if h.verdict == "inconclusive" else "",
            )
        )
        + "</tr>"
        for h in result.hypotheses
    )
    caption = (
        f"Regression gate: <b>{e(result.verdict)}</b>. {e(_headline(result))}; margin "
        f"{e(_margin(result))}, alpha {result.alpha:g} (Holm). Candidate "
        f"{e(_plain(result.candidate))}, baseline {e(_plain(result.baseline))}."
    )
    return (
        f"<div><p>{caption}</p><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def html_escape(value: str) -> str:
    return _html.escape(value, quote=True)

"""The ``kag stats`` text table (``render_text`` in kag ``src/subcommand/stats/mod.rs``).

The renderers read a report through :class:`Rendered` (what a
:class:`~kagreport.grading.StatsReport` has), so this module needs nothing of the report's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from kagreport.grading._metrics import Metrics

__all__ = ["FOOTER", "Rendered", "render_html", "render_text"]


class _Setup(Protocol):
    @property
    def setup(self) -> str: ...
    @property
    def overall(self) -> Metrics: ...
    @property
    def per_dataset(self) -> Mapping[str, Metrics]: ...


class Rendered(Protocol):
    """What the renderers read of a report (a :class:`~kagreport.grading.StatsReport`)."""

    @property
    def datasets(self) -> int: ...
    @property
    def scorable_questions(self) -> int: ...
    @property
    def skipped_files(self) -> int: ...
    @property
    def setups(self) -> Sequence[_Setup]: ...
    @property
    def unparsable_files(self) -> Sequence[str]: ...


FOOTER = (
    "ACC% = correct / scored, PREC% = correct / committed, COVER% = committed / scored\n"
    "GEN(s)/RET(s) = mean generation/retrieval time per question, in seconds\n"
    "CTX_LEN = average context length\n"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else format(value * 100.0, ".2f")


def _fixed(value: float | None, digits: int) -> str:
    return "-" if value is None else format(value, f".{digits}f")


def _row(name_cell: str, m: Metrics) -> str:
    cells = (
        f"{name_cell}  {_pct(m.accuracy):>7}  {_pct(m.precision):>7}  {_pct(m.coverage):>8}"
        f"  {m.correct:>5}  {m.incorrect:>5}  {m.errors:>4}  {m.total:>3}"
        f"  {_fixed(m.avg_generation_secs, 3):>8}  {_fixed(m.avg_context_length, 3):>10}"
    )
    r = m.retrieval
    if r is not None:
        cells += (
            f"  {_fixed(r.avg_time_secs, 3):>8}  {_fixed(r.avg_vertices, 2):>7}"
            f"  {_fixed(r.avg_relationships, 2):>8}  {_fixed(r.avg_properties, 2):>8}"
        )
    return cells + "\n"


def render_text(report: Rendered) -> str:
    """Render a report as ``kag stats`` prints it.

    The layout is the spec's (``KAG_STATS_SPEC.md`` section 2.3): a header
    line, a blank line, then either ``No scorable results were found.`` or
    the table and its footer. Rust fixed-precision formatting rounds the
    exact binary value half to even, as Python's ``format`` does.
    """
    out = [
        f"Datasets: {report.datasets} | Scorable questions: {report.scorable_questions}"
        f" | Skipped files: {report.skipped_files}\n\n"
    ]
    if not report.setups:
        out.append("No scorable results were found.\n")
        return "".join(out)
    width = max(5, *(len(s.setup) for s in report.setups))
    header = (
        f"{'SETUP':<{width}}  {'ACC%':>7}  {'PREC%':>7}  {'COVER%':>8}  {'OK':>5}  {'WRONG':>5}"
        f"  {'ERR':>4}  {'TOT':>3}  {'GEN(s)':>8}  {'CTX_LEN':>10}"
    )
    if any(s.overall.retrieval is not None for s in report.setups):
        header += f"  {'RET(s)':>8}  {'VERTICE':>7}  {'RELATION':>8}  {'PROPERTY':>8}"
    out.append(header + "\n")
    sub_width = max(0, width - 4)
    for setup in report.setups:
        out.append(_row(f"{setup.setup:<{width}}", setup.overall))
        for dataset, metrics in setup.per_dataset.items():
            out.append(_row(f"  └ {dataset:<{sub_width}}", metrics))
    out.append("\n" + FOOTER)
    return "".join(out)


def render_html(report: Rendered) -> str:
    """The kag table as an HTML ``<table>`` (for notebooks); every name is escaped."""
    from html import escape

    head = (
        f"<p>Datasets: {report.datasets} | Scorable questions: {report.scorable_questions}"
        f" | Skipped files: {report.skipped_files}"
        + (
            f" | Unparsable files: {len(report.unparsable_files)}"
            if report.unparsable_files
            else ""
        )
        + "</p>"
    )
    if not report.setups:
        return head + "<p>No scorable results were found.</p>"
    columns = ["SETUP", "ACC%", "PREC%", "COVER%", "OK", "WRONG", "ERR", "TOT", "GEN(s)",
               "CTX_LEN", "RET(s)", "VERTICE", "RELATION", "PROPERTY"]  # fmt: skip
    retrieval = any(s.overall.retrieval is not None for s in report.setups)
    if not retrieval:  # as the text table: no retrieval columns without retrieval
        columns = columns[:10]

    def cells(name: str, m: Metrics, style: str) -> str:
        r = m.retrieval
        values = [
            _pct(m.accuracy), _pct(m.precision), _pct(m.coverage), str(m.correct),
            str(m.incorrect), str(m.errors), str(m.total), _fixed(m.avg_generation_secs, 3),
            _fixed(m.avg_context_length, 3),
            _fixed(None if r is None else r.avg_time_secs, 3),
            _fixed(None if r is None else r.avg_vertices, 2),
            _fixed(None if r is None else r.avg_relationships, 2),
            _fixed(None if r is None else r.avg_properties, 2),
        ]  # fmt: skip
        values = values if retrieval else values[:9]
        tds = "".join(f'<td style="text-align:right">{v}</td>' for v in values)
        return f'<tr><td style="text-align:left{style}">{escape(name)}</td>{tds}</tr>'

    rows = []
    for setup in report.setups:
        rows.append(cells(setup.setup, setup.overall, ";font-weight:bold"))
        rows += [
            cells("└ " + dataset, metrics, ";padding-left:1.5em")
            for dataset, metrics in setup.per_dataset.items()
        ]
    header = "".join(f"<th>{escape(c)}</th>" for c in columns)
    return (
        f'{head}<table class="kagreport-stats"><thead><tr>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )

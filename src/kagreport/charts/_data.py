"""Turning frames into the inline data of a chart, and accepting a run (or what
:func:`kagreport.sources.as_run` takes) or its frame.

Every name a chart draws (a setup, dataset, metric, judge or criterion, in its data, axes,
legends, tooltips, key and title) is its label of :func:`drawn_names`:
:func:`kagreport._format.isolated` to :data:`~kagreport._format.NAME_LIMIT` characters, so a
control character never reaches the exporter (vl-convert aborts the process on one), a long
name costs no more than a short one to draw, and a right-to-left name never reorders the text
beside it. Ordinary names are drawn as they are.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Iterable
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from kagreport._errors import InputError
from kagreport._format import (
    MISSING,
    NAME_LIMIT,
    is_missing,
    name_labels,
    printable,
    quantity,
)
from kagreport.frames import stats_frame
from kagreport.runs import Run
from kagreport.sources import as_run

__all__ = [
    "SIMULATED",
    "drawn_frame",
    "drawn_names",
    "inline_data",
    "is_simulated_source",
    "label_title",
    "quantity_interval",
    "require_columns",
    "rows_height",
    "run_or_frame",
    "sorted_setups",
    "stats_rows",
    "title_params",
]

#: The word a chart title of SIMULATED data starts with.
SIMULATED = "SIMULATED"


def label_title(title: str) -> str:
    """``title`` starting with ``SIMULATED: `` (unchanged when it already says so), said
    once: a run name's `` (SIMULATED)`` inside the title goes (``"SIMULATED: Accuracy of
    nu-sim"``, not ``"SIMULATED: Accuracy of nu-sim (SIMULATED)"``)."""
    if title.upper().startswith(SIMULATED):
        return title
    return f"{SIMULATED}: {title.replace(f' ({SIMULATED})', '')}"


def is_simulated_source(source: Any) -> bool:
    """Whether a chart's source holds SIMULATED data: the run of a tree ``kagreport
    simulate`` wrote (``run.metadata["simulated"]``; anything :func:`as_run` takes), or a
    frame of it (``frame.attrs["simulated"]``)."""
    if isinstance(source, pd.DataFrame):
        return bool(source.attrs.get("simulated"))
    try:
        return bool(as_run(source).metadata.get("simulated"))
    except InputError:
        return False


def _plain(value: Any) -> Any:
    """A JSON-ready scalar: NaN, infinities and pandas' missing values become None."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    return str(value)


def inline_data(frame: pd.DataFrame) -> alt.InlineData:
    """The rows of ``frame`` as Vega-Lite inline values.

    The values are embedded in the spec whatever Altair data transformer is enabled, so the
    chart renders offline and from ``file://`` (PITFALLS.md B13), and Altair's row limit does not
    apply (the charts aggregate before this point, B15). Undefined numbers become ``null``, never
    a bare ``NaN`` token (B11), and every value is a plain Python scalar, exactly as in ``frame``.
    """
    columns = [str(c) for c in frame.columns]
    values = [
        dict(zip(columns, (_plain(v) for v in row), strict=True))
        for row in frame.itertuples(index=False, name=None)
    ]
    return alt.InlineData(values=values)


def quantity_interval(value: Any, low: Any, high: Any) -> str:
    """A measured amount and its interval, each by :func:`kagreport._format.quantity`
    (``0.512 [0.480, 0.551]``); the amount alone when a bound
    is undefined; :data:`~kagreport._format.MISSING` when the amount is."""
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return quantity(value)
    return f"{quantity(value)} [{quantity(low)}, {quantity(high)}]"


def require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise ValueError naming the columns of ``columns`` that ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {', '.join(map(repr, missing))}")


def drawn_names(names: Iterable[Any]) -> dict[str, str]:
    """Each distinct name -> the text a chart draws for it:
    :func:`kagreport._format.isolated` to :data:`~kagreport._format.NAME_LIMIT` characters,
    distinct names kept distinct (:func:`kagreport._format.name_labels`); an ordinary name
    (printable, left-to-right, not too long) maps to itself."""
    return name_labels((str(name) for name in names), NAME_LIMIT, isolate=True)


def drawn_frame(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``frame`` with the names in ``columns`` (those it has) as :func:`drawn_names` draws
    them, one mapping across all of them; ``frame`` itself when none changes."""
    present = [c for c in columns if c in frame.columns]
    values = [v for c in present for v in frame[c].tolist() if isinstance(v, str)]
    labels = drawn_names(values)
    if all(label == name for name, label in labels.items()):
        return frame
    frame = frame.copy()
    for column in present:
        frame[column] = [labels[v] if isinstance(v, str) else v for v in frame[column].tolist()]
    return frame


def _drawn_run(run: Run) -> Run:
    """``run`` with its systems and datasets named as :func:`drawn_names` draws them (itself
    when no name changes): every table and label derived from it then agrees."""
    systems, datasets = drawn_names(run.systems), drawn_names(run.dataset_names)
    if all(k == v for k, v in (*systems.items(), *datasets.items())):
        return run
    return dataclasses.replace(
        run,
        systems=tuple(systems[s] for s in run.systems),
        dataset_names=tuple(datasets[d] for d in run.dataset_names),
    )


def run_or_frame(source: Any) -> Run | pd.DataFrame:
    """A frame, or anything else as a run (:func:`kagreport.sources.as_run`), with the
    names of its setups and datasets as a chart draws them (:func:`drawn_names`).

    Raises
    ------
    TypeError
        For what is neither a frame nor anything ``as_run`` takes.
    """
    if isinstance(source, pd.DataFrame):
        return drawn_frame(source, "setup", "dataset")
    try:
        return _drawn_run(as_run(source))
    except InputError:
        raise TypeError(
            "expected a kagreport.runs.Run (or a StatsReport, evaluations, a path) or a "
            f"DataFrame from kagreport.frames, not {type(source).__name__}"
        ) from None


def stats_rows(report_or_frame: Any, confidence: float) -> pd.DataFrame:
    """``stats_frame(run)`` with the per-dataset rows (of anything :func:`as_run` takes),
    or a copy of a frame given as is.

    Raises
    ------
    TypeError
        For anything else.
    """
    source = run_or_frame(report_or_frame)
    if isinstance(source, pd.DataFrame):
        require_columns(source, ("setup", "dataset"), "the stats frame")
        return source.copy()
    return stats_frame(source, per_dataset=True, confidence=confidence)


def rows_height(step: float, rows: int) -> float:
    """The plot height of ``rows`` bands of ``step`` pixels, as a number.

    Vega-Lite sizes a band scale of ``n`` bands to ``step * n`` pixels with its default
    padding, as ``height=alt.Step(step)`` would; a discrete height with the theme's
    ``fit-x`` autosize makes Vega-Lite warn on every page that draws the chart ("Dropping
    fit-y because spec has discrete height").
    """
    return float(step * max(rows, 1))


def sorted_setups(frame: pd.DataFrame) -> list[str]:
    """Setups in kag's ranking order when the frame has ``rank``, else in order of appearance."""
    if "rank" in frame.columns:
        ordered = frame.sort_values("rank", kind="stable")["setup"]
    else:
        ordered = frame["setup"]
    return list(dict.fromkeys(str(s) for s in ordered))


#: Characters per line of a title (10 pt) and of a subtitle (8 pt) in a 238 px figure: Vega
#: does not wrap titles, and the figure's fixed width would clip a longer line.
TITLE_CHARACTERS = 40
SUBTITLE_CHARACTERS = 52


def _wrap(text: str, width: int) -> list[str]:
    # Long words (a setup name without spaces) are cut too: better than clipped at the edge.
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def title_params(
    title: str, subtitle: list[str], *, wide: bool = False, simulated: bool = False
) -> alt.TitleParams | str:
    """A title with subtitle lines, wrapped to fit a paper column (one Vega line per element).

    With ``wide``, lines are twice as long: the figure spans both columns of the paper.
    With ``simulated``, the title starts with ``SIMULATED:`` (``label_title``), so the
    figure is never taken for a measurement wherever it ends up.

    Lines are cut at spaces after :data:`TITLE_CHARACTERS` (title) or
    :data:`SUBTITLE_CHARACTERS` (subtitle) characters, so no line runs past a 238 px (3.3 in)
    figure. Every line is :func:`kagreport._format.printable`, and the title is cut to three
    lines' worth (with ``…``).
    """
    factor = 2 if wide else 1
    # Printable (a name in a caller's title may hold anything), and at most three lines.
    title = printable(title, 3 * factor * TITLE_CHARACTERS)
    heading = _wrap(label_title(title) if simulated else title, factor * TITLE_CHARACTERS)
    lines = [
        part
        for line in subtitle
        if line
        for part in _wrap(printable(line), factor * SUBTITLE_CHARACTERS)
    ]
    text: str | list[str] = heading[0] if len(heading) == 1 else heading
    if not lines:
        return text if isinstance(text, str) else alt.TitleParams(text=text)
    return alt.TitleParams(text=text, subtitle=lines)

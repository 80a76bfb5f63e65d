"""``kag stats`` and ``kag stats find``: outcomes, metrics, reports and their rendering.

>>> from kagreport.grading import grade
>>> report = grade("datasets.json", "results")  # doctest: +SKIP
>>> print(report.to_text())  # doctest: +SKIP

A tree on object storage, graded on a Dask cluster, again reading only what changed
(where and how it is graded: :class:`EngineOptions`, in :mod:`kagreport.grading.engine`):

>>> options = EngineOptions(engine="dask", store="grades/")  # doctest: +SKIP
>>> grade("s3://bucket/datasets.json", "s3://bucket/run", options=options)  # doctest: +SKIP
"""

from __future__ import annotations

from kagreport.grading._find import FindMatch, FindReport, compile_pattern, find
from kagreport.grading._grade import grade
from kagreport.grading._items import ItemRow, ItemTable, ItemTexts, Outcome
from kagreport.grading._metrics import (
    Metrics,
    RetrievalMetrics,
    duration_div_secs,
    duration_secs,
)
from kagreport.grading._render import render_text
from kagreport.grading._report import SetupReport, StatsReport
from kagreport.grading._rule import WHITE_SPACE, grade_response
from kagreport.grading.engine import ENGINES, EngineOptions, GradeStore, StoreError
from kagreport.grading.engine._watch import watch
from kagreport.kag._jsonfmt import dumps_pretty, format_float

__all__ = [
    "ENGINES",
    "WHITE_SPACE",
    "EngineOptions",
    "FindMatch",
    "FindReport",
    "GradeStore",
    "ItemRow",
    "ItemTable",
    "ItemTexts",
    "Metrics",
    "Outcome",
    "RetrievalMetrics",
    "SetupReport",
    "StatsReport",
    "StoreError",
    "compile_pattern",
    "dumps_pretty",
    "duration_div_secs",
    "duration_secs",
    "find",
    "format_float",
    "grade",
    "grade_response",
    "render_text",
    "watch",
]

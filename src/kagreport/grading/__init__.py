"""``kag stats`` and ``kag stats find``: outcomes, metrics, reports and their rendering.

>>> from kagreport.grading import grade
>>> report = grade("datasets.json", "results")  # doctest: +SKIP
>>> print(report.to_text())  # doctest: +SKIP

A tree on object storage, graded on a Dask cluster, again reading only what changed
(where and how it is graded: ``EngineOptions``, in :mod:`kagreport.grading.engine`):

>>> options = EngineOptions(engine="dask", store="grades/")  # doctest: +SKIP
>>> grade("s3://bucket/datasets.json", "s3://bucket/run", options=options)  # doctest: +SKIP
"""

from __future__ import annotations

import typing

from kagreport._lazy import lazy_attributes as _lazy_attributes
from kagreport.grading._grade import grade
from kagreport.grading._items import Outcome
from kagreport.grading._metrics import Metrics
from kagreport.grading._report import StatsReport

if typing.TYPE_CHECKING:
    from kagreport.grading._find import FindReport, find
    from kagreport.grading.engine._watch import watch

__all__ = [
    "FindReport",
    "Metrics",
    "Outcome",
    "StatsReport",
    "find",
    "grade",
    "watch",
]

# Loaded on first access: `kagreport stats` needs neither `find` nor `watch`.
# Name -> the module that defines it.
_LAZY = {
    "FindReport": "._find",
    "find": "._find",
    "watch": ".engine._watch",
}
__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals())

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

# Loaded on first access (PEP 562): `kagreport stats` needs neither `find` nor `watch`.
# Name -> the module that defines it.
_LAZY = {
    "FindReport": "kagreport.grading._find",
    "find": "kagreport.grading._find",
    "watch": "kagreport.grading.engine._watch",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'kagreport.grading' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

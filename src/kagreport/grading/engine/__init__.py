"""Where ``kag stats`` runs: the local pool of worker processes (forked, or from a fork
server), a Dask cluster, the grade store that spares a rerun what it has graded, and
following a running benchmark (:func:`kagreport.grading.watch`); all configured by one
``EngineOptions``.

>>> from kagreport.grading.engine import EngineOptions
>>> options = EngineOptions(engine="dask", store="grades/")  # doctest: +SKIP
>>> grade("datasets.json", "results", options=options)  # doctest: +SKIP

This package's ``__init__`` imports none of the modules that import grading's own
(``_watch``, ``_pool``, ``_dask``): grading imports the engine's modules, and the
package is initialised on the first of them.
"""

from __future__ import annotations

from kagreport.grading.engine._options import EngineOptions
from kagreport.grading.engine._store import GradeStore, StoreError

__all__ = ["EngineOptions", "GradeStore", "StoreError"]

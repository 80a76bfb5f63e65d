"""kagreport: reporting for knowledge-augmented generation (KAG) and other LLM benchmark runs.

Layers (each imports only the ones before it): :mod:`kagreport.kag` reads
what ``kag benchmark`` writes; :mod:`kagreport.grading` reproduces
``kag stats``. Importing them loads neither pandas, Altair nor ipywidgets.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from kagreport._errors import (
    DatasetsError,
    KagreportError,
    ResultFileError,
    ResultTreeError,
    UsageError,
)
from kagreport.grading import FindReport, Metrics, Outcome, StatsReport, find, grade
from kagreport.kag import load_datasets

try:
    __version__ = version("kagreport")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "DatasetsError",
    "FindReport",
    "KagreportError",
    "Metrics",
    "Outcome",
    "ResultFileError",
    "ResultTreeError",
    "StatsReport",
    "UsageError",
    "__version__",
    "find",
    "grade",
    "load_datasets",
]

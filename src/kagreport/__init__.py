"""kagreport: reporting for knowledge-augmented generation (KAG) and other LLM benchmark runs.

Layers (each imports only the ones before it): :mod:`kagreport.kag` reads
what ``kag benchmark`` writes; :mod:`kagreport.grading` reproduces
``kag stats``. Importing them loads neither pandas, Altair nor ipywidgets.
"""

from __future__ import annotations

import logging

from kagreport._errors import (
    DatasetsError,
    KagreportError,
    ResultFileError,
    ResultTreeError,
    UsageError,
    WorkerDiedError,
)
from kagreport.grading import FindReport, Metrics, Outcome, StatsReport, find, grade
from kagreport.kag import load_datasets

# A library logs; the application decides where logs go (the CLI sets a handler).
logging.getLogger("kagreport").addHandler(logging.NullHandler())

#: The package version (also read by the build backend).
__version__ = "0.1.0"

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
    "WorkerDiedError",
    "__version__",
    "find",
    "grade",
    "load_datasets",
]

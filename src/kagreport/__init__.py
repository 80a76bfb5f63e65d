"""kagreport: reporting for knowledge-augmented generation (KAG) and other LLM benchmark runs.

Layers (each imports only the ones before it): :mod:`kagreport.kag` reads
what ``kag benchmark`` writes; :mod:`kagreport.grading` reproduces
``kag stats``. Importing them loads neither pandas, Altair nor ipywidgets; importing
the package root loads neither msgspec nor NumPy (its names, and its subpackages such as
``kagreport.examples``, are loaded on first use).

:func:`gate` (a regression gate of a candidate run against a baseline run, for CI) and its
:class:`GateResult` come from :mod:`kagreport.gates`, which sits after
:mod:`kagreport.sources` and before the views (frames, charts, widgets, site).

The answer-evaluation surface of ANSWER_EVALUATION_SPEC.md (:func:`evaluate_answers`,
:class:`AnswerEvaluation` ...) is importable from here too; it is loaded from
:mod:`kagreport.evaluation` on first use, so ``import kagreport`` stays light.
"""

from __future__ import annotations

import logging
import typing

from kagreport._errors import (
    DatasetsError,
    DocumentError,
    FormatError,
    InputError,
    KagreportError,
    MissingExtraError,
    ResultFileError,
    ResultTreeError,
    UsageError,
    WorkerDiedError,
)
from kagreport._lazy import lazy_attributes as _lazy_attributes
from kagreport._version import __version__

if typing.TYPE_CHECKING:
    from kagreport.evaluation import (
        AnswerEvaluation,
        AnswerItem,
        EvaluationComparison,
        RetrievalEvaluation,
        evaluate_answers,
        evaluate_retrieval,
        evaluation_from_stats,
    )
    from kagreport.gates import GateResult, gate
    from kagreport.grading import FindReport, Metrics, Outcome, StatsReport, find, grade
    from kagreport.grading.engine import EngineOptions
    from kagreport.kag import load_datasets
    from kagreport.sources import as_run, read_run

# A library logs; the application decides where logs go (the CLI sets a handler).
logging.getLogger("kagreport").addHandler(logging.NullHandler())

# Loaded on first access (PEP 562), so that `import kagreport` (and the console entry,
# kagreport._entry) loads neither msgspec nor NumPy: name -> the module that defines it.
_LAZY = {
    **dict.fromkeys(
        ("FindReport", "Metrics", "Outcome", "StatsReport", "find", "grade"),
        "kagreport.grading",
    ),
    "EngineOptions": "kagreport.grading.engine",
    "load_datasets": "kagreport.kag",
    "read_run": "kagreport.sources",
    "gate": "kagreport.gates",
    "GateResult": "kagreport.gates",
    "as_run": "kagreport.sources",
    **dict.fromkeys(
        (
            "AnswerEvaluation",
            "AnswerItem",
            "EvaluationComparison",
            "RetrievalEvaluation",
            "evaluate_answers",
            "evaluate_retrieval",
            "evaluation_from_stats",
        ),
        "kagreport.evaluation",
    ),
}

__all__ = [
    "AnswerEvaluation",
    "AnswerItem",
    "DatasetsError",
    "DocumentError",
    "EngineOptions",
    "EvaluationComparison",
    "FindReport",
    "FormatError",
    "GateResult",
    "InputError",
    "KagreportError",
    "Metrics",
    "MissingExtraError",
    "Outcome",
    "ResultFileError",
    "ResultTreeError",
    "RetrievalEvaluation",
    "StatsReport",
    "UsageError",
    "WorkerDiedError",
    "__version__",
    "as_run",
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
    "find",
    "gate",
    "grade",
    "load_datasets",
    "read_run",
]


_lazy_getattr, __dir__ = _lazy_attributes(__name__, _LAZY, globals())


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return _lazy_getattr(name)
    if name.isidentifier() and not name.startswith("_"):
        # A subpackage (`kagreport.examples`) on first access, as if imported: `import
        # kagreport` alone loads none of them.
        import importlib
        import importlib.util

        if importlib.util.find_spec(f"kagreport.{name}") is not None:
            return importlib.import_module(f"kagreport.{name}")
    raise AttributeError(f"module 'kagreport' has no attribute {name!r}")

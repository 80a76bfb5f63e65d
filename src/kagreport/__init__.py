"""kagreport: reporting for knowledge-augmented generation (KAG) and other LLM benchmark runs.

Layers (each imports only the ones before it): :mod:`kagreport.kag` reads
what ``kag benchmark`` writes; :mod:`kagreport.grading` reproduces
``kag stats``. Importing them loads neither pandas, Altair nor ipywidgets.

The answer-evaluation surface of ANSWER_EVALUATION_SPEC.md (:func:`evaluate_answers`,
:class:`AnswerEvaluation` ...) is importable from here too; it is loaded from
:mod:`kagreport.evaluation` on first use, so ``import kagreport`` stays light.
"""

from __future__ import annotations

import logging
import typing

from kagreport._errors import (
    DatasetsError,
    KagreportError,
    MissingExtraError,
    ResultFileError,
    ResultTreeError,
    UsageError,
    WorkerDiedError,
)
from kagreport.grading import FindReport, Metrics, Outcome, StatsReport, find, grade
from kagreport.kag import load_datasets

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

# A library logs; the application decides where logs go (the CLI sets a handler).
logging.getLogger("kagreport").addHandler(logging.NullHandler())

#: The package version (also read by the build backend).
__version__ = "0.1.0"

# Loaded on first access (PEP 562): kagreport.evaluation brings NumPy.
_LAZY = frozenset(
    {
        "AnswerEvaluation",
        "AnswerItem",
        "EvaluationComparison",
        "RetrievalEvaluation",
        "evaluate_answers",
        "evaluate_retrieval",
        "evaluation_from_stats",
    }
)

__all__ = [
    "AnswerEvaluation",
    "AnswerItem",
    "DatasetsError",
    "EvaluationComparison",
    "FindReport",
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
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
    "find",
    "grade",
    "load_datasets",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import kagreport.evaluation

        value = getattr(kagreport.evaluation, name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'kagreport' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)

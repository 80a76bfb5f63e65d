"""Answer and retrieval evaluation: judges, agreement, paired comparison, reports.

The public surface follows ANSWER_EVALUATION_SPEC.md: :func:`evaluate_answers`
-> :class:`AnswerEvaluation`, :func:`evaluate_retrieval` ->
:class:`RetrievalEvaluation`, and ``compare`` -> :class:`EvaluationComparison`.
"""

from __future__ import annotations

from kagreport._errors import ConfigError, JudgeCacheError, ReportError
from kagreport.evaluation._agreement import Agreement, krippendorff_alpha
from kagreport.evaluation._compare import DifferentItemsError, NoSharedItemsError
from kagreport.evaluation._comparison import EvaluationComparison, MetricComparison
from kagreport.evaluation._correction import LabelCorrection
from kagreport.evaluation._evaluate import evaluate_answers, evaluate_retrieval
from kagreport.evaluation._items import AnswerItem, RetrievalItem, TextRepairWarning
from kagreport.evaluation._kag import evaluation_from_stats
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation
from kagreport.evaluation._retrieval_answer import RetrievalAnswerTable, retrieval_answer_table
from kagreport.evaluation._verdicts import MetricVerdict

__all__ = [
    "Agreement",
    "AnswerEvaluation",
    "AnswerItem",
    "ConfigError",
    "DifferentItemsError",
    "EvaluationComparison",
    "JudgeCacheError",
    "LabelCorrection",
    "MetricComparison",
    "MetricVerdict",
    "NoSharedItemsError",
    "ReportError",
    "RetrievalAnswerTable",
    "RetrievalEvaluation",
    "RetrievalItem",
    "TextRepairWarning",
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
    "krippendorff_alpha",
    "retrieval_answer_table",
]

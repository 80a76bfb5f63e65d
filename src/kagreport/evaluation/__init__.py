"""Answer and retrieval evaluation: judges, agreement, paired comparison, reports.

The public surface follows ANSWER_EVALUATION_SPEC.md: :func:`evaluate_answers`
-> :class:`AnswerEvaluation`, :func:`evaluate_retrieval` ->
:class:`RetrievalEvaluation`, and ``compare`` -> :class:`EvaluationComparison`.
"""

from __future__ import annotations

from kagreport._errors import ConfigError, JudgeCacheError, ReportError
from kagreport.evaluation._agreement import (
    Agreement,
    alpha_interval,
    compute_agreement,
    krippendorff_alpha,
    pairwise_agreement,
)
from kagreport.evaluation._compare import (
    DifferentItemsError,
    NoSharedItemsError,
    compare_items,
    compare_scores,
    primary_metrics,
    same_hypotheses,
)
from kagreport.evaluation._comparison import EvaluationComparison, MetricComparison
from kagreport.evaluation._correction import LabelCorrection
from kagreport.evaluation._evaluate import evaluate_answers, evaluate_retrieval
from kagreport.evaluation._files import check_evaluate_paths, check_output_path, write_report
from kagreport.evaluation._items import AnswerItem, RetrievalItem, TextRepairWarning
from kagreport.evaluation._kag import answer_items_from_run, evaluation_from_stats
from kagreport.evaluation._read import read_report
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation
from kagreport.evaluation._retrieval_answer import (
    RetrievalAnswerTable,
    retrieval_answer_from_reports,
    retrieval_answer_table,
)
from kagreport.evaluation._text import render_comparison, render_evaluation
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
    "alpha_interval",
    "answer_items_from_run",
    "check_evaluate_paths",
    "check_output_path",
    "compare_items",
    "compare_scores",
    "compute_agreement",
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
    "krippendorff_alpha",
    "pairwise_agreement",
    "primary_metrics",
    "read_report",
    "render_comparison",
    "render_evaluation",
    "retrieval_answer_from_reports",
    "retrieval_answer_table",
    "same_hypotheses",
    "write_report",
]

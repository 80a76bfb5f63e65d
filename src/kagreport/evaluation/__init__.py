"""Answer and retrieval evaluation: judges, agreement, paired comparison, reports.

The public surface follows ANSWER_EVALUATION_SPEC.md: :func:`evaluate_answers`
-> :class:`AnswerEvaluation`, :func:`evaluate_retrieval` ->
:class:`RetrievalEvaluation`, and ``compare`` -> :class:`EvaluationComparison`.
"""

from __future__ import annotations

from kagreport._errors import ConfigError, FormatError, InputError, JudgeCacheError, ReportError
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
from kagreport.evaluation._evaluate import evaluate_answers, evaluate_retrieval, metric_name
from kagreport.evaluation._files import (
    check_evaluate_paths,
    check_output_path,
    compare_report_files,
    write_report,
)
from kagreport.evaluation._items import AnswerItem, RetrievalItem, TextRepairWarning
from kagreport.evaluation._kag import answer_items_from_run, evaluation_from_stats
from kagreport.evaluation._read import read_report
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation
from kagreport.evaluation._retrieval import retrieval_scores
from kagreport.evaluation._retrieval_answer import (
    RetrievalAnswerCell,
    RetrievalAnswerTable,
    retrieval_answer_from_reports,
    retrieval_answer_table,
)
from kagreport.evaluation._text import render_comparison, render_evaluation
from kagreport.evaluation._verdicts import VERDICTS, MetricVerdict
from kagreport.evaluation.judges import (
    CachedResponse,
    Contains,
    ExactMatch,
    Judge,
    JudgeCache,
    JudgeFailure,
    Judgement,
    LLMJudge,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
    Usage,
    extract_option,
    identity_hash,
    load_items_jsonl,
    load_judges,
    normalize_answer,
    parse_verdict,
    prompt_files,
)
from kagreport.stats import (
    SignFlipResult,
    bootstrap_mean_interval,
    holm_adjust,
    paired_differences,
    sign_flip_test,
)

__all__ = [
    "VERDICTS",
    "Agreement",
    "AnswerEvaluation",
    "AnswerItem",
    "CachedResponse",
    "ConfigError",
    "Contains",
    "DifferentItemsError",
    "EvaluationComparison",
    "ExactMatch",
    "FormatError",
    "InputError",
    "Judge",
    "JudgeCache",
    "JudgeCacheError",
    "JudgeFailure",
    "Judgement",
    "LLMJudge",
    "LabelCorrection",
    "MetricComparison",
    "MetricVerdict",
    "NoSharedItemsError",
    "OptionExtraction",
    "OptionMatch",
    "RegexMatch",
    "ReportError",
    "RetrievalAnswerCell",
    "RetrievalAnswerTable",
    "RetrievalEvaluation",
    "RetrievalItem",
    "SignFlipResult",
    "TextRepairWarning",
    "TokenF1",
    "Usage",
    "alpha_interval",
    "answer_items_from_run",
    "bootstrap_mean_interval",
    "check_evaluate_paths",
    "check_output_path",
    "compare_items",
    "compare_report_files",
    "compare_scores",
    "compute_agreement",
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
    "extract_option",
    "holm_adjust",
    "identity_hash",
    "krippendorff_alpha",
    "load_items_jsonl",
    "load_judges",
    "metric_name",
    "normalize_answer",
    "paired_differences",
    "pairwise_agreement",
    "parse_verdict",
    "primary_metrics",
    "prompt_files",
    "read_report",
    "render_comparison",
    "render_evaluation",
    "retrieval_answer_from_reports",
    "retrieval_answer_table",
    "retrieval_scores",
    "same_hypotheses",
    "sign_flip_test",
    "write_report",
]

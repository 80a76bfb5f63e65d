"""Judges: what scores one answer, and what they share.

The building blocks of :func:`~kagreport.evaluation.evaluate_answers`:

- the protocol (:class:`Judge`, :class:`Judgement`, :class:`JudgeFailure`, :class:`Usage`,
  :func:`identity_hash`);
- the rule judges (:class:`ExactMatch`, :class:`Contains`, :class:`RegexMatch`,
  :class:`TokenF1`, :class:`OptionMatch`, :class:`OptionExtraction`) and their text helpers;
- the LLM judge (:class:`LLMJudge`, :func:`parse_verdict`) over an OpenAI-compatible endpoint;
- the response cache (:class:`JudgeCache`, :class:`CachedResponse`);
- the judge configuration files (:func:`load_judges`, :func:`prompt_files`) and the items
  JSONL file (:func:`load_items_jsonl`).
"""

from __future__ import annotations

from kagreport.evaluation.judges._cache import CachedResponse, JudgeCache
from kagreport.evaluation.judges._config import load_items_jsonl, load_judges, prompt_files
from kagreport.evaluation.judges._llm import LLMJudge
from kagreport.evaluation.judges._protocol import (
    Judge,
    JudgeFailure,
    Judgement,
    Usage,
    identity_hash,
)
from kagreport.evaluation.judges._rules import (
    NO_OPTION,
    Contains,
    ExactMatch,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
    extract_option,
    normalize_answer,
    option_verdict,
    read_option,
)
from kagreport.evaluation.judges._sandbox import MAX_PROMPT_CHARS
from kagreport.evaluation.judges._verdict import MAX_REPLY_CHARS, Scale, parse_verdict

__all__ = [
    "MAX_PROMPT_CHARS",
    "MAX_REPLY_CHARS",
    "NO_OPTION",
    "CachedResponse",
    "Contains",
    "ExactMatch",
    "Judge",
    "JudgeCache",
    "JudgeFailure",
    "Judgement",
    "LLMJudge",
    "OptionExtraction",
    "OptionMatch",
    "RegexMatch",
    "Scale",
    "TokenF1",
    "Usage",
    "extract_option",
    "identity_hash",
    "load_items_jsonl",
    "load_judges",
    "normalize_answer",
    "option_verdict",
    "parse_verdict",
    "prompt_files",
    "read_option",
]

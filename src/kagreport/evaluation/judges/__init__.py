"""Judges: what scores one answer, and what they share.

The building blocks of :func:`~kagreport.evaluation.evaluate_answers`:

- the protocol (``Judge``, ``Judgement``, ``JudgeFailure``, ``Usage``,
  ``identity_hash``);
- the rule judges (``ExactMatch``, ``Contains``, ``RegexMatch``,
  ``TokenF1``, ``OptionMatch``, ``OptionExtraction``) and their text helpers;
- the LLM judge (``LLMJudge``, ``parse_verdict``) over an OpenAI-compatible endpoint;
- the response cache (``JudgeCache``, ``CachedResponse``);
- the judge configuration files (``load_judges``, ``prompt_files``) and the items
  JSONL file (``load_items_jsonl``).
"""

from __future__ import annotations

from kagreport.evaluation.judges._config import load_judges
from kagreport.evaluation.judges._llm import LLMJudge
from kagreport.evaluation.judges._protocol import Judge, JudgeFailure, Judgement, Usage
from kagreport.evaluation.judges._rules import (
    Contains,
    ExactMatch,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
    extract_option,
)

__all__ = [
    "Contains",
    "ExactMatch",
    "Judge",
    "JudgeFailure",
    "Judgement",
    "LLMJudge",
    "OptionExtraction",
    "OptionMatch",
    "RegexMatch",
    "TokenF1",
    "Usage",
    "extract_option",
    "load_judges",
]

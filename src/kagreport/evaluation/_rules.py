"""Rule-based judges: kag's option match, normalised exact match, regex, contains,
token F1 and option extraction from free text.

All are deterministic, cost nothing and score in [0, 1]. Each has one
criterion, ``"score"``, so its metric is named after the judge.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation._judge import JudgeFailure, Judgement
from kagreport.grading import WHITE_SPACE, grade_response

__all__ = [
    "NO_OPTION",
    "Contains",
    "ExactMatch",
    "OptionExtraction",
    "OptionMatch",
    "RegexMatch",
    "TokenF1",
    "extract_option",
    "normalize_answer",
]

_VERSION = 1
#: The verdict of :class:`OptionExtraction` when the answer commits to no option.
NO_OPTION = "no option found"


def _reference(item: AnswerItem, judge: str) -> str:
    if item.reference is None:
        raise JudgeFailure(
            f"judge {judge!r} needs a reference answer; item {item.identifier!r} has none"
        )
    return item.reference


def _answer(item: AnswerItem) -> str:
    # evaluate_answers never sends an item without an answer; direct callers might.
    if item.answer is None:
        raise JudgeFailure(f"item {item.identifier!r} has no answer to judge")
    return item.answer


@dataclass(frozen=True)
class _RuleJudge:
    name: str
    blocking: ClassVar[bool] = False  # fast and local: evaluate_answers runs it inline
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a judge name must be a non-empty string, not {self.name!r}")

    @property
    def criteria(self) -> tuple[str, ...]:
        return ("score",)

    @property
    def identity(self) -> Mapping[str, Any]:
        return {"kind": self.kind, "version": _VERSION}

    def _judgement(self, score: float, verdict: Any = None) -> Judgement:
        return Judgement({"score": score}, verdict)


@dataclass(frozen=True)
class OptionMatch(_RuleJudge):
    """kag's rule: the answer, trimmed of Unicode White_Space, equals the reference
    option key ignoring ASCII case only (``kag stats``; KAG_STATS_SPEC.md 2.3).

    Score 1 or 0. Fails (counted in ``errors``) without a reference.
    """

    name: str = "option_match"
    kind: ClassVar[str] = "option_match"

    def judge(self, item: AnswerItem) -> Judgement:
        return self._judgement(float(grade_response(_answer(item), _reference(item, self.name))))


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 answer normalisation: lower case, drop ASCII punctuation, drop the
    articles a/an/the, collapse white space (Rajpurkar et al. 2016, official evaluation script).
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


@dataclass(frozen=True)
class ExactMatch(_RuleJudge):
    """Normalised exact match (SQuAD): 1 if :func:`normalize_answer` of answer and
    reference are equal, else 0. Fails without a reference."""

    name: str = "exact_match"
    kind: ClassVar[str] = "exact_match"

    def judge(self, item: AnswerItem) -> Judgement:
        same = normalize_answer(_answer(item)) == normalize_answer(_reference(item, self.name))
        return self._judgement(float(same))


@dataclass(frozen=True)
class TokenF1(_RuleJudge):
    """SQuAD token-level F1 between answer and reference after :func:`normalize_answer`.

    precision = overlap / answer tokens, recall = overlap / reference tokens,
    F1 = 2PR / (P + R), where overlap counts shared tokens with multiplicity;
    1 when both are empty, 0 when only one is. Fails without a reference.
    """

    name: str = "token_f1"
    kind: ClassVar[str] = "token_f1"

    def judge(self, item: AnswerItem) -> Judgement:
        predicted = normalize_answer(_answer(item)).split()
        gold = normalize_answer(_reference(item, self.name)).split()
        if not predicted or not gold:
            return self._judgement(float(predicted == gold))
        overlap = sum((Counter(predicted) & Counter(gold)).values())
        if overlap == 0:
            return self._judgement(0.0)
        precision, recall = overlap / len(predicted), overlap / len(gold)
        return self._judgement(2 * precision * recall / (precision + recall))


@dataclass(frozen=True)
class RegexMatch(_RuleJudge):
    """1 if ``pattern`` (Python :mod:`re`) is found in the answer, else 0.

    Raises
    ------
    ValueError
        If the pattern does not compile.
    """

    pattern: str = ""
    name: str = "regex"
    ignore_case: bool = False
    kind: ClassVar[str] = "regex"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.pattern, str):
            raise ValueError(f"pattern must be a string, not {self.pattern!r}")
        if not isinstance(self.ignore_case, bool):
            raise ValueError(f"ignore_case must be true or false, not {self.ignore_case!r}")
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {self.pattern!r}: {exc}") from None
        object.__setattr__(self, "_compiled", compiled)

    @property
    def identity(self) -> Mapping[str, Any]:
        return {**super().identity, "pattern": self.pattern, "ignore_case": self.ignore_case}

    def judge(self, item: AnswerItem) -> Judgement:
        compiled: re.Pattern[str] = self._compiled  # type: ignore[attr-defined]
        match = compiled.search(_answer(item))
        return self._judgement(float(match is not None), None if match is None else match.group(0))


@dataclass(frozen=True)
class Contains(_RuleJudge):
    """1 if the normalised reference (or ``text``, when given) occurs in the normalised
    answer (:func:`normalize_answer`), else 0. Fails without a reference and ``text``."""

    text: str | None = None
    name: str = "contains"
    kind: ClassVar[str] = "contains"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.text is not None and not isinstance(self.text, str):
            raise ValueError(f"text must be a string, not {self.text!r}")

    @property
    def identity(self) -> Mapping[str, Any]:
        return {**super().identity, "text": self.text}

    def judge(self, item: AnswerItem) -> Judgement:
        needle = normalize_answer(
            self.text if self.text is not None else _reference(item, self.name)
        )
        return self._judgement(float(needle in normalize_answer(_answer(item))))


# Option extraction (PITFALLS.md B4). Markdown/LaTeX wrappers go first; then the
# LAST explicit declaration ("answer: X", "the answer is (X)", "\boxed{X}") wins;
# a declaration never reaches across a line break; a letter directly followed by
# another letter is a word, not an option.
_WRAPPERS = str.maketrans({"*": " ", "_": " ", "$": " ", "`": " "})
_DECLARATION = re.compile(
    r"(?:\banswer\s*(?:is\s*)?[:：]?|答案\s*[:：]?|\\boxed\s*\{)[ \t\u00a0]*\(?[ \t]*",
    re.IGNORECASE,
)
_FULL_WIDTH = {chr(0xFF21 + i): chr(0x41 + i) for i in range(26)} | {
    chr(0xFF41 + i): chr(0x41 + i) for i in range(26)
}


def extract_option(text: str, letters: str = "ABCDEFGHIJ") -> str | None:
    """Extract the option letter a free-text answer commits to, or ``None``.

    Rules, in order (PITFALLS.md B4):

    1. ``*``, ``_``, ``$`` and backticks are removed (``**A**``, ``$A$``).
    2. Every declaration ``answer:``, ``answer is``, ``答案：`` or ``\\boxed{`` is
       tried; the letter must follow on the same line, optionally in ``(...)``,
       and must not run into another letter (``Answer: Answer: C`` gives C,
       not the A of "Answer"). The last declaration with a letter wins.
    3. Without any, a response that is only a letter (``"B"``, ``"(b)"``,
       ``"B."``) gives it.

    Letters are matched case-insensitively and returned in upper case.
    Decision: full-width letters (``Ｂ``) count as their ASCII letter, as in
    simple-evals; other scripts (Arabic ``ب``) and compatibility characters such as
    the Kelvin sign are not mapped.

    Parameters
    ----------
    text : str
        The response.
    letters : str
        The valid option letters (default A to J, as MMLU-Pro).
    """
    valid = set(letters.upper())
    clean = text.translate(_WRAPPERS)
    clean = "".join(_FULL_WIDTH.get(ch, ch) for ch in clean)
    found = None
    size = len(clean)
    for match in _DECLARATION.finditer(clean):
        at = match.end()  # index, not a slice: a long answer must not be copied per match
        if (
            at < size
            and clean[at].upper() in valid
            and not (at + 1 < size and clean[at + 1].isalpha())
        ):
            found = clean[at].upper()
    if found is not None:
        return found
    lone = clean.strip(WHITE_SPACE).strip("().[]{}: ").strip(WHITE_SPACE)
    if len(lone) == 1 and lone.upper() in valid:
        return lone.upper()
    return None


@dataclass(frozen=True)
class OptionExtraction(_RuleJudge):
    """Extract an option letter from free text (:func:`extract_option`) and compare it
    with the reference key, ignoring case.

    Score 1 when they agree, 0 otherwise, including when no option is found
    (then the verdict is ``"no option found"``); else the verdict is the
    extracted letter. Valid letters are the item's ``metadata["options"]`` keys
    when present, else ``letters``. Fails without a reference.
    """

    name: str = "option_extraction"
    letters: str = "ABCDEFGHIJ"
    kind: ClassVar[str] = "option_extraction"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.letters, str) or not self.letters or not self.letters.isalpha():
            raise ValueError(f"letters must be a non-empty string of letters, not {self.letters!r}")

    @property
    def identity(self) -> Mapping[str, Any]:
        return {**super().identity, "letters": self.letters}

    def judge(self, item: AnswerItem) -> Judgement:
        reference = _reference(item, self.name)
        options = item.metadata.get("options")
        letters = "".join(options) if isinstance(options, Mapping) and options else self.letters
        option = extract_option(_answer(item), letters)
        score = option is not None and option.lower() == reference.strip(WHITE_SPACE).lower()
        return self._judgement(float(score), NO_OPTION if option is None else option)

"""Rule-based judges: kag's option match, normalised exact match, regex, contains,
token F1 and option extraction from free text.

All are deterministic, cost nothing and score in [0, 1]. Each has one
criterion, ``"score"``, so its metric is named after the judge. Its scale is
``"nominal 0/1"`` (right or wrong), except ``TokenF1``'s ``"interval 0..1"``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kagreport.evaluation._items import AnswerItem
from kagreport.evaluation.judges._protocol import (
    BINARY_SCALE,
    JudgeFailure,
    Judgement,
    range_scale,
)
from kagreport.grading._rule import WHITE_SPACE, grade_response

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
    "option_verdict",
    "read_option",
]

_VERSION = 1
#: The verdict of ``OptionExtraction`` when the answer commits to no option.
NO_OPTION = "no option found"


def _reference(item: AnswerItem, judge: str) -> str:
    if item.reference is None:
        raise JudgeFailure(
            f"judge {judge!r} needs a reference answer; item {item.identifier!r} has none",
            cause="the item has no reference answer",
        )
    return item.reference


def _answer(item: AnswerItem) -> str:
    # evaluate_answers never sends an item without an answer; direct callers might.
    if item.answer is None:
        raise JudgeFailure(
            f"item {item.identifier!r} has no answer to judge", cause="the item has no answer"
        )
    return item.answer


@dataclass(frozen=True)
class _RuleJudge:
    name: str
    blocking: ClassVar[bool] = False  # fast and local: evaluate_answers runs it inline
    kind: ClassVar[str] = ""
    scale: ClassVar[str] = BINARY_SCALE

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a judge name must be a non-empty string, not {self.name!r}")

    @property
    def criteria(self) -> tuple[str, ...]:
        return ("score",)

    @property
    def scales(self) -> Mapping[str, str]:
        """Criterion -> its scale (see :class:`~kagreport.evaluation.judges.Judge`)."""
        return {"score": self.scale}

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
    """Normalised exact match (SQuAD): 1 if ``normalize_answer`` of answer and
    reference are equal, else 0. Fails without a reference."""

    name: str = "exact_match"
    kind: ClassVar[str] = "exact_match"

    def judge(self, item: AnswerItem) -> Judgement:
        same = normalize_answer(_answer(item)) == normalize_answer(_reference(item, self.name))
        return self._judgement(float(same))


@dataclass(frozen=True)
class TokenF1(_RuleJudge):
    """SQuAD token-level F1 between answer and reference after ``normalize_answer``.

    precision = overlap / answer tokens, recall = overlap / reference tokens,
    F1 = 2PR / (P + R), where overlap counts shared tokens with multiplicity;
    1 when both are empty, 0 when only one is. Fails without a reference.
    """

    name: str = "token_f1"
    kind: ClassVar[str] = "token_f1"
    scale: ClassVar[str] = range_scale(0, 1)

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
    answer (``normalize_answer``), else 0. Fails without a reference and ``text``."""

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


# Option extraction (PITFALLS.md B1, B4; issue #10). Four patterns, strongest first; the
# strongest that names a letter decides. Nothing reaches across a line break.
_EXTRACTION_VERSION = 3  # 1 took articles and pronouns, had no ambiguity rule; 2 skipped letters
# that are no option (a "J" among A-D) and let a weaker pattern decide (issue 26)
# Markdown and LaTeX decoration around an option, and zero-width characters inside a line.
_WRAPPERS = str.maketrans(
    {"*": " ", "_": " ", "$": " ", "`": " "}
    | dict.fromkeys(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"], "")
)
_LATEX_LETTER = re.compile(r"\\(?:mathbf|mathrm|textbf|text|bf)\s*\{\s*([A-Za-z])\s*\}")
_FULL_WIDTH = {chr(0xFF21 + i): chr(0x41 + i) for i in range(26)} | {
    chr(0xFF41 + i): chr(0x41 + i) for i in range(26)
}
_LINE_BREAK = re.compile("[\n\r\u000b\u000c\u0085\u2028\u2029]")
_H = "[" + re.escape("".join(c for c in WHITE_SPACE if _LINE_BREAK.match(c) is None)) + "]"
# "A" and "I" are English words: followed by a word they are an article or a pronoun
# ("A cat", "I think"), unless the word is one that follows an option ("A is", "I or J").
_OPTION_FOLLOWERS = r"(?:is|was|seems|looks|appears|because|since|as|and|or|nor|vs|versus)\b"
# One letter standing alone: not inside a word, an abbreviation ("e.g.", "U.S.A"), a
# contraction ("I'm") or a hyphenated word ("A-level").
_LETTER = (
    rf"(?<![-A-Za-z0-9'’])(?<![A-Za-z]\.)(?![AaIi]{_H}+(?!{_OPTION_FOLLOWERS})[^\W\d_])"
    r"[A-Za-z](?![A-Za-z0-9'’])(?!\.[A-Za-z])(?!-[A-Za-z])"
)
# A quoted letter ("'B'", "“B”") needs both quotes: "I'd" stays a contraction.
_QUOTED = r"(?<=['\"‘“])[A-Za-z](?=['\"’”])"
_ITEM = rf"(?:\({_H}*{_LETTER}{_H}*\)?|\[{_H}*{_LETTER}{_H}*\]?|{_LETTER}|['\"‘“]{_QUOTED}['\"’”])"
_LEAD = rf"(?:(?:either|both|options?|choices?|answer|letters?){_H}+){{0,3}}"
_SEP = (
    rf"(?:{_H}*[,/&]{_H}*(?:(?:and/or|and|or|nor){_H}+)?|{_H}+(?:and/or|and|or|nor|vs\.?|versus){_H}+"
    rf"|{_H}+(?=[(\[]))"  # "(A) (B) (C)": bracketed options side by side
    rf"(?:(?:maybe|perhaps|possibly|also|even|either|both|options?|choices?){_H}+){{0,3}}"
)
# Option names joined by commas, slashes or or/and: "B", "(B)", "option b", "A or C",
# "both B and D", "(A), (C), and (J)". "B, not C" names only B.
_NAMES = rf"{_LEAD}{_ITEM}(?:{_SEP}{_ITEM}){{0,25}}"
_NAMES_RE = re.compile(_NAMES, re.IGNORECASE)
_LETTER_RE = re.compile(f"{_LETTER}|{_QUOTED}", re.IGNORECASE)
_DECLARATION = re.compile(
    rf"(?:\banswer(?:\s+(?:is|would{_H}+be|should{_H}+be|must{_H}+be|will{_H}+be))?"
    rf"|\b(?:correct|right|best|final){_H}+(?:option|choice)(?:{_H}+(?:is|would{_H}+be))?"
    rf"|答案{_H}*[是为]?|\\boxed{_H}*\{{(?:{_H}*\\text(?:bf)?{_H}*\{{)?){_H}*[:：=\-–—]?{_H}*",
    re.IGNORECASE,
)
_CHOICE = re.compile(
    r"(?:\b(?:choos(?:e|es|ing)|chose|choice|picks?|picked|picking|select(?:s|ed|ing)?|selection"
    rf"|guess(?:ed)?|(?:go|goes|going|went){_H}+(?:with|for)|opt(?:s|ed|ing)?{_H}+for"
    rf"|settl(?:e|ed|ing){_H}+on)(?:{_H}+(?:is|would{_H}+be|will{_H}+be))?){_H}*[:：]?{_H}*",
    re.IGNORECASE,
)
# "... is correct": found by its phrase, then the names that end just before it (a bounded
# look back, so a long run of letters and commas costs linear time).
_CORRECT = re.compile(
    rf"(?<!{_H}){_H}+(?:is|are){_H}+(?:(?:also|clearly|definitely|indeed|therefore|thus){_H}+)?"
    rf"(?:the{_H}+)?(?:(?:only|most|best){_H}+)?(?:correct|right|answer)\b",
    re.IGNORECASE,
)
_NAMES_BEFORE = re.compile(rf"{_NAMES}\Z", re.IGNORECASE)
_LOOK_BACK = 200  # characters: room for a list of several options written out
# A line that starts with "(C) ...", "C) ...", "C. ..." or "Option C ...".
_LINE_HEAD = re.compile(
    rf"{_H}*(?:[-+>•]{_H}*)?(?=(?:options?|choices?){_H}|[(\[]|[A-Za-z][.)])", re.IGNORECASE
)
_HEDGE = re.compile(rf"(?<![^\W\d_])(?:either|both){_H}", re.IGNORECASE)
_REJECTED = re.compile(
    rf"[)\]]?{_H}+(?:is|are){_H}+(?:(?:all|also|clearly|definitely|both){_H}+)?"
    r"(?:not|incorrect|wrong|false)\b",
    re.IGNORECASE,
)
_ALONE = re.compile(
    rf"[{re.escape(WHITE_SPACE)}()\[\]{{}}:]*{_NAMES}[{re.escape(WHITE_SPACE)}()\[\]{{}}:.!]*",
    re.IGNORECASE,
)


def _names(line: str, start: int, end: int) -> tuple[str, ...]:
    """The distinct option letters named in ``line[start:end]``, in order, upper case.

    An option that is rejected ends the list: "(B), and (C) is wrong" names B, "C is wrong"
    nothing. Letters that are no option of the item are kept: such an answer names something
    else than an option, and ``read_option`` says so rather than look further (issue 26).
    """
    found: dict[str, None] = {}
    for match in _LETTER_RE.finditer(line, start, end):
        if _REJECTED.match(line, match.end()) is not None:
            break  # first of all: "Answer: C is wrong" names nothing
        found[match.group().upper()] = None
    return tuple(found)


def read_option(text: str, letters: str = "ABCDEFGHIJ") -> tuple[str, ...]:
    """The options a free-text answer names in its strongest pattern (see ``extract_option``).

    Returns
    -------
    tuple of str
        Empty when no pattern names an option, or when the deciding pattern names a letter
        outside ``letters``; one letter for a committed answer; several (in order of
        appearance) when the deciding pattern is ambiguous.
    """
    names = _read_letters(text)
    valid = {c.upper() for c in letters}
    return names if valid.issuperset(names) else ()


def _read_letters(text: str) -> tuple[str, ...]:
    """The letters the strongest pattern of ``text`` names, options of the item or not.

    A letter that is no option of the item still decides: "The answer is (J)" to a question
    with options A-D answers another question, and no weaker pattern or other line stands in
    for it (issue 26).
    """
    clean = "".join(_FULL_WIDTH.get(ch, ch) for ch in text.translate(_WRAPPERS))
    clean = _LATEX_LETTER.sub(r"\1", clean)
    declared: tuple[str, ...] = ()
    chosen: tuple[str, ...] = ()
    mentioned: dict[str, None] = {}
    alone: dict[str, None] = {}
    for line in _LINE_BREAK.split(clean):
        for match in _DECLARATION.finditer(line):
            names = _NAMES_RE.match(line, match.end())
            if names is not None and (found := _names(line, names.start(), names.end())):
                declared = found
        choices: list[tuple[int, tuple[str, ...]]] = []
        for match in _CHOICE.finditer(line):
            names = _NAMES_RE.match(line, match.end())
            if names is not None and (found := _names(line, names.start(), names.end())):
                choices.append((match.start(), found))
        for match in _CORRECT.finditer(line):
            names = _NAMES_BEFORE.search(line, max(0, match.start() - _LOOK_BACK), match.start())
            if names is not None and (found := _names(line, names.start(), names.end())):
                choices.append((names.start(), found))
        if choices:
            chosen = max(choices)[1]
        if declared or chosen:
            continue  # weaker patterns cannot decide any more; keep reading for later lines
        if _ALONE.fullmatch(line) is not None:
            alone.update(dict.fromkeys(_names(line, 0, len(line))))
            continue
        # (position, whether it needs two options): the line's head, then each either/both.
        heads = [(m.start(), True) for m in _HEDGE.finditer(line)]
        if (head := _LINE_HEAD.match(line)) is not None:
            heads.insert(0, (head.end(), False))
        for at, hedge in heads:
            names = _NAMES_RE.match(line, at)
            if names is None or _REJECTED.match(line, names.end()) is not None:
                continue
            found = _names(line, names.start(), names.end())
            if not hedge or len(found) > 1:
                mentioned.update(dict.fromkeys(found))
    for deciding in (declared, chosen, tuple(mentioned), tuple(alone)):
        if deciding:
            return deciding
    return ()


def extract_option(text: str, letters: str = "ABCDEFGHIJ") -> str | None:
    """Extract the option letter a free-text answer commits to, or ``None``.

    Markdown/LaTeX wrappers (``*``, ``_``, ``$``, backticks) are removed first and
    full-width letters fold to ASCII. Then four patterns are tried, strongest first;
    the strongest one that names a letter decides, and no pattern reaches across a
    line break. When that letter is not among ``letters`` (``The answer is (J)`` to a
    question with options A-D) the answer names no option of this question: ``None``,
    never a weaker pattern's or another line's option:

    1. **Declaration**: ``answer:`` (or ``-``), ``answer is``/``would be``/``should be``,
       ``the correct option is``, ``答案：``, ``\\boxed{``, followed by the option.
       The last declaration in the text wins (PITFALLS.md B4).
    2. **Choice**: a verb or noun of choice (``I choose``, ``I'd go with``, ``pick``,
       ``select``, ``opt for``, ``My choice:``, ``a guess would be``) followed by the
       option, or the option followed by ``is correct``/``is right``/``is the
       (correct) answer``. The last one wins.
    3. **Mention**: a line starting with ``(C)``, ``C)``, ``C.`` or ``Option C``, or
       ``either B or D``/``both B and D`` anywhere. Mentions are not commitments, so
       all of them must name the same option; one followed by ``is not``/``are
       incorrect``/``wrong``/``false`` does not count.
    4. **Alone**: a line holding nothing but the option (``B``, ``(b)``, ``B.``);
       all such lines must agree.

    An option is written ``B``, ``(B)``, ``[B]``, ``'B'`` or ``option B``, and several are
    joined by commas, slashes, ``and``/``or``/``nor`` (``A or C``, ``both B and D``,
    ``A, C``). A deciding pattern that names several distinct options is ambiguous:
    no option (``read_option`` returns them). A letter is an option only when it
    stands alone: not inside a word (``Answer: Answer: C`` gives C), an abbreviation
    (``e.g.``) or a contraction (``I'm``); ``A``/``I`` followed by a word are the
    article and the pronoun (``a good choice``, ``I think``) unless the word is one
    that follows an option (``is``, ``because``, ``or``, ...). ``Answer: $5`` names no
    letter.

    Letters are matched case-insensitively and returned in upper case.
    Decision: full-width letters (``Ｂ``) count as their ASCII letter, as in
    simple-evals; other scripts (Arabic ``ب``) and compatibility characters such as
    the Kelvin sign are not mapped.

    Parameters
    ----------
    text : str
        The response.
    letters : str
        The valid option letters (default A to J, as MMLU-Pro), ASCII.
    """
    names = read_option(text, letters)
    return names[0] if len(names) == 1 else None


def option_verdict(names: tuple[str, ...], letters: str | None = None) -> str:
    """The verdict text for the letters an answer names (``read_option``'s result): the
    letter, ``"no option found"``, ``"ambiguous: names A and C"``, or, given the valid
    ``letters``, ``"not an option: J"`` for letters outside them."""
    if letters is not None:
        valid = {c.upper() for c in letters}
        outside = [name for name in names if name not in valid]
        if outside:
            return f"not an option: {', '.join(outside)}"
    if not names:
        return NO_OPTION
    if len(names) == 1:
        return names[0]
    return f"ambiguous: names {', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class OptionExtraction(_RuleJudge):
    """Extract an option letter from free text (``extract_option``) and compare it
    with the reference key, ignoring case.

    Score 1 when they agree, 0 otherwise, including when no option is found (then
    the verdict is ``"no option found"``), when the answer is ambiguous (then the
    verdict is ``"ambiguous: names A and C"``) and when it names a letter that is no
    option of the item (then the verdict is ``"not an option: J"``; never credited,
    never read as another option); else the verdict is the extracted letter. Valid
    letters are the item's single-letter ``metadata["options"]`` keys when it has any,
    else ``letters``. Fails without a reference.
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
        return {**super().identity, "version": _EXTRACTION_VERSION, "letters": self.letters}

    def judge(self, item: AnswerItem) -> Judgement:
        reference = _reference(item, self.name)
        options = item.metadata.get("options")
        keys = (
            [
                k
                for k in options
                if isinstance(k, str) and len(k) == 1 and k.isascii() and k.isalpha()
            ]
            if isinstance(options, Mapping)
            else []
        )
        valid = "".join(keys) or self.letters
        names = _read_letters(_answer(item))
        # Credit only a valid option: "J" answers another question than this A-D one, even
        # when its reference is (wrongly) "J".
        score = (
            len(names) == 1
            and names[0] in valid.upper()
            and names[0].lower() == reference.strip(WHITE_SPACE).lower()
        )
        return self._judgement(float(score), option_verdict(names, valid))

"""The one formatter of numbers, percentages, p-values, missing values and names for every view.

Text tables, HTML reprs, LaTeX tables, widgets, chart tooltips and the site all call these
functions, so one value reads the same everywhere. kag's byte-exact ``kag stats`` text
(:mod:`kagreport.grading._render`) keeps its own rules, as kag writes them.

One convention per kind of number:

=====================  ==================================  ===============================
kind                   function                            example
=====================  ==================================  ===============================
proportion             :func:`percent`, :func:`metric`     ``72.3% [68.3%, 76.1%]``
score (not 0/1)        :func:`score`, :func:`metric`       ``0.725 [0.690, 0.760]``
difference, proportion :func:`points`, :func:`difference`  ``−10.6 pp [−14.6, −6.6]``
difference, score      :func:`difference`                  ``−0.250 [−0.500, 0.000]``
p-value                :func:`p_value`                     ``0.0312``, ``1.91e-06``
time, size, tokens     :func:`quantity`                    ``1.23``, ``0.0412``, ``1,105``
count                  :func:`count`, :func:`plural`       ``1,234``, ``1 judge``
=====================  ==================================  ===============================

The unit of a time or size is named once, in the column or axis title ("Mean generation (s)",
"Context length (bytes)"), not after each number.

Names (of systems, datasets, metrics, judges, runs) come from result files and users, and may
hold anything. :func:`printable` makes one safe for every renderer (control characters, line
and paragraph separators, lone surrogates and noncharacters shown as escapes such as
``\\x01``; cut to a length with ``…``); :func:`isolated` also keeps a right-to-left name from
reordering the text around it (charts); :func:`name_labels` gives a set of names distinct
labels.

Standard library only: this module sits at the bottom of the layers, beside ``_errors``.
"""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MINUS",
    "MISSING",
    "NAME_LIMIT",
    "PERCENT_METRICS",
    "SCORE_DIGITS",
    "count",
    "difference",
    "difference_interval",
    "fixed",
    "interval",
    "is_missing",
    "is_proportion",
    "isolated",
    "json_safe",
    "metric",
    "metric_interval",
    "name_labels",
    "number",
    "p_value",
    "pair_label",
    "percent",
    "percent_interval",
    "plural",
    "points",
    "points_interval",
    "printable",
    "quantity",
    "rank_range",
    "reorders",
    "score",
    "score_interval",
    "signed",
    "significant",
]

#: Decimals of a score that is not a proportion (a mean F1, MRR, Krippendorff's alpha, a judge's
#: 1-5 rating) and of a difference of such scores.
SCORE_DIGITS = 3

#: The mark of an undefined value (None, NaN, an infinity) in every view: an em dash.
MISSING = "—"

#: The minus sign of a negative number in text meant for reading (U+2212, not the hyphen).
MINUS = "\u2212"


def is_missing(value: object) -> bool:
    """Whether ``value`` is undefined: None, or a real number that is NaN or infinite.

    NumPy scalars count as numbers (they register with :mod:`numbers`); bools and integers
    are never missing.
    """
    if value is None:
        return True
    if isinstance(value, numbers.Integral):
        return False
    return isinstance(value, numbers.Real) and not math.isfinite(float(value))


def _is_bool(value: object) -> bool:
    # NumPy's bool is no numbers.Integral: tell it by its type (np.bool_, np.bool in NumPy 2).
    kind = type(value)
    return kind is bool or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def fixed(value: Any, digits: int = 4) -> str:
    """A real number with ``digits`` decimals (``0.7250``); :data:`MISSING` where undefined."""
    return MISSING if is_missing(value) else f"{float(value):.{digits}f}"


def number(value: Any, digits: int = 3, *, grouping: bool = False) -> str:
    """A table cell: floats with ``digits`` decimals, integers in full, bools as yes/no,
    anything else as ``str``; :data:`MISSING` where undefined.

    ``grouping`` puts a comma between thousands (``12,345.000``).
    """
    if is_missing(value):
        return MISSING
    comma = "," if grouping else ""
    if _is_bool(value):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):{comma}}"
    if isinstance(value, numbers.Real):
        return f"{float(value):{comma}.{digits}f}"
    return str(value)


def significant(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` significant digits (``0.725``, ``1.2e+03``); integers in full,
    bools as yes/no; :data:`MISSING` where undefined."""
    if is_missing(value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}g}"


def percent(value: Any, digits: int = 1) -> str:
    """A proportion as a percentage (``0.723`` gives ``72.3%``); :data:`MISSING` where
    undefined. Below zero (an interval's bound) with a real minus sign, as :func:`signed`."""
    return MISSING if is_missing(value) else signed(100 * float(value), digits) + "%"


def percent_interval(value: Any, low: Any, high: Any, digits: int = 1) -> str:
    """A proportion and its interval as percentages: ``61.9% [57.6%, 66.0%]``; the value
    alone when a bound is undefined; :data:`MISSING` when the value is."""
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return percent(value, digits)
    return f"{percent(value, digits)} [{percent(low, digits)}, {percent(high, digits)}]"


def signed(value: Any, digits: int = 1, *, plus: bool = False) -> str:
    """A real number with ``digits`` decimals and a real minus sign (:data:`MINUS`,
    ``−5.0``); ``plus`` writes ``+`` before a positive one (a difference). A value that
    rounds to zero has no sign (``0.0``, never ``−0.0``). :data:`MISSING` where undefined.
    """
    if is_missing(value):
        return MISSING
    x = float(value)
    text = f"{abs(x):.{digits}f}"
    if text.strip("0.") == "":  # rounds to zero: no sign
        return text
    return (MINUS if x < 0 else "+" if plus else "") + text


def points(value: Any, digits: int = 1, *, unit: bool = True) -> str:
    """A difference of two proportions in percentage points, signed: ``0.05`` gives
    ``+5.0 pp``, ``-0.05`` gives ``−5.0 pp`` (real minus); ``unit=False`` leaves out
    `` pp``. :data:`MISSING` where undefined."""
    if is_missing(value):
        return MISSING
    text = signed(100 * float(value), digits, plus=True)
    return f"{text} pp" if unit else text


def points_interval(value: Any, low: Any, high: Any, digits: int = 1) -> str:
    """A difference of proportions and its interval in percentage points:
    ``−5.0 pp [−9.1, −0.9]``; the difference alone when a bound is undefined."""
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return points(value, digits)
    bounds = ", ".join(signed(100 * float(x), digits) for x in (low, high))
    return f"{points(value, digits)} [{bounds}]"


#: Metrics that are proportions by definition, shown as percentages in every view whatever
#: their values in one run (``coverage`` of kag stats, a judge's ``accuracy``).
PERCENT_METRICS = frozenset(
    {"correct", "accuracy", "precision", "coverage", "hit", "recall", "agreement"}
)


def is_proportion(name: str, values: Iterable[Any] = ()) -> bool:
    """Whether a metric is shown as a percentage: its name (or the part before ``@``, as in
    ``hit@5``) is in :data:`PERCENT_METRICS`, or every defined per-item value is 0 or 1 (a
    judge's verdicts, a rule's matches).

    Parameters
    ----------
    name : str
        The metric's name.
    values : iterable of numbers, optional
        Its per-item values (None, NaN are skipped). With none defined, the name decides.

    Means of 0/1 items are proportions; a metric with any other value (a score in [0, 10], a
    latency) is not, so the view shows it with fixed decimals instead.
    """
    if name in PERCENT_METRICS or name.partition("@")[0] in PERCENT_METRICS:
        return True
    seen = False
    for value in values:
        if is_missing(value):
            continue
        if _is_bool(value):
            seen = True
            continue
        if not isinstance(value, numbers.Real) or float(value) not in (0.0, 1.0):
            return False
        seen = True
    return seen


def p_value(value: Any) -> str:
    """A p-value: 4 decimals (``0.0312``), ``1.91e-06`` below 1e-4; :data:`MISSING` where
    undefined.

    An exact p can be that small (2 / 2**20 for 20 discordant pairs all one way): ``0.0000``
    would read as impossible, and ``< 0.001`` would hide how strong the evidence is. A Monte
    Carlo p is never below 1 / (resamples + 1); the views name the method beside it.
    """
    if is_missing(value):
        return MISSING
    p = float(value)
    return f"{p:.2e}" if p < 1e-4 else f"{p:.4f}"


def interval(value: Any, low: Any, high: Any, digits: int = 3, *, grouping: bool = False) -> str:
    """``value [low, high]`` with :func:`number`; the value alone when a bound is undefined."""
    if is_missing(value):
        return MISSING
    shown = number(value, digits, grouping=grouping)
    if is_missing(low) or is_missing(high):
        return shown
    low_text, high_text = (number(x, digits, grouping=grouping) for x in (low, high))
    return f"{shown} [{low_text}, {high_text}]"


def rank_range(low: int | None, high: int | None) -> str:
    """The ranks a system may hold: ``3`` when they are one, ``1–4`` (en dash) otherwise,
    :data:`MISSING` when undefined (:attr:`kagreport.runs.LeaderboardRow.rank_low`)."""
    if low is None or high is None:
        return MISSING
    return str(low) if low == high else f"{low}–{high}"


def score(value: Any) -> str:
    """A score that is not a proportion (a mean F1, an MRR, an alpha, a 1-5 rating) with
    :data:`SCORE_DIGITS` decimals and a real minus: ``0.725``, ``−0.040``; :data:`MISSING`
    where undefined."""
    return signed(value, SCORE_DIGITS)


def score_interval(value: Any, low: Any, high: Any) -> str:
    """A score and its interval: ``0.725 [0.690, 0.760]``; the score alone when a bound is
    undefined; :data:`MISSING` when the score is."""
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return score(value)
    return f"{score(value)} [{score(low)}, {score(high)}]"


def metric(name: str, value: Any, values: Iterable[Any] = ()) -> str:
    """A metric's value as every view shows it: a percentage where the metric is a proportion
    (:func:`is_proportion` of ``name`` and its per-item ``values``), else a :func:`score`."""
    return percent(value) if is_proportion(name, values) else score(value)


def metric_interval(name: str, value: Any, low: Any, high: Any, values: Iterable[Any] = ()) -> str:
    """A metric's value and interval: :func:`percent_interval` for a proportion (see
    :func:`metric`), else :func:`score_interval`."""
    if is_proportion(name, values):
        return percent_interval(value, low, high)
    return score_interval(value, low, high)


def difference(value: Any, *, proportion: bool) -> str:
    """A difference of two systems' means, signed: in percentage points for proportions
    (``−10.6 pp``, :func:`points`), else with :data:`SCORE_DIGITS` decimals (``+0.250``)."""
    return points(value) if proportion else signed(value, SCORE_DIGITS, plus=True)


def difference_interval(value: Any, low: Any, high: Any, *, proportion: bool) -> str:
    """A difference and its interval: ``−10.6 pp [−14.6, −6.6]`` for proportions,
    ``−0.250 [−0.500, 0.000]`` for scores; the difference alone when a bound is undefined."""
    if proportion:
        return points_interval(value, low, high)
    if is_missing(value):
        return MISSING
    if is_missing(low) or is_missing(high):
        return difference(value, proportion=False)
    bounds = ", ".join(signed(x, SCORE_DIGITS) for x in (low, high))
    return f"{difference(value, proportion=False)} [{bounds}]"


def quantity(value: Any) -> str:
    """A measured amount (seconds, bytes, tokens, dollars) with three significant digits and
    the integer part in full, grouped by thousands: ``0.0412``, ``1.23``, ``12.3``, ``1,105``;
    integers in full (``1,105``); ``0`` for zero; :data:`MISSING` where undefined.

    The unit belongs to the column or axis title, not to the number.
    """
    if is_missing(value):
        return MISSING
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        return f"{int(value):,}"
    x = float(value)
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    text = f"{abs(x):,.{digits}f}"
    if digits and float(text.replace(",", "")) >= 10 ** (3 - digits):  # 9.996 rounds to 10.00
        text = f"{abs(x):,.{digits - 1}f}"
    return (MINUS if x < 0 else "") + text


def count(value: Any) -> str:
    """A count, in full and grouped by thousands (``12,345``); :data:`MISSING` where
    undefined."""
    return MISSING if is_missing(value) else f"{int(value):,}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and its noun in the right number: ``1 judge``, ``2 judges``, ``0 judges``,
    ``1,234 items``; ``many`` gives an irregular plural (``plural(2, "entry", "entries")``)."""
    return f"{count(n)} {noun if n == 1 else (many or noun + 's')}"


def json_safe(value: Any) -> Any:
    """A deep copy fit for strict JSON: mappings with string keys, tuples as lists, NaN and
    infinities as ``None`` (JSON has no token for them), NumPy scalars as Python ones.

    Other values are returned as they are (``json.dumps`` refuses what it cannot hold).
    """
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # NumPy scalars
        return json_safe(value.item())
    return value


#: The most characters of a name in a chart or a figure (escapes counted, the isolates of
#: :func:`isolated` not): a hub model's id with its organisation and a variant, such as
#: HELM's 80-character ``together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo-...``, fits
#: whole, on two lines of a figure's key. A longer name keeps its start and its end (where
#: names that share a prefix differ), and the page's text shows it whole; how long a chart
#: takes to draw no longer depends on how long its names are.
NAME_LIMIT = 100

_ELLIPSIS = "\u2026"
_FSI, _PDI = "\u2068", "\u2069"  # first strong isolate, pop directional isolate
_ISOLATE_OPENERS = "\u2066\u2067\u2068"  # LRI, RLI, FSI


def _escape(code: int) -> str:
    """Python's escape of a code point: ``\\x01``, ``\\u2028``, ``\\U0010ffff``."""
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# What no renderer takes as text: C0 and C1 controls and DEL (XML refuses most of them, and
# vl-convert aborts the process on one), the line and paragraph separators (line breaks to
# JavaScript and str.splitlines), UTF-16 surrogates (no UTF-8 file holds a lone one) and the
# 66 noncharacters (XML refuses U+FFFE and U+FFFF).
_PLANE_ENDS = (plane << 16 | low for plane in range(17) for low in (0xFFFE, 0xFFFF))
_NONCHARACTERS = (*range(0xFDD0, 0xFDF0), *_PLANE_ENDS)
_UNPRINTABLE = (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0xD800, 0xE000))
_ESCAPES = {code: _escape(code) for code in (*_UNPRINTABLE, *_NONCHARACTERS)}
# The explicit direction formatting characters (embeddings, overrides, isolates, marks),
# for a renderer that has no bidirectional algorithm (TeX): shown, not obeyed.
_DIRECTIONS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_BIDI_ESCAPES = {**_ESCAPES, **{code: _escape(code) for code in _DIRECTIONS}}
# Bidirectional classes of the characters that can reorder the text around them: strong
# right-to-left letters, Arabic digits, and the explicit formatting characters.
_REORDERING = frozenset(
    {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
)


def _take(characters: Iterable[str], width: int, table: Mapping[int, str]) -> list[str]:
    """The escaped characters from the start of ``characters`` that fit in ``width``
    (an escape is never split)."""
    taken: list[str] = []
    used = 0
    for character in characters:
        piece = table.get(ord(character), character)
        if used + len(piece) > width:
            break
        taken.append(piece)
        used += len(piece)
    return taken


def printable(text: str, limit: int | None = None, *, bidi: bool = False) -> str:
    """``text`` as every renderer can draw it (SVG, Vega, vl-convert, LaTeX, a terminal).

    Each control character (C0, DEL, C1: NUL, ESC, a line feed), line or paragraph separator
    (U+2028, U+2029), UTF-16 surrogate (a lone one, from a JSON escape or an undecodable file
    name) and noncharacter (U+FFFE, ...) is shown as Python's escape of it (``\\x00``,
    ``\\x1b``, ``\\u2028``, ``\\udc80``): visible and ASCII, as ``repr`` and the command line
    show them, where a picture (U+2400) or U+FFFD would need a font that has it or lose what
    the character was. Everything else is kept.

    Parameters
    ----------
    text : str
    limit : int, optional
        The most characters of the result (escapes counted; at least 1): a longer one keeps
        its first two thirds and its last third around ``…`` (an escape is never cut). The
        time taken is then bounded by ``limit``, whatever the length of ``text``.
    bidi : bool
        Also show the explicit direction formatting characters (U+061C, U+200E, U+200F,
        U+202A to U+202E, U+2066 to U+2069) as escapes: for a renderer without the Unicode
        bidirectional algorithm, such as pdflatex, which refuses them. A renderer that has
        it isolates the name instead (:func:`isolated`).

    Returns
    -------
    str
        ``text`` itself when it holds nothing to escape and fits. Applying it again changes
        nothing.

    Raises
    ------
    ValueError
        If ``limit`` is below 1.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"`limit` must be at least 1, not {limit!r}")
    table = _BIDI_ESCAPES if bidi else _ESCAPES
    if limit is None or len(text) <= limit:
        shown = text if text.isprintable() else text.translate(table)
        if limit is None or len(shown) <= limit:
            return shown
    head = (limit - 1) * 2 // 3
    tail = _take(reversed(text), limit - 1 - head, table)
    return "".join(_take(text, head, table)) + _ELLIPSIS + "".join(reversed(tail))


def reorders(text: str) -> bool:
    """Whether ``text`` can reorder the text beside it on a line (Unicode's bidirectional
    algorithm, UAX #9): it holds a right-to-left letter, an Arabic digit, or an explicit
    embedding, override or isolate."""
    return not text.isascii() and any(unicodedata.bidirectional(c) in _REORDERING for c in text)


def _is_isolated(text: str) -> bool:
    """Whether ``text`` is one isolate: U+2068 first, and the U+2069 that closes it last."""
    if not (text.startswith(_FSI) and text.endswith(_PDI)):
        return False
    depth = 0
    for position, character in enumerate(text):
        if character in _ISOLATE_OPENERS:
            depth += 1
        elif character == _PDI:
            depth -= 1
            if depth == 0:
                return position == len(text) - 1
    return False


def isolated(text: str, limit: int | None = None) -> str:
    """``text`` made :func:`printable` (to ``limit`` characters) and, when it can reorder
    the text around it, isolated: between U+2068 FIRST STRONG ISOLATE and U+2069 POP
    DIRECTIONAL ISOLATE, for text drawn with the Unicode bidirectional algorithm (Vega in a
    browser, vl-convert's SVG, PNG and PDF).

    A right-to-left override (U+202E), a Hebrew or Arabic name, or an Arabic digit, beside
    other text on one line (a chart's title, its key "1 name; 2 name", a label "a − b"),
    would otherwise reorder that text too ("myrun, rank 2" drawn as "2 knar ,nurym"). Inside
    the isolate the name is drawn as a browser draws it in ``<bdi>``: its own controls act
    on it alone (an embedding or override ends with the isolate; an isolate it opens and
    leaves open is closed; a U+2069 that would close ours early is shown as ``\\u2069``).
    Text whose characters are all left-to-right or neutral is returned as :func:`printable`
    makes it (nothing added), and text already isolated is returned as it is.

    Raises
    ------
    ValueError
        If ``limit`` is below 1.

    References
    ----------
    .. [1] Unicode Standard Annex #9, Unicode Bidirectional Algorithm, rules X5a-X6a
       (isolates) and BD16 (matching isolate initiators with U+2069).
    """
    # Our own output as it is (isolating twice changes nothing), but not a name that merely
    # starts with U+2068 and ends with U+2069: its controls and its length are seen to.
    # Each character of an output stands for at most 6 (a stray U+2069 shown as its escape;
    # an opener and the U+2069 that closes it), so one is at most 6 * limit + 2 long.
    if (
        _is_isolated(text)
        and printable(text) == text
        and (limit is None or len(text) <= 6 * limit + 2)
    ):
        return text
    text = printable(text, limit)
    if not reorders(text):
        return text
    parts: list[str] = []
    depth = 0
    for character in text:
        if character in _ISOLATE_OPENERS:
            depth += 1
        elif character == _PDI:
            if depth == 0:
                parts.append(_escape(ord(character)))
                continue
            depth -= 1
        parts.append(character)
    return _FSI + "".join(parts) + _PDI * depth + _PDI


def pair_label(candidate: str, baseline: str, limit: int = NAME_LIMIT) -> str:
    """A pair's label, ``"candidate − baseline"``, each name :func:`isolated` to fit half of
    ``limit`` with its isolates, so that the label fits ``limit`` and both names stay
    visible: cutting the whole label would take the end of one and the start of the other."""
    half = max(1, (limit - 3) // 2 - 2)
    return f"{isolated(candidate, half)} {MINUS} {isolated(baseline, half)}"


def name_labels(
    names: Iterable[str], limit: int | None = None, *, isolate: bool = False
) -> dict[str, str]:
    """Each distinct name of ``names`` -> its label: :func:`printable` (to ``limit``
    characters), or :func:`isolated` with ``isolate``; distinct names keep distinct labels.

    A name whose label is itself keeps it; another whose label is taken (two long names
    with one start and end, ``"a\\x01"`` beside a literal ``"a\\\\x01"``) gets `` (2)``,
    `` (3)``, ... after it (inside its isolate), in the order of ``names``, still within
    ``limit``. Labelling the labels again changes none of them.
    """
    shown = isolated if isolate else printable
    found = {name: shown(name, limit) for name in dict.fromkeys(names)}
    taken = {label for name, label in found.items() if label == name}
    for name, label in found.items():
        if label == name:
            continue
        unique, n = label, 1
        while unique in taken:
            n += 1
            suffix = f" ({n})"
            base = shown(name, None if limit is None else max(1, limit - len(suffix)))
            unique = base[:-1] + suffix + _PDI if _is_isolated(base) else base + suffix
        taken.add(unique)
        found[name] = unique
    return found

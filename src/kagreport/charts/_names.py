"""Names on the axes and legends of a static figure: whole, broken in two, or keyed.

A figure saved as SVG or PNG has no tooltip, so a setup, metric, judge or dataset name cut
with an ellipsis cannot be read anywhere. :func:`axis_names` decides how each name of an
axis or a legend is drawn: whole on one line when it fits the label column
(:data:`~kagreport.charts._theme.LABEL_LIMIT` pixels at the paper's text size), else on two
lines broken after a separator ("/", "-", "_", ":" or a space), else as a number that the
chart's key (:func:`key_lines`, in the subtitle) maps to the full name. The choice is made on
the paper's geometry; on a screen the text and the label column grow alike (the theme's
``labelLimit`` is one of its text sizes), so what is whole on paper is whole there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from kagreport.charts._data import SUBTITLE_CHARACTERS
from kagreport.charts._labels import text_width
from kagreport.charts._theme import LABEL_LIMIT, TEXT_SIZE

__all__ = ["LINE_HEIGHT", "AxisNames", "axis_names", "break_name", "key_lines"]

#: Where a name may be broken: after one of these characters (kept on the first line).
_SEPARATORS: Final = "/-_: "
#: The width a line may take (pixels at :data:`TEXT_SIZE`): the label limit less a margin,
#: so that rounding never makes Vega cut a line that was measured to fit.
_LINE: Final = LABEL_LIMIT - 4
#: Vega's line height of a label broken in two (pixels at the paper's text size: the font
#: size plus 2).
LINE_HEIGHT: Final = TEXT_SIZE + 2


def break_name(
    name: str, *, lines: int = 2, width: float = _LINE, font_size: float = TEXT_SIZE
) -> list[str] | None:
    """``name`` as the lines of its label: itself when it fits in ``width`` pixels; else,
    when ``lines`` is 2, its two parts around the separator that makes the longer of them
    shortest, when both fit; None when it fits in neither way (the name needs a key).

    The parts joined give ``name`` back: the separator ends the first line.
    """
    if text_width(name, font_size) <= width:
        return [name]
    if lines < 2:
        return None
    best: list[str] | None = None
    best_width = float("inf")
    for i, character in enumerate(name[:-1]):
        if character not in _SEPARATORS:
            continue
        head, tail = name[: i + 1], name[i + 1 :]
        widest = max(text_width(head, font_size), text_width(tail, font_size))
        if widest <= width and widest < best_width:
            best, best_width = [head, tail], widest
    return best


@dataclass
class AxisNames:
    """How the names of a chart's axes and legends are drawn.

    Attributes
    ----------
    shown : dict of str to list of str
        Each name not drawn as it is -> the lines of its label (two parts of the name, or
        its key number).
    key : dict of str to int
        Each keyed name -> its number, from 1 in the order the names were given.
    lines : int
        The most lines a label takes (1 or 2).
    """

    shown: dict[str, list[str]] = field(default_factory=dict)
    key: dict[str, int] = field(default_factory=dict)
    lines: int = 1

    def add(self, names: Iterable[str], *, lines: int = 2) -> AxisNames:
        """Decide how ``names`` are drawn (at most ``lines`` lines each); returns self.
        A name already decided keeps its label (one name, one number in the key)."""
        for name in dict.fromkeys(names):
            if name in self.shown or name in self.key:
                continue
            parts = break_name(name, lines=lines)
            if parts is None:
                self.key[name] = len(self.key) + 1
                self.shown[name] = [str(self.key[name])]
            elif len(parts) > 1:
                self.shown[name] = parts
                self.lines = max(self.lines, len(parts))
        return self

    def expr(self, names: Iterable[str]) -> str | None:
        """The ``labelExpr`` of an axis or legend whose values are ``names``: each label's
        lines by its value (an array is drawn as lines); None when every name is drawn as
        it is. The names are written as JSON strings (valid Vega expression literals) and
        found with ``indexof``, so no name can reach an object's properties."""
        changed = [n for n in dict.fromkeys(names) if n in self.shown]
        if not changed:
            return None
        values = json.dumps(changed)
        labels = json.dumps(
            [self.shown[n] if len(self.shown[n]) > 1 else self.shown[n][0] for n in changed]
        )
        index = f"indexof({values}, datum.value)"
        return f"{index} < 0 ? datum.label : {labels}[{index}]"

    def step(self, step: float) -> float:
        """A row step (pixels) of at least ``step`` that holds the tallest label."""
        return max(step, self.lines * LINE_HEIGHT + 4) if self.lines > 1 else step

    def key_lines(self, *, wide: bool = False) -> list[str]:
        """The key as subtitle lines (:func:`key_lines`)."""
        return key_lines([(n, name) for name, n in self.key.items()], wide=wide)


def axis_names(names: Sequence[str], *, lines: int = 2) -> AxisNames:
    """How each of ``names`` is drawn on an axis or in a legend (:class:`AxisNames`)."""
    return AxisNames().add(names, lines=lines)


def key_lines(entries: Sequence[tuple[int, str]], *, wide: bool = False) -> list[str]:
    """A chart's key as subtitle lines: "Key: 1 name; 2 name", in the order of
    ``entries`` (number, full name), lines filled up to the subtitle's width (twice as wide
    for a ``wide`` figure); none without entries.

    An entry starts a line when it does not fit on the current one. An entry wider than a
    line (a name of some 50 characters) goes on as many lines as it needs, broken after a
    separator, so that each line but the last ends with one ("/", "-", ...): the name is
    whole when its lines are read together.
    """
    width = SUBTITLE_CHARACTERS * (2 if wide else 1)
    lines: list[str] = []
    for number, name in entries:
        text = f"{number} {name}"
        if not lines:
            text = f"Key: {text}"
        elif len(lines[-1]) + 2 + len(text) <= width:
            lines[-1] += f"; {text}"
            continue
        lines += _chunks(text, width)
    return lines


def _chunks(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, each broken after the last
    separator that fits (cut at ``width`` when none does)."""
    found = []
    while len(text) > width:
        cut = max(text.rfind(c, 0, width) for c in _SEPARATORS.replace(" ", "")) + 1
        cut = cut if cut > 0 else width
        found.append(text[:cut])
        text = text[cut:]
    return [*found, text]

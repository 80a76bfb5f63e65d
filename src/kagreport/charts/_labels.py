"""Placing point labels so that they do not overlap: one of eight positions around each point.

Vega-Lite has no label layout of its own for text marks. The accuracy-against-cost chart names
every setup it places, so that a static export (no tooltip) identifies each point:
:func:`place_labels` picks, for each labelled point, the side (right, left, above, below, the
four diagonals, then the same further out) whose text box overlaps no label already placed and
no point, and stays inside the plot; :func:`name_points` decides which points carry their name
and which a number of the chart's key instead (a name too long for the plot, a name with no
free place, points drawn at one place). Positions are worked out on the figure's paper geometry
(pixels of the plot, text of the paper size); on a screen the plot and its text grow together,
so labels apart on paper stay apart there.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "POSITIONS",
    "Box",
    "PointLabel",
    "Position",
    "name_points",
    "nice_top",
    "place_labels",
    "text_width",
]


@dataclass(frozen=True)
class Position:
    """A label's offset from its point (pixels) and its text anchor."""

    dx: int
    dy: int
    align: str  # "left", "right" or "center": where the text starts relative to dx
    baseline: str  # "middle", "bottom" or "top"


#: The candidate positions, in the order they are tried.
POSITIONS: Final = (
    Position(6, 0, "left", "middle"),
    Position(-6, 0, "right", "middle"),
    Position(0, -6, "center", "bottom"),
    Position(0, 6, "center", "top"),
    Position(5, -5, "left", "bottom"),
    Position(-5, 5, "right", "top"),
    Position(-5, -5, "right", "bottom"),
    Position(5, 5, "left", "top"),
    Position(0, -16, "center", "bottom"),
    Position(0, 16, "center", "top"),
    Position(8, -14, "left", "bottom"),
    Position(-8, 14, "right", "top"),
    Position(-8, -14, "right", "bottom"),
    Position(8, 14, "left", "top"),
)

#: The positions next to their point (the first ring); the others are further out.
_NEAR: Final = 8

#: Advance widths of the printable ASCII characters (" " to "~") in Liberation Sans Regular,
#: in units of 1/2048 em (its ``hmtx`` table; the metrics of Arial, which it matches).
_ADVANCES: Final = (
    (569, 569, 727, 1139, 1139, 1821, 1366, 391, 682, 682, 797, 1196, 569, 682, 569, 569)
    + (1139,) * 10
    + (569, 569, 1196, 1196, 1196, 1139, 2079, 1366, 1366, 1479, 1479, 1366, 1251, 1593)
    + (1479, 569, 1024, 1366, 1139, 1706, 1479, 1593, 1366, 1593, 1479, 1366, 1251, 1479)
    + (1366, 1933, 1366, 1366, 1251, 569, 569, 569, 961, 1139, 682, 1139, 1139, 1024, 1139)
    + (1139, 569, 1139, 1139, 455, 455, 1024, 455, 1706, 1139, 1139, 1139, 1139, 682, 1024)
    + (569, 1139, 1024, 1479, 1024, 1024, 1024, 684, 532, 684, 1196)
)
_EM: Final = 2048
#: Any other character: as wide as a capital (East Asian wide characters: a full em).
_OTHER: Final = 1366
_POINT: Final = 4.0  # half the side of a point's box, pixels

Box = tuple[float, float, float, float]  # left, top, right, bottom


def text_width(text: str, font_size: float) -> float:
    """The width (pixels) of ``text`` at ``font_size`` in Liberation Sans: the sum of its
    characters' advance widths (kerning left out; characters outside ASCII estimated;
    combining marks and format characters, such as the isolates around a right-to-left
    name, take none)."""
    units = 0
    for character in text:
        code = ord(character) - 32
        if 0 <= code < len(_ADVANCES):
            units += _ADVANCES[code]
        elif unicodedata.category(character) in ("Mn", "Me", "Cf"):
            continue
        else:
            wide = unicodedata.east_asian_width(character) in ("W", "F")
            units += _EM if wide else _OTHER
    return units * font_size / _EM


def nice_top(value: float, count: int = 10) -> float:
    """The top of a zero-based axis as Vega's ``nice: true`` extends ``value``: d3's
    ``linear.nice(10)``, whose steps are 1, 2 or 5 times a power of ten (``tickIncrement``):
    where a point sits in the plot, to place its label."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    top = value
    for _ in range(10):  # d3 repeats until the step no longer changes
        raw = top / count
        power = 10.0 ** math.floor(math.log10(raw))
        error = raw / power
        factor = 10 if error >= 50**0.5 else 5 if error >= 10**0.5 else 2 if error >= 2**0.5 else 1
        nice = math.ceil(top / (factor * power) - 1e-9) * factor * power
        if nice == top:
            break
        top = nice
    return top


def _box(x: float, y: float, p: Position, width: float, height: float) -> Box:
    left = {"left": x + p.dx, "right": x + p.dx - width, "center": x + p.dx - width / 2}[p.align]
    top = {"middle": y + p.dy - height / 2, "bottom": y + p.dy - height, "top": y + p.dy}[
        p.baseline
    ]
    return (left, top, left + width, top + height)


def _overlap(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _outside(box: Box, width: float, height: float) -> float:
    return (
        max(0.0, -box[0]) + max(0.0, box[2] - width) + max(0.0, -box[1]) + max(0.0, box[3] - height)
    )


def place_labels(
    points: Sequence[tuple[float, float]],
    labels: Sequence[str | None],
    *,
    width: float,
    height: float,
    font_size: float,
    limit: float,
    obstacles: Sequence[Box] = (),
) -> list[int]:
    """The index into :data:`POSITIONS` of each label (-1 for a point without one).

    Parameters
    ----------
    points : sequence of (x, y)
        Pixel positions in the plot (y down), every point of the panel, labelled or not.
    labels : sequence of str or None
        The text of each point's label, None for no label; placed in this order.
    width, height : float
        The plot's size, pixels.
    font_size : float
        Pixels.
    limit : float
        The longest a label's text is drawn (pixels; longer text is cut with an ellipsis).
    obstacles : sequence of (left, top, right, bottom)
        Other marks a label should keep off (error bars, the frontier's line), pixels.

    Returns
    -------
    list of int
        For each point. A label with no free position takes the one overlapping least
        (labels weigh far more than points, points more than leaving the plot).
    """
    marks = [(x - _POINT, y - _POINT, x + _POINT, y + _POINT) for x, y in points]
    marks += list(obstacles)
    placed: list[Box] = []
    found = []
    for (x, y), text in zip(points, labels, strict=True):
        if text is None:
            found.append(-1)
            continue
        size = (min(limit, text_width(text, font_size)), font_size)
        best, best_cost, best_box = 0, float("inf"), (0.0, 0.0, 0.0, 0.0)
        for k, p in enumerate(POSITIONS):
            box = _box(x, y, p, *size)
            cost = 1000.0 * sum(_overlap(box, other) for other in placed)
            cost += 10.0 * sum(_overlap(box, other) for other in marks)
            cost += _outside(box, width, height) * font_size + 0.01 * k
            if cost < best_cost:
                best, best_cost, best_box = k, cost, box
            if cost < 0.5:  # free: the earliest free position wins
                break
        placed.append(best_box)
        found.append(best)
    return found


#: Points closer than this (pixels, centre to centre) are drawn at one place: their markers
#: cover each other, so one label names them all.
COINCIDENT: Final = 3.0
#: The width of a key number while labels are placed (numbers are given after every panel
#: is laid out; two digits are the widest a chart's key reaches in practice).
_NUMBER: Final = "00"


@dataclass(frozen=True)
class PointLabel:
    """How one point is identified in a static figure.

    Attributes
    ----------
    position : int
        Index into :data:`POSITIONS` of the label drawn beside this point; -1 for none (a
        point named by the label of the point it coincides with).
    keyed : bool
        The point is identified by its number in the chart's key rather than by its name.
    group : tuple of int
        The points drawn at this point's place, this one included, in input order (one
        point alone: itself). The first of them carries the label, which lists the numbers
        of all of them.
    """

    position: int
    keyed: bool
    group: tuple[int, ...]


def _groups(points: Sequence[tuple[float, float]]) -> list[tuple[int, ...]]:
    """Points at one place (within :data:`COINCIDENT` pixels, transitively), in input order."""
    parent = list(range(len(points)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (xi, yi) in enumerate(points):
        for j in range(i):
            xj, yj = points[j]
            if (xi - xj) ** 2 + (yi - yj) ** 2 <= COINCIDENT**2:
                parent[root(i)] = root(j)
    members: dict[int, list[int]] = {}
    for i in range(len(points)):
        members.setdefault(root(i), []).append(i)
    return [tuple(members[root(i)]) for i in range(len(points))]


def _clashes(
    boxes: Sequence[Box | None],
    points: Sequence[tuple[float, float]],
    groups: Sequence[tuple[int, ...]],
    width: float,
    height: float,
) -> list[bool]:
    """Whether each label's box overlaps another label, a point other than those it names,
    or leaves the plot."""
    marks = [(x - _POINT, y - _POINT, x + _POINT, y + _POINT) for x, y in points]
    found = []
    for i, box in enumerate(boxes):
        if box is None:
            found.append(False)
            continue
        others = [other for j, other in enumerate(boxes) if j != i and other is not None]
        hit = any(_overlap(box, other) > 0.5 for other in others)
        hit = hit or any(
            _overlap(box, mark) > 0.5 for j, mark in enumerate(marks) if j not in groups[i]
        )
        found.append(hit or _outside(box, width, height) > 0.5)
    return found


def name_points(
    points: Sequence[tuple[float, float]],
    names: Sequence[str],
    *,
    width: float,
    height: float,
    font_size: float,
    limit: float,
    obstacles: Sequence[Box] = (),
) -> list[PointLabel]:
    """How each point of one plot is identified: its name beside it, or a key number.

    A point carries its name when the name fits in ``limit`` pixels (it is never cut) and
    has a place clear of the other labels and points; otherwise it carries a number, which
    the chart's key maps to the full name. Points drawn at one place (:data:`COINCIDENT`)
    are all numbered, and one label beside them lists their numbers ("1, 2"), so that no
    point hides another. Names are tried in input order; a name that clashes, or that has a
    place only in the outer ring of positions (where it could be read as another point's),
    is replaced by its number, one at a time (the longest first), until no name clashes.

    Parameters
    ----------
    points : sequence of (x, y)
        Pixel positions in the plot (y down).
    names : sequence of str
        The name of each point.
    width, height, font_size, limit, obstacles
        As for :func:`place_labels`.

    Returns
    -------
    list of PointLabel
        One per point, in input order.
    """
    groups = _groups(points)
    pairs = zip(groups, names, strict=True)
    keyed = [len(group) > 1 or text_width(name, font_size) > limit for group, name in pairs]
    while True:
        texts: list[str | None] = []
        for i, group in enumerate(groups):
            if group[0] != i:
                texts.append(None)
            elif keyed[i]:
                texts.append(", ".join(_NUMBER for _ in group))
            else:
                texts.append(names[i])
        chosen = place_labels(
            points,
            texts,
            width=width,
            height=height,
            font_size=font_size,
            limit=float("inf"),
            obstacles=obstacles,
        )
        boxes: list[Box | None] = [
            None if t is None else _box(x, y, POSITIONS[k], text_width(t, font_size), font_size)
            for (x, y), t, k in zip(points, texts, chosen, strict=True)
        ]
        clashes = _clashes(boxes, points, groups, width, height)
        # A name set apart from its point (the outer ring of positions) could be read as
        # another point's: it takes a number instead.
        clashing = [
            i
            for i, (c, k) in enumerate(zip(clashes, chosen, strict=True))
            if (c or k >= _NEAR) and not keyed[i] and texts[i] is not None
        ]
        if not clashing:
            break
        worst = max(clashing, key=lambda i: (len(names[i]), -i))
        keyed[worst] = True
    return [
        PointLabel(position=k if group[0] == i else -1, keyed=keyed[i], group=group)
        for i, (k, group) in enumerate(zip(chosen, groups, strict=True))
    ]

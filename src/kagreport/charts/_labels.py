"""Placing point labels so that they do not overlap: one of eight positions around each point.

Vega-Lite has no label layout of its own for text marks. The accuracy-against-cost chart names
the setups on its Pareto frontier; :func:`place_labels` picks, for each labelled point, the
side (right, left, above, below, the four diagonals, then the same further out) whose text
box overlaps no label already placed and no point, and stays inside the plot. Positions are
worked out on the figure's paper geometry (pixels of the plot, text of the paper size); on a
screen the plot and its text grow together, so labels apart on paper stay apart there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["POSITIONS", "Box", "Position", "place_labels"]


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

#: Width of a character relative to the font size (Liberation Sans averages about 0.55).
_CHARACTER: Final = 0.56
_POINT: Final = 4.0  # half the side of a point's box, pixels

Box = tuple[float, float, float, float]  # left, top, right, bottom


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
        size = (min(limit, _CHARACTER * font_size * len(text)), font_size)
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

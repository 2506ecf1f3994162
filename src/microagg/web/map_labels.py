"""Where the labels of a scatter plot's points go so that no two overlap (the Sweep page's
risk-utility map): each label tries a few places around its point, in order, and takes the
first that overlaps no point and no label already placed; a label with no free place is
left out (its point keeps its tooltip, and the table below the map lists every run).

This is the greedy fixed-position placement of cartographic point labelling, Imhof's order
of preference (right and above first).

References
----------
Imhof, E. "Positioning names on maps." The American Cartographer 2 (1975), 128-144.
Christensen, J., Marks, J. and Shieber, S. "An empirical study of algorithms for
point-feature label placement." ACM Transactions on Graphics 14 (1995), 203-232.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Box", "Label", "place_labels"]

CHAR_WIDTH = 6.6
"""Width of one character of an 11 px label, in SVG units (a generous sans-serif mean)."""
LINE_HEIGHT = 12.0
"""Height of a label's box."""
_GAP = 3.0
_PLACES = ((1, -1), (1, 1), (-1, -1), (-1, 1), (0, -1), (0, 1))
"""Right-above, right-below, left-above, left-below, above, below (Imhof's order)."""


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle: left, top, right, bottom (SVG coordinates, y down)."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)

    def inside(self, frame: Box) -> bool:
        return (self.left >= frame.left and self.right <= frame.right
                and self.top >= frame.top and self.bottom <= frame.bottom)


@dataclass(frozen=True)
class Label:
    """Where one label's text goes: its anchor point and SVG ``text-anchor``."""

    x: float
    y: float
    anchor: str
    box: Box


def _candidate(x: float, y: float, radius: float, width: float, sx: int, sy: int) -> Label:
    """The label of the point (x, y) on side (sx, sy) of it."""
    offset = radius + _GAP
    left = x + offset if sx > 0 else x - offset - width if sx < 0 else x - width / 2
    top = (y - offset - LINE_HEIGHT if sy < 0 else y + offset) if sx == 0 else \
        (y - LINE_HEIGHT if sy < 0 else y)
    anchor = "start" if sx > 0 else "end" if sx < 0 else "middle"
    text_x = x + offset if sx > 0 else x - offset if sx < 0 else x
    box = Box(left, top, left + width, top + LINE_HEIGHT)
    return Label(round(text_x, 1), round(top + LINE_HEIGHT - 2, 1), anchor, box)


def place_labels(points: Sequence[tuple[float, float, float]], texts: Sequence[str],
                 frame: Box) -> list[Label | None]:
    """A place for each point's label that overlaps no point and no earlier label.

    Parameters
    ----------
    points : sequence of (x, y, radius)
        The points' centres and radii, in SVG units.
    texts : sequence of str
        One label per point.
    frame : Box
        Where labels may go (the plot area and its margins).

    Returns
    -------
    list of Label or None
        One per point, in order; ``None`` where every place was taken.

    Examples
    --------
    >>> frame = Box(0, 0, 200, 100)
    >>> first, second = place_labels([(50, 50, 5), (52, 46, 5)], ["k=3", "k=5"], frame)
    >>> first.anchor, second.anchor      # the second point's right side is taken
    ('start', 'end')
    >>> first.box.overlaps(second.box)
    False
    """
    if len(points) != len(texts):
        raise ValueError(f"place_labels needs one text per point; got {len(points)} points "
                         f"and {len(texts)} texts.")
    taken = [Box(x - r, y - r, x + r, y + r) for x, y, r in points]
    placed: list[Label | None] = []
    for (x, y, radius), text in zip(points, texts, strict=True):
        width = CHAR_WIDTH * len(text)
        found = None
        for sx, sy in _PLACES:
            label = _candidate(x, y, radius, width, sx, sy)
            if label.box.inside(frame) and not any(label.box.overlaps(b) for b in taken):
                found = label
                break
        if found is not None:
            taken.append(found.box)
        placed.append(found)
    return placed

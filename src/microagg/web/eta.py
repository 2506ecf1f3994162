"""The time a grid of runs still needs, from the runs it has measured (the Sweep page's
progress): each run left is expected to take as long as the runs of its own method took so
far, so a slow method later in the grid is not priced at the fast one's rate. Before a method
has finished a run the time left is not known, and the page says so instead of guessing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

__all__ = ["GridClock", "seconds_left"]


def seconds_left(measured: Mapping[str, Sequence[float]], remaining: Sequence[str], *,
                 running: float = 0.0) -> float:
    """Seconds the ``remaining`` runs need, each at the mean of its kind's measured runs.

    Parameters
    ----------
    measured : mapping of kind -> sequence of float
        The seconds of each finished run, by kind (a sweep's method).
    remaining : sequence of str
        The kind of each run not finished yet, the one running first.
    running : float, default=0.0
        Seconds the first of ``remaining`` has run already (taken off its expected time,
        down to 0).

    Returns
    -------
    float
        The estimate, or NaN when a kind of ``remaining`` has no measured run yet.

    Examples
    --------
    >>> seconds_left({"mdav": [1.0, 3.0]}, ["mdav", "mdav"])      # 2 s each
    4.0
    >>> seconds_left({"mdav": [2.0]}, ["mdav", "cdt"])            # cdt not measured yet
    nan
    >>> seconds_left({"cdt": [30.0]}, ["cdt", "cdt"], running=10.0)
    50.0
    """
    total = 0.0
    for number, kind in enumerate(remaining):
        runs = measured.get(kind, ())
        if not runs:
            return math.nan
        expected = sum(runs) / len(runs)
        total += max(expected - running, 0.0) if number == 0 else expected
    return total


class GridClock:
    """Times a grid's runs as they start, and prices the ones left (:func:`seconds_left`).

    Parameters
    ----------
    kinds : sequence of str
        The kind (method) of each run of the grid, in the order they run.
    clock : callable, default=time.perf_counter
        Seconds, monotonic.

    Examples
    --------
    >>> ticks = iter([0.0, 1.0, 3.0])
    >>> grid = GridClock(["md", "md", "md"], clock=lambda: next(ticks))
    >>> grid.starting(0), grid.starting(1), grid.starting(2)   # runs of 1 s, then 2 s
    (nan, 2.0, 1.5)
    """

    def __init__(self, kinds: Sequence[str], *,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.kinds = list(kinds)
        self._clock = clock
        self._measured: dict[str, list[float]] = {}
        self._last: tuple[int, float] | None = None

    def starting(self, number: int) -> float:
        """Run ``number`` starts now (the one before it has ended): the seconds left for it
        and the rest of the grid, NaN while one of their methods is not measured."""
        now = self._clock()
        if self._last is not None:
            previous, began = self._last
            self._measured.setdefault(self.kinds[previous], []).append(now - began)
        self._last = (number, now)
        return seconds_left(self._measured, self.kinds[number:])

"""How long exact and blocked MDAV take: the one calibrated cost model.

Exact MDAV forms two groups per step and each step sweeps the ``m`` records still
ungrouped, so its time grows as ``n^2 / k``; each sweep costs a fixed part per record plus
a part per feature. Blocked MDAV (``--blocking kd``) runs exact MDAV inside blocks of at most
``block_size`` records, so its time grows as ``n * block_size / k``. The constants were fitted
by ``benchmarks/bench_sizing.py`` on the reference machine (2 cores, x86_64, numba's default
threads, not loaded); on a busy or smaller machine runs take longer, so estimates are rounded
and said to be "about". They are used for

* the size guard of ``microagg anonymize`` (:func:`guard_refusal`): above
  :data:`GUARD_SECONDS` of estimated exact MDAV, with no method, blocking or engine chosen,
  the command refuses to start and prints both estimates and the flags that decide;
* the time left shown while exact MDAV runs (:func:`remaining_seconds`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BLOCKED_SECONDS", "EXACT_SECONDS", "FEATURE_OFFSET", "GUARD_SECONDS", "Estimate",
           "estimate", "format_duration", "remaining_seconds"]

EXACT_SECONDS = 1.0e-10
"""Seconds of exact MDAV per unit of ``n^2 (p + FEATURE_OFFSET) / k``. Fitted on 10,000 to
40,000 records of 3 to 30 standard normal columns, k = 5 and 10 (within 30 % of each)."""
BLOCKED_SECONDS = 9.0e-11
"""Seconds of blocked MDAV per unit of ``n * block_size * (p + FEATURE_OFFSET) / k``
(200,000 records, kd blocks of 10,000; the block tree's splits included)."""
FEATURE_OFFSET = 16.0
"""The cost of a record in a sweep that does not depend on its features, in features."""
GUARD_SECONDS = 120.0
"""Estimated exact MDAV above this refuses to start unless a method, blocking or engine is
chosen: past two minutes a silent command looks hung, and ``--blocking kd`` is then at least
ten times faster (10^6 x 10 at k = 5: about 9 minutes exact against 5 seconds blocked)."""


@dataclass(frozen=True)
class Estimate:
    """Estimated seconds of exact and of blocked MDAV for one input."""

    n_samples: int
    n_features: int
    k: int
    block_size: int
    exact: float
    blocked: float

    @property
    def too_slow(self) -> bool:
        """Whether exact MDAV is past :data:`GUARD_SECONDS` and blocking would be faster."""
        return self.exact > GUARD_SECONDS and self.blocked < self.exact


def estimate(n_samples: int, n_features: int, k: int, *, block_size: int = 10_000
             ) -> Estimate:
    """Estimate exact and blocked MDAV on ``n_samples`` x ``n_features`` records.

    Parameters
    ----------
    n_samples, n_features : int
        Size of the quasi-identifier matrix.
    k : int
        Minimum group size.
    block_size : int, default=10_000
        Largest block of blocked MDAV.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> e = estimate(1_000_000, 10, 5)
    >>> format_duration(e.exact), format_duration(e.blocked), e.too_slow
    ('about 9 min', 'about 5 s', True)
    >>> estimate(1_080, 13, 5).too_slow
    False
    """
    width = n_features + FEATURE_OFFSET
    exact = EXACT_SECONDS * float(n_samples) ** 2 * width / k
    blocked = (exact if n_samples <= block_size  # one block: exact MDAV
               else BLOCKED_SECONDS * float(n_samples) * block_size * width / k)
    return Estimate(n_samples, n_features, k, block_size, exact, blocked)


def remaining_seconds(elapsed: float, grouped: int, n_samples: int, *,
                      quadratic: bool = True) -> float | None:
    """Seconds a partition still needs, from the time it took to group ``grouped`` records.

    Exact MDAV (``quadratic``): each step costs in proportion to the records still
    ungrouped, so grouping the first ``g`` of ``n`` records costs ``n^2 - (n - g)^2`` and the
    rest ``(n - g)^2`` units. A run block by block (``quadratic=False``): blocks of about
    the same size cost about the same, so the time left is proportional to the records left.
    ``None`` before anything is grouped.

    Examples
    --------
    >>> remaining_seconds(75.0, 500, 1_000)  # half the records: a quarter of the work left
    25.0
    >>> remaining_seconds(75.0, 500, 1_000, quadratic=False)  # blocks: half of it left
    75.0
    """
    left = n_samples - grouped
    if not quadratic:
        return None if grouped <= 0 else elapsed * left / grouped
    done = float(n_samples) ** 2 - float(left) ** 2
    if grouped <= 0 or done <= 0:
        return None
    return elapsed * float(left) ** 2 / done


def format_duration(seconds: float) -> str:
    """``about 40 s``, ``about 6 min``, ``about 2.5 h``: rounded, as an estimate should be.

    Examples
    --------
    >>> [format_duration(s) for s in (0.2, 42, 359, 9000)]
    ['about 1 s', 'about 42 s', 'about 6 min', 'about 2.5 h']
    """
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"

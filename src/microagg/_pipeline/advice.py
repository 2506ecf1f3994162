"""What a release owes its user beyond privacy: too-large groups, near-total loss, time budgets."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["LARGE_GROUPS", "NEAR_TOTAL_LOSS", "low_utility_message", "time_budget"]

LARGE_GROUPS = 10
"""Groups are "far larger than k" when their mean size exceeds ``LARGE_GROUPS * k``: a
fixed-size method's groups stay below 2k, so this is five times that bound."""

NEAR_TOTAL_LOSS = 0.9
"""A loss of at least 90 % (information loss SSE/SST, or NCP) is "near total": the published
values say little more than the column means or the whole ranges."""


def low_utility_message(labels: NDArray[np.intp], k: int, loss: float | None, *,
                        loss_name: str, method: str, alternative: str | None,
                        cause: str | None = None, sensitive: bool = False) -> str | None:
    """The :class:`~microagg.exceptions.LowUtilityWarning` a release owes, or ``None``.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        The release's groups.
    k : int
        The required group size.
    loss : float or None
        The release's loss as a fraction (1.0 = total), or ``None`` when not measured.
    loss_name : str
        What ``loss`` is, for the message ("information loss", "NCP").
    method : str
        The method that made the groups.
    alternative : str or None
        A method keeping groups between k and 2k - 1, named when ``method`` is not one.
    cause : str or None, default=None
        What made the loss, with the setting that would lower it, when it is not the method
        (groups merged by l-diversity, the noise of an epsilon release).
    sensitive : bool, default=False
        Whether ``method`` also protects the sensitive values (then the advice says how
        ``alternative`` can: with l-diversity).

    Examples
    --------
    >>> low_utility_message(np.repeat([0, 1], 60), 5, 0.75, loss_name="NCP",
    ...                     method="cdt", alternative="mdav")[:69]
    'The release keeps little information: its 2 groups average 60 records'
    """
    sizes = np.bincount(labels)
    sizes = sizes[sizes > 0]
    mean = float(sizes.mean())
    large = mean > LARGE_GROUPS * k
    total = loss is not None and loss >= NEAR_TOTAL_LOSS
    if not (large or total):
        return None
    found = []
    if large:
        found.append(f"its {sizes.size:,} groups average {mean:,.0f} records, {mean / k:,.0f} "
                     f"times k={k} (largest {int(sizes.max()):,}; more than {LARGE_GROUPS} "
                     "times k counts as far larger)")
    if total:
        found.append(f"its {loss_name} is {100 * float(loss or 0.0):.1f}% (at least "
                     f"{100 * NEAR_TOTAL_LOSS:.0f}% counts as near total)")
    n = int(sizes.sum())
    if n < 2 * k:
        advice = f"With k={k}, the {n:,} records fit in one group only; a smaller k keeps more."
    elif cause:
        advice = cause
    elif alternative:
        advice = (f"Method {method!r} does not keep groups near k; method {alternative!r} "
                  "forms groups of k to 2k - 1 records and would serve better"
                  + (" (with l-diversity, l=..., to keep each group's sensitive values "
                     "diverse)." if sensitive else "."))
    else:
        advice = "A smaller k keeps more."
    return f"The release keeps little information: {' and '.join(found)}. {advice}"


def time_budget(method: str, params: Mapping[str, Any], seconds: float, n_samples: int,
                *, given: bool, phased: bool = False
                ) -> tuple[Mapping[str, Any] | None, str | None]:
    """The ``Release.params["time_budget"]`` entry of a method with a ``time_limit``, and the
    note owed when the partition can depend on the machine's speed: when the budget was
    spent, and always for a method whose phases stop at shares of it (``phased``: colgen,
    whose rounds of parts end at 60 % of the budget and whose last phase searches to its
    end; two runs with one ``random_state`` can then differ while the budget is not spent).

    Examples
    --------
    >>> record, note = time_budget("mdav-ls", {"time_limit": 2.0}, 2.5, 100, given=False)
    >>> record["reached"], note.split(":")[0]
    (True, "Method 'mdav-ls' stopped at its default time budget of 2 s for 100 records")
    >>> record, note = time_budget("colgen", {"time_limit": 20.0}, 12.2, 1080, given=True,
    ...                            phased=True)
    >>> record["reached"], record["phased"], note.split(" (")[0]
    (False, True, "Method 'colgen' stops its phases at shares of its time budget of 20 s")
    """
    limit = params.get("time_limit")
    if limit is None or isinstance(limit, str):
        return None, None
    reached = seconds >= float(limit)
    record = MappingProxyType({
        "seconds": float(limit),
        "default": not given,
        "reached": reached,
        "spent": round(float(seconds), 3),
        "phased": bool(phased),
    })
    which = "time budget" if given else "default time budget"
    if phased:
        return record, (
            f"Method {method!r} stops its phases at shares of its {which} of {float(limit):g} s "
            f"({n_samples:,} records, {float(seconds):.1f} s spent): the partition can "
            "depend on this machine's speed, and two runs with the same random_state can "
            "differ. A longer budget lets more of its phases end by themselves "
            "(method_params={'time_limit': seconds}, CLI: --refine SECONDS).")
    if not reached:
        return record, None
    note = (f"Method {method!r} stopped at its {which} of {float(limit):g} s for "
            f"{n_samples:,} records: the partition depends on this machine's speed. Give it "
            "more time with method_params={'time_limit': seconds} (CLI: --refine SECONDS), or "
            "time_limit=None for a reproducible run of all its rounds.")
    return record, note

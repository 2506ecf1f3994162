"""The homogeneity warning: classes whose records all share one sensitive value.

k-anonymity hides who is who among at least k records, not what they have in common: when
every record of a class of identical published quasi-identifiers has the same diagnosis,
whoever places a person in that class learns the diagnosis. The figure is measured once, with
the release's metrics (``Release.metrics["homogeneity"]``, :func:`~microagg.metrics.homogeneity`);
this step only words it as a :class:`~microagg.exceptions.HomogeneityWarning`. It does not
change the verdict: k-anonymity does not promise against it, and a required l is checked
(and fails) on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..exceptions import HomogeneityWarning
from .notes import warn_user

__all__ = ["homogeneity_message", "warn_homogeneity"]


def homogeneity_message(column: str, figures: Mapping[str, Any]) -> str:
    """The warning for sensitive ``column`` (``figures``: :func:`~microagg.metrics.homogeneity`).

    Examples
    --------
    >>> print(homogeneity_message("diagnosis", {"homogeneous_classes": 2, "classes": 5,
    ...       "homogeneous_records": 6, "homogeneous_share": 0.3}))  # doctest: +NORMALIZE_WHITESPACE
    2 of 5 classes (6 records, 30.0% of the file) share one value of the sensitive column
    'diagnosis': whoever places a person in such a class learns that value. k-anonymity does
    NOT protect against this (homogeneity); ask for l-diversity (-l 2 / l=2) so that every
    class holds at least two values.
    """
    return (f"{int(figures['homogeneous_classes']):,} of {int(figures['classes']):,} classes "
            f"({int(figures['homogeneous_records']):,} records, "
            f"{100 * float(figures['homogeneous_share']):.1f}% of the file) share one value of "
            f"the sensitive column {column!r}: whoever places a person in such a class learns "
            "that value. k-anonymity does NOT protect against this (homogeneity); ask for "
            "l-diversity (-l 2 / l=2) so that every class holds at least two values.")


def warn_homogeneity(metrics: Mapping[str, Any], notes: list[str]) -> None:
    """A :class:`HomogeneityWarning` (raised, and added to ``notes``) per sensitive column
    whose ``metrics["homogeneity"]`` has homogeneous classes."""
    measured = metrics.get("homogeneity")
    if not isinstance(measured, Mapping):
        return
    for col, figures in measured.items():
        if int(figures.get("homogeneous_classes", 0)) > 0:
            warn_user(notes, homogeneity_message(str(col), figures), HomogeneityWarning)

"""The columns a release publishes unchanged on purpose (``params["keep"]``): one rule for the
release and for the review of its files.

A column published as it is, without a masking role, is refused when the Request is built
if it looks like a direct identifier (:func:`~.unmasked.check_unmasked_identifiers`), if it
breaks k by itself (:func:`~.roleless.check_roleless_columns`) or, for the sampling weight,
if it re-links households (:func:`~.household_relink.check_relinking_weight`), unless the
user keeps it; the columns kept that way are recorded and the verdict names them
(:func:`~.verdict.decide`: "identifier-like column(s) published on purpose").
:func:`kept_on_purpose` runs the three checks in that order for both: the release with the
user's ``keep``, the review of a published file with every column the file publishes as
kept (it was published), so that both record the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from .household_relink import check_relinking_weight
from .roleless import check_roleless_columns
from .unmasked import check_unmasked_identifiers

if TYPE_CHECKING:  # pragma: no cover
    from ..steps import Plan

__all__ = ["kept_on_purpose", "weight_treated"]


def weight_treated(plan: Plan | None, weight: str | None) -> bool:
    """Whether a step of ``plan`` treats the sampling weight (the household step's
    ``weight="microaggregate"`` or ``"round"``, or a step over the weight's column): the
    weight is then not refused for re-linking households when the Request is built (the
    release measures re-linking on the published table instead)."""
    return plan is not None and any(step.treats_weight or weight in step.columns
                                    for step in plan.steps)


def kept_on_purpose(df: pd.DataFrame, as_is: Sequence[str], keep: Sequence[str], *,
                    weight: str | None, household: str | None, k: int | None,
                    whole: bool = True, treated: bool = False) -> tuple[str, ...]:
    """The columns published unchanged on purpose, or the refusal of one that is not kept.

    Parameters
    ----------
    df : DataFrame
        The table (an engine that reads the file itself: its first rows, ``whole=False``).
        It holds the columns ``as_is`` and, with a household, the household id of each row.
    as_is : sequence of str
        The columns published unchanged (no quasi-identifier, sensitive or identifier role).
    keep : sequence of str
        The columns the user publishes unchanged on purpose (never refused).
    weight, household : str or None
        The sampling weight and the household id columns (``None``: no such role).
    k : int or None
        The k the release is asked for; ``None`` (a review that knows none): no column is
        judged by the k it breaks.
    whole : bool, default=True
        Whether ``df`` is the whole table; otherwise only the identifier-like columns are
        judged (on the rows given).
    treated : bool, default=False
        Whether a step treats the weight (:func:`weight_treated`): it is then not judged
        for re-linking households here.

    Returns
    -------
    tuple of str
        The identifier-like columns kept, then the kept ones that break k by themselves
        (the weight aside), then the weight when it re-links households and is kept: the
        release's ``params["keep"]``.

    Raises
    ------
    SchemaError
        The first of the three refusals that applies, naming each column and the ways out.

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30] * 4, "w": [1.0, 1.0, 2.0, 3.0], "h": [1, 1, 2, 3]})
    >>> kept_on_purpose(df, ["w"], ["w"], weight="w", household="h", k=2)
    ('w',)
    """
    kept = check_unmasked_identifiers(df, as_is, keep, whole=whole)
    if not whole:
        return kept
    roleless = [c for c in as_is if c != weight and c not in kept]
    breaking = () if k is None else check_roleless_columns(df, roleless, keep, k)
    relinking = () if treated else check_relinking_weight(df, weight, household, keep)
    return (*kept, *breaking, *relinking)

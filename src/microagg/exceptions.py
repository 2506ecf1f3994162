"""Exceptions and warnings raised by microagg."""

from __future__ import annotations

__all__ = [
    "ConstantColumnWarning",
    "ContinuousKeyWarning",
    "HomogeneityWarning",
    "InternalError",
    "LabelsDroppedWarning",
    "LowUtilityWarning",
    "PrivacyLeakWarning",
    "PrivacyViolationError",
    "SchemaError",
    "SurveyWeightWarning",
]


class SchemaError(ValueError):
    """The input table does not fit the requested roles or types (names the columns)."""


class PrivacyViolationError(RuntimeError):
    """A release failed its own guarantee check; nothing was returned or written.

    This always indicates a bug in microagg: the partitioners promise groups of at least k,
    and the release re-derives the achieved level from the published data before returning.
    """


class InternalError(RuntimeError):
    """An internal invariant broke. This is a bug in microagg; please report it."""


class PrivacyLeakWarning(UserWarning):
    """A choice weakens the privacy that the user may believe they have.

    Examples: a quasi-identifier that is constant (so it cannot be masked and still
    identifies nothing), or published columns whose combination is rarer than k.
    """


class HomogeneityWarning(PrivacyLeakWarning):
    """Classes of identical published quasi-identifiers in which every record has the same
    sensitive value: whoever places a person in such a class learns that value.
    k-anonymity does not protect against this; l-diversity (``l=2``) does."""


class ConstantColumnWarning(UserWarning):
    """A quasi-identifier is constant; it is excluded from the distances."""


class LabelsDroppedWarning(UserWarning):
    """Value labels read from a Stata or SPSS file were not written back: the column's
    published values are no longer its labelled codes (a group mean of codes 1 and 2 is not
    "male"), or the output format cannot hold them. The variable label is kept.
    """


class LowUtilityWarning(UserWarning):
    """A release keeps little of the data: its groups are far larger than k, or its
    information loss is near total. The message names a method or setting that would serve.
    """


class SurveyWeightWarning(UserWarning):
    """Sampling weights that cannot estimate a population (their sum is below the sample
    size): the population frequencies and the individual risk built on them mislead."""


class ContinuousKeyWarning(UserWarning):
    """A key variable of a frequency-based risk measure is numeric with thousands of distinct
    values: nearly every record is unique on it, so the risk is overstated. Key variables are
    categorical; group a continuous variable (age bands, income classes) first."""

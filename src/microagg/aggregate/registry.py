"""The aggregator registry entry: what an aggregation does, whether it is noisy, the warning
it owes the user and the verifier that re-checks its promise on the output.

The entries themselves are :data:`microagg.aggregate.AGGREGATORS`; a caller asks an entry
(``entry.noisy(params)``, ``entry.warning(k, sizes=..., params=...)``,
``entry.verify(values, masked, labels, columns)``) instead of comparing its name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Constraint, validate_params
from .._base.scaling import safe_exponents, to_safe_range
from .._base.validation import RandomState
from .._runtime.lazy import LoadedOnRead
from ..exceptions import PrivacyViolationError
from .synthetic import check_synthetic_moments

__all__ = [
    "Aggregator",
    "check_noise_within_groups",
    "fuzzy_random_warning",
    "noise_warning",
    "synthetic_warning",
    "verify_fuzzy_representatives",
    "verify_synthetic_moments",
]

Verifier = Callable[[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp],
                     tuple[str, ...]], None]
"""``(values, masked, labels, columns) -> None``, raising when the promise does not hold."""

WarningText = Callable[[str, int, "NDArray[np.intp] | None"], str]
"""``(name, k, sizes) -> message`` of the :class:`~microagg.exceptions.PrivacyLeakWarning`."""


def noise_warning(name: str, k: int, sizes: NDArray[np.intp] | None = None) -> str:
    """The warning of a noisy aggregation that draws values inside each group's range.

    Examples
    --------
    >>> noise_warning("rho", 3)[:60]
    "Aggregation 'rho' gives every record its own noisy values: t"
    """
    return (f"Aggregation {name!r} gives every record its own noisy values: the "
            f"published quasi-identifiers are not k-anonymous (the noise is drawn over "
            f"groups of at least {k}), and bounded data-dependent noise is not "
            "differential privacy.")


def synthetic_warning(name: str, k: int, sizes: NDArray[np.intp] | None = None) -> str:
    """The warning of ``synthetic``; with the group ``sizes``, pairs are counted too
    (a pair with a given mean and covariance is the original pair).

    Examples
    --------
    >>> synthetic_warning("synthetic", 2, np.array([2, 3, 2])).endswith("use k >= 3.")
    True
    """
    msg = (f"Aggregation 'synthetic' replaces every group of at least {k} records by "
           "synthetic records with the group's exact mean and covariance (hybrid "
           "data): the published quasi-identifiers are not k-anonymous and this is not "
           "differential privacy.")
    if sizes is not None and len(sizes) and sizes.min() <= 2:
        msg += (f" {int(np.sum(sizes == 2))} groups have 2 records: a pair with a "
                "given mean and covariance is the original pair, so they are "
                "published unchanged (possibly swapped); use k >= 3.")
    return msg


def fuzzy_random_warning(name: str, k: int, sizes: NDArray[np.intp] | None = None) -> str:
    """The warning of ``fuzzy-random`` (a record may draw another group's mean).

    Examples
    --------
    >>> "not 3-anonymous" in fuzzy_random_warning("fuzzy-random", 3)
    True
    """
    return (f"Aggregation 'fuzzy-random' gives each record the mean of a group drawn by "
            f"its fuzzy memberships, not always its own: the published "
            f"quasi-identifiers are not {k}-anonymous (a mean may be drawn by fewer "
            f"than {k} records; see checks['k_anonymity']) and this is not "
            "differential privacy.")


def check_noise_within_groups(values: NDArray[np.float64], masked: NDArray[np.float64],
                              labels: NDArray[np.intp], columns: Sequence[str] = ()) -> None:
    """Every noisy value must lie in its group's [min, max] on the original data.

    Raises :class:`~microagg.exceptions.PrivacyViolationError` naming the columns (their
    position when ``columns`` is empty).

    Examples
    --------
    >>> values = np.array([[1.0], [3.0]])
    >>> check_noise_within_groups(values, np.array([[2.0], [2.5]]), np.array([0, 0]), ("age",))
    >>> check_noise_within_groups(values, np.array([[2.0], [4.0]]), np.array([0, 0]), ("age",))
    Traceback (most recent call last):
    ...
    microagg.exceptions.PrivacyViolationError: 1 published values of 'age' lie outside ...
    """
    from .aggregators import group_ranges  # aggregate.py builds the entries from this module

    lo, hi, _ = group_ranges(values, labels)
    tol = 1e-9 * np.maximum(1.0, np.abs(values).max(axis=0))
    outside = (masked < lo[labels] - tol) | (masked > hi[labels] + tol)
    if outside.any():
        names = tuple(columns) or tuple(str(j) for j in range(values.shape[1]))
        cols = [names[j] for j in np.flatnonzero(outside.any(axis=0))]
        raise PrivacyViolationError(
            f"{int(outside.sum())} published values of {', '.join(map(repr, cols))} lie "
            "outside their group's range. Nothing was released. This is a bug in microagg."
        )


def verify_synthetic_moments(values: NDArray[np.float64], masked: NDArray[np.float64],
                             labels: NDArray[np.intp], columns: tuple[str, ...] = ()) -> None:
    """:func:`~microagg.aggregate.synthetic.check_synthetic_moments` with the verifier signature."""
    check_synthetic_moments(values, masked, labels)


def verify_fuzzy_representatives(values: NDArray[np.float64], masked: NDArray[np.float64],
                                 labels: NDArray[np.intp], columns: tuple[str, ...] = ()
                                 ) -> None:
    """:func:`~microagg.partition.fuzzy.check_fuzzy_representatives` with the verifier signature."""
    from ..partition.fuzzy import (
        check_fuzzy_representatives,  # the domain package, loaded when used
    )

    check_fuzzy_representatives(values, masked, labels)


@dataclass(frozen=True)
class Aggregator:
    """A registered aggregator: the function and what a release needs to know about it.

    Calling the entry checks the parameters (:meth:`check_params`) and runs the function:
    ``entry(values, labels, *, random_state=None, **params) -> masked``. The function may be
    given as ``"module:function"``, imported on the first read of :attr:`function`.
    """

    name: str
    function: LoadedOnRead[Callable[..., NDArray[np.float64]]] = (
        LoadedOnRead(required=True))  # noqa: RUF009 - a descriptor, not a shared value
    # the type checker takes the descriptor for a default; the class has none, so the field
    # below stays positional
    summary: str  # type: ignore[misc]
    params: Mapping[str, Any] = field(default_factory=dict)
    """Keyword parameters and their defaults."""
    constraints: Mapping[str, tuple[Constraint, ...]] = field(default_factory=dict)
    """The allowed forms of each parameter (see :mod:`microagg._base.constraints`)."""
    noisy_when: Callable[[Mapping[str, Any]], bool] | None = None
    """Given the full parameters, whether each record gets its own values (no syntactic
    k-anonymity); ``None``: never."""
    warning_text: WarningText = noise_warning
    """The :class:`~microagg.exceptions.PrivacyLeakWarning` message owed when noisy."""
    verifier: Verifier | None = None
    """Re-checks the aggregator's promise on its output; ``None``: nothing beyond the
    k-anonymity of identical group rows, which the release checks."""

    @property
    def may_be_noisy(self) -> bool:
        """Whether some parameters make it noisy (``rho`` counts, even at rho=0)."""
        return self.noisy_when is not None

    def check_params(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The defaults updated by ``params``, checked: an unknown name raises TypeError
        listing the allowed ones; a wrong type TypeError, a wrong value ValueError."""
        given = dict(params or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            allowed = ", ".join(sorted(self.params)) or "none"
            raise TypeError(f"Unknown parameter(s) {', '.join(unknown)} for aggregation "
                            f"{self.name!r}. Its parameters: {allowed}.")
        validate_params(given, self.constraints, caller=self.name)
        return {**self.params, **given}

    def noisy(self, params: Mapping[str, Any] | None = None) -> bool:
        """Whether the aggregation with ``params`` (defaults filled in) publishes per-record
        values: the published quasi-identifiers are then not k-anonymous."""
        return self.noisy_when is not None and self.noisy_when({**self.params, **(params or {})})

    def warning(self, k: int, *, sizes: ArrayLike | None = None,
                params: Mapping[str, Any] | None = None) -> str | None:
        """The privacy warning owed for a release at ``k`` (``None`` when not noisy).

        ``sizes`` are the group sizes (``np.bincount(labels)``, or the sizes of every
        attribute group's groups, concatenated); ``synthetic`` needs them to count pairs.
        """
        if not self.noisy(params):
            return None
        return self.warning_text(self.name, k, None if sizes is None else np.asarray(sizes))

    def verify(self, values: NDArray[np.float64], masked: NDArray[np.float64],
               labels: NDArray[np.intp], columns: Sequence[str] = ()) -> None:
        """Re-check the promise of a noisy aggregation on its output (values on the original
        scale); raises :class:`~microagg.exceptions.PrivacyViolationError` or
        :class:`~microagg.exceptions.InternalError`. A no-op for deterministic entries."""
        if self.verifier is None:
            return
        safe = safe_exponents(values)  # group sums of values near 1e308 would overflow
        self.verifier(to_safe_range(values, safe), to_safe_range(masked, safe), labels,
                      tuple(columns))

    def __call__(self, values: ArrayLike, labels: ArrayLike, *,
                 random_state: RandomState = None, **params: Any) -> NDArray[np.float64]:
        return self.function(values, labels, random_state=random_state,
                             **self.check_params(params))

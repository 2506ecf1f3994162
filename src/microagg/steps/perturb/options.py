"""The options of the perturbative steps (PRAM, noise addition, rank swapping, shuffling):
frozen dataclasses with named fields, normalized from Python values or the CLI's text.

Standard library only: the plan imports these classes to parse a schema or a ``--step``
without loading numpy or pandas. Each subclasses :class:`~microagg.steps.StepOptions` (its
record, its columns); each field's attribute docstring is the help every face shows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from .._options import StepOptions, as_bool, as_float, as_int, as_names

__all__ = ["Noise", "Pram", "RankSwap", "Shuffle"]

ROW_SUM_TOLERANCE = 1e-9
"""How far from 1 a row of a user transition matrix may sum (floating-point slack only)."""

_set = object.__setattr__  # frozen dataclasses: every option is normalized once, here








def _matrices(value: Any, *, step: str) -> Mapping[str, Mapping[str, Mapping[str, float]]]:
    """User transition matrices ``{column: {from: {to: probability}}}`` (JSON in text),
    each row non-negative and summing to 1."""
    option = "matrix"
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as error:
            raise ValueError(f"The {option!r} option of step {step!r} must be a JSON object "
                             f"such as '{{\"sex\": {{\"m\": {{\"m\": 0.9, \"f\": 0.1}}, "
                             f"\"f\": {{\"m\": 0.1, \"f\": 0.9}}}}}}'. Got {value!r} "
                             f"({error.msg}).") from None
    if not isinstance(value, Mapping):
        raise TypeError(f"The {option!r} option of step {step!r} must map each column to "
                        f"its matrix {{from: {{to: probability}}}}. Got {value!r} instead.")
    frozen: dict[str, Mapping[str, Mapping[str, float]]] = {}
    for column, rows in value.items():
        if not isinstance(rows, Mapping) or not rows:
            raise TypeError(f"The {option!r} option of step {step!r}: the matrix of column "
                            f"{column!r} must map each category to {{to: probability}}. Got "
                            f"{rows!r} instead.")
        labels = {str(k) for k in rows}
        frozen_rows: dict[str, Mapping[str, float]] = {}
        for source, row in rows.items():
            frozen_rows[str(source)] = _matrix_row(row, labels, column=column,
                                                   source=str(source), step=step)
        frozen[str(column)] = MappingProxyType(frozen_rows)
    return MappingProxyType(frozen)


def _matrix_row(row: Any, labels: set[str], *, column: str, source: str,
                step: str) -> Mapping[str, float]:
    """One row of a user matrix: probabilities in [0, 1] to known categories, sum 1."""
    where = f"The 'matrix' option of step {step!r}, column {column!r}, row {source!r}"
    if not isinstance(row, Mapping):
        raise TypeError(f"{where} must map categories to probabilities. Got {row!r}.")
    out: dict[str, float] = {}
    for target, p in row.items():
        if str(target) not in labels:
            raise ValueError(f"{where} moves to {target!r}, which has no row of its own; the "
                             f"matrix must be square over {sorted(labels)}.")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"{where}: the probability of {target!r} must be a number in "
                             f"[0, 1]. Got {p!r} instead.")
        out[str(target)] = float(p)
    total = math.fsum(out.values())
    if abs(total - 1.0) > ROW_SUM_TOLERANCE:
        raise ValueError(f"{where} sums to {total:.12g}; each row of a transition matrix must "
                         f"sum to 1 (within {ROW_SUM_TOLERANCE:g}).")
    return MappingProxyType(out)


@dataclass(frozen=True)
class Pram(StepOptions):
    """PRAM, the post-randomization method, on categorical columns: each value moves to
    another category with the probabilities of a transition matrix (Gouweleeuw, Kooiman,
    Willenborg & de Wolf 1998, J. Off. Stat. 14(4); sdcMicro ``pram``).

    Parameters
    ----------
    variables : str or sequence of str
        The categorical columns to perturb, each with its own matrix.
    pd : float, default=0.8
        In (0, 1]: the smallest diagonal of the base matrix P (sdcMicro's ``pd``).
    alpha : float, default=0.5
        In [0, 1]: the weight of the invariant matrix R against the identity,
        ``alpha * R + (1 - alpha) * I`` (sdcMicro's ``alpha``); used when ``invariant``.
    matrix : mapping, optional
        User base matrices ``{column: {from: {to: probability}}}``, replacing the ``pd``
        construction for those columns.
    invariant : bool, default=True
        Make the matrix invariant (the expected frequencies equal the observed ones).
    random_diagonal : bool, default=True
        Draw each diagonal of P uniformly in ``[pd, 1]`` (sdcMicro); ``False`` sets it to
        ``pd`` exactly (the matrix is then a function of the data, and re-derivable).
    """

    name: ClassVar[str] = "pram"
    column_types: ClassVar[frozenset[str]] = frozenset({"categorical", "ordinal"})
    variables: tuple[str, ...]
    """The categorical columns to perturb, each with its own matrix."""
    pd: float = 0.8
    """In (0, 1]: the smallest diagonal of the base matrix P (sdcMicro's pd)."""
    alpha: float = 0.5
    """In [0, 1]: the weight of the invariant matrix R against the identity."""
    matrix: Mapping[str, Mapping[str, Mapping[str, float]]] = field(
        default_factory=lambda: MappingProxyType({}))
    """User base matrices {column: {from: {to: probability}}} (a JSON object), replacing
    the pd construction for those columns."""
    invariant: bool = True
    """Make the matrix invariant (expected frequencies equal the observed ones)."""
    random_diagonal: bool = True
    """Draw each diagonal of P uniformly in [pd, 1] (sdcMicro); false: exactly pd."""

    def __post_init__(self) -> None:
        _set(self, "variables", as_names(self.variables, step=self.name, option="variables"))
        _set(self, "pd", as_float(self.pd, step=self.name, option="pd", low=0.0, high=1.0,
                                 low_open=True))
        _set(self, "alpha", as_float(self.alpha, step=self.name, option="alpha", low=0.0,
                                    high=1.0, low_open=False))
        _set(self, "matrix", _matrices(self.matrix, step=self.name))
        unknown = sorted(set(self.matrix) - set(self.variables))
        if unknown:
            raise ValueError(f"The 'matrix' option of step {self.name!r} has matrices for "
                             f"{unknown}, which are not among variables {list(self.variables)}.")
        for option in ("invariant", "random_diagonal"):
            _set(self, option, as_bool(getattr(self, option), step=self.name, option=option))

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes."""
        return self.variables


NOISE_METHODS = ("additive", "correlated", "romm", "multiplicative")
_NOISE_MIN_COLUMNS: Mapping[str, int] = MappingProxyType({"correlated": 2})
"""Methods that need several columns (the noise follows their covariance)."""


@dataclass(frozen=True)
class Noise(StepOptions):
    """Noise addition on numeric columns (Brand 2002, "Microdata protection through noise
    addition", LNCS 2316; Ting, Fienberg & Trottini 2008 for ROMM; sdcMicro ``addNoise``).

    Parameters
    ----------
    variables : str or sequence of str
        The numeric columns to perturb.
    method : {"additive", "correlated", "romm", "multiplicative"}, default="additive"
        ``additive``: independent normal noise per column; ``correlated``: normal noise
        whose covariance is ``noise`` times the columns' covariance; ``romm``: random
        orthogonal matrix masking in blocks of ``block_size`` records (means and covariance
        kept exactly); ``multiplicative``: ``x * (1 + e)``.
    noise : float, default=0.1
        A **variance** ratio, never a standard deviation: ``additive``/``correlated``: the
        noise variance as a share of each column's variance (0.1: noise SD = 0.316 x SD);
        ``multiplicative``: the variance of ``e``; ``romm``: the target share, reached to
        first order (small ``noise``); the achieved share is in the details. In (0, 10].
    block_size : int, default=100
        ``romm`` only: the records rotated together (>= 3).
    """

    name: ClassVar[str] = "noise"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    variables: tuple[str, ...]
    """The numeric columns to perturb."""
    method: str = "additive"
    """additive, correlated, romm or multiplicative."""
    noise: float = 0.1
    """In (0, 10]: a variance ratio (the noise variance as a share of each column's)."""
    block_size: int = 100
    """romm only: the records rotated together (>= 3)."""

    def __post_init__(self) -> None:
        _set(self, "variables", as_names(self.variables, step=self.name, option="variables"))
        method = self.method.strip().lower() if isinstance(self.method, str) else self.method
        if method not in NOISE_METHODS:
            raise ValueError(f"The 'method' option of step {self.name!r} must be one of "
                             f"{', '.join(NOISE_METHODS)}. Got {self.method!r} instead.")
        _set(self, "method", method)
        _set(self, "noise", as_float(self.noise, step=self.name, option="noise", low=0.0,
                                    high=10.0, low_open=True))
        _set(self, "block_size", as_int(self.block_size, step=self.name,
                                          option="block_size", low=3))
        least = _NOISE_MIN_COLUMNS.get(method, 1)
        if len(self.variables) < least:
            raise ValueError(f"The 'variables' option of step {self.name!r} must name at "
                             f"least {least} columns for method {method!r} (the noise "
                             f"follows their covariance). Got {list(self.variables)}.")

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes."""
        return self.variables


@dataclass(frozen=True)
class RankSwap(StepOptions):
    """Rank swapping: each value is exchanged with another whose rank is at most ``p``
    percent of the records away (Moore 1996, "Controlled data-swapping techniques for
    masking public use microdata sets", US Census Bureau; sdcMicro ``rankSwap``'s ``P``).

    Parameters
    ----------
    variables : str or sequence of str
        The numeric or ordered columns, each swapped on its own.
    p : float, default=5.0
        In (0, 100]: the window, as a percentage of the (non-missing) records of the
        stratum; two swapped values are at most ``floor(p * n / 100)`` ranks apart.
    """

    name: ClassVar[str] = "rank_swap"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    variables: tuple[str, ...]
    """The numeric or ordered columns, each swapped on its own."""
    p: float = 5.0
    """In (0, 100]: the swap window, in percent of the records of the stratum."""

    def __post_init__(self) -> None:
        _set(self, "variables", as_names(self.variables, step=self.name, option="variables"))
        _set(self, "p", as_float(self.p, step=self.name, option="p", low=0.0, high=100.0,
                                low_open=True))

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes."""
        return self.variables


@dataclass(frozen=True)
class Shuffle(StepOptions):
    """Data shuffling: the values of the confidential columns are reassigned by the ranks of
    a copy generated from a normal-copula model given the ``given`` columns (Muralidhar &
    Sarathy 2006, "Data shuffling: a new masking approach for numerical data", Management
    Science 52(5)).

    Parameters
    ----------
    variables : str or sequence of str
        The confidential numeric columns whose values are shuffled.
    given : str or sequence of str, optional
        Non-confidential numeric columns the model conditions on (kept unchanged); empty:
        the copy keeps only the rank correlations among ``variables``.
    """

    name: ClassVar[str] = "shuffle"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    variables: tuple[str, ...]
    """The confidential numeric columns whose values are shuffled."""
    given: tuple[str, ...] = ()
    """Non-confidential numeric columns the model conditions on (kept unchanged)."""

    def __post_init__(self) -> None:
        _set(self, "variables", as_names(self.variables, step=self.name, option="variables"))
        _set(self, "given", as_names(self.given, step=self.name, option="given", empty=True))
        both = sorted(set(self.variables) & set(self.given))
        if both:
            raise ValueError(f"The 'given' option of step {self.name!r} names {both}, which "
                             f"are also in 'variables'; a column is shuffled or conditioned "
                             f"on, not both.")

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes."""
        return self.variables

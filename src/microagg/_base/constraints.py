"""Parameter constraints as data, and the checkers that turn them into error messages.

A registry entry (partitioner or aggregator) declares, for each keyword parameter, a tuple
of constraints; the value must satisfy at least one. :func:`validate_params` raises
``TypeError`` when the value has the type of none of them and ``ValueError`` when it has the
right type but the wrong value, both in the one message format: "The 'gamma' parameter of
vmdav must be a float >= 0. Got -1 instead." The tests generate bad inputs from the same
declarations (:meth:`Interval.invalid_values` and friends), after scikit-learn's
``_parameter_constraints``.

Two checkers serve the code that checks one value by hand, in the same formats:
:func:`check_int` (an int in a range, the message above) and :func:`check_option` (one of a
few names: "Unknown diversity 'x'. Valid: distinct, entropy, recursive.").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Anything",
    "Constraint",
    "InstanceOf",
    "Interval",
    "Options",
    "check_int",
    "check_option",
    "describe",
    "invalid_values",
    "unknown_option",
    "validate_params",
]


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _bound(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind (``int`` or ``float``) between two bounds; ``None`` is unbounded.

    ``float`` accepts any real number (ints included, bools not); NaN is never inside.
    ``closed`` says which bounds belong to the interval: "left", "right", "both", "neither".

    Examples
    --------
    >>> Interval(int, 2, None, closed="left").describe()
    'an int >= 2'
    >>> Interval(float, 0, 1, closed="both").describe()
    'a float in [0, 1]'
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "left"

    def __post_init__(self) -> None:
        if self.kind not in (int, float):
            raise ValueError(f"Interval kind must be int or float. Got {self.kind!r}.")
        if self.closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval closed must be left, right, both or neither. "
                             f"Got {self.closed!r}.")

    def has_type(self, value: Any) -> bool:
        """Whether ``value`` is a number of this interval's kind."""
        return _is_int(value) if self.kind is int else _is_real(value)

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is of the right kind and inside the interval."""
        if not self.has_type(value) or math.isnan(float(value)):
            return False
        left_in = self.closed in ("left", "both")
        right_in = self.closed in ("right", "both")
        if self.left is not None and (value < self.left or (value == self.left and not left_in)):
            return False
        return not (self.right is not None
                    and (value > self.right or (value == self.right and not right_in)))

    def describe(self) -> str:
        """The rule in words, as it appears in the error messages."""
        kind = "an int" if self.kind is int else "a float"
        lo = None if self.left is None else _bound(self.left)
        hi = None if self.right is None else _bound(self.right)
        if lo is not None and hi is not None:
            brackets = ("[" if self.closed in ("left", "both") else "(",
                        "]" if self.closed in ("right", "both") else ")")
            return f"{kind} in {brackets[0]}{lo}, {hi}{brackets[1]}"
        if lo is not None:
            return f"{kind} {'>=' if self.closed in ('left', 'both') else '>'} {lo}"
        if hi is not None:
            return f"{kind} {'<=' if self.closed in ('right', 'both') else '<'} {hi}"
        return kind

    def invalid_values(self) -> list[Any]:
        """Values this constraint refuses: outside each bound, NaN, the wrong type."""
        out: list[Any] = []
        step = 1 if self.kind is int else 0.5
        if self.left is not None:
            out.append(self.left if self.closed in ("right", "neither") else self.left - step)
        if self.right is not None:
            out.append(self.right if self.closed in ("left", "neither") else self.right + step)
        if self.kind is float:
            out.append(float("nan"))
        else:
            out.append(2.5)  # a float where an int is needed
        return [*out, "1", True]


@dataclass(frozen=True)
class Options:
    """One of a few strings, in the order given (the message lists them in that order).

    Examples
    --------
    >>> Options(("sse", "nearest")).describe()
    'one of sse, nearest'
    >>> Options(("auto",)).describe()
    "'auto'"
    """

    values: tuple[str, ...]

    def has_type(self, value: Any) -> bool:
        """Whether ``value`` is a string."""
        return isinstance(value, str)

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is one of the options."""
        return isinstance(value, str) and value in self.values

    def describe(self) -> str:
        """The rule in words."""
        if len(self.values) == 1:
            return repr(self.values[0])
        return f"one of {', '.join(self.values)}"

    def invalid_values(self) -> list[Any]:
        """A string that is not an option, and a non-string."""
        return ["not-" + "-".join(self.values), 3]


class _NoType:
    """A value of no type a rule accepts, named the same in every process (test ids)."""

    def __repr__(self) -> str:
        return "<a value of no accepted type>"


_NO_TYPE = _NoType()


@dataclass(frozen=True)
class InstanceOf:
    """Any value of a type (e.g. the name of another partitioner, checked where used)."""

    kind: type

    def has_type(self, value: Any) -> bool:
        """Whether ``value`` is an instance of the type (bools are not ints)."""
        return isinstance(value, self.kind) and not (
            isinstance(value, bool) and self.kind is not bool)

    def accepts(self, value: Any) -> bool:
        """Same as :meth:`has_type`."""
        return self.has_type(value)

    def describe(self) -> str:
        """The rule in words."""
        return {str: "a str", int: "an int", float: "a float"}.get(
            self.kind, f"an instance of {self.kind.__name__}")

    def invalid_values(self) -> list[Any]:
        """A value of another type."""
        return [_NO_TYPE]


@dataclass(frozen=True)
class Anything:
    """No constraint (data passed by the caller, e.g. cdt's sensitive columns)."""

    def has_type(self, value: Any) -> bool:
        """Always true."""
        return True

    def accepts(self, value: Any) -> bool:
        """Always true."""
        return True

    def describe(self) -> str:
        """The rule in words."""
        return "any value"

    def invalid_values(self) -> list[Any]:
        """None: every value is valid."""
        return []


Constraint = Interval | Options | InstanceOf | Anything | None
"""One allowed form of a parameter; ``None`` means the value ``None`` is allowed."""


def _has_type(constraint: Constraint, value: Any) -> bool:
    return value is None if constraint is None else constraint.has_type(value)


def _accepts(constraint: Constraint, value: Any) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def describe(constraints: tuple[Constraint, ...]) -> str:
    """All the allowed forms in words: "an int >= 2 or None".

    Examples
    --------
    >>> describe((None, Options(("auto",)), Interval(float, 0, None, closed="neither")))
    "None, 'auto' or a float > 0"
    """
    words = ["None" if c is None else c.describe() for c in constraints]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def invalid_values(constraints: tuple[Constraint, ...]) -> list[Any]:
    """Values that break every one of ``constraints`` (for the generated bad-input tests).

    Examples
    --------
    >>> invalid_values((None, Interval(int, 2, None, closed="left")))
    [1, 2.5, '1', True]
    """
    candidates = [v for c in constraints if c is not None for v in c.invalid_values()]
    if None not in constraints:
        candidates.append(None)
    return [v for v in candidates if not any(_accepts(c, v) for c in constraints)]


def validate_params(params: Mapping[str, Any],
                    constraints: Mapping[str, tuple[Constraint, ...]], *,
                    caller: str) -> dict[str, Any]:
    """Check every parameter that has constraints; return ``params`` unchanged as a dict.

    A value that has the type of none of its constraints raises ``TypeError``; one of the
    right type but outside every constraint raises ``ValueError``. Parameters without
    constraints are not checked here.

    Examples
    --------
    >>> rules = {"gamma": (Interval(float, 0, 1, closed="both"),)}
    >>> validate_params({"gamma": 0.5}, rules, caller="vmdav")
    {'gamma': 0.5}
    >>> validate_params({"gamma": 2}, rules, caller="vmdav")
    Traceback (most recent call last):
    ...
    ValueError: The 'gamma' parameter of vmdav must be a float in [0, 1]. Got 2 instead.
    """
    for name, value in params.items():
        allowed = constraints.get(name)
        if not allowed or any(_accepts(c, value) for c in allowed):
            continue
        rule = describe(allowed)
        if not any(_has_type(c, value) for c in allowed):
            raise TypeError(f"The {name!r} parameter of {caller} must be {rule}. "
                            f"Got {value!r} of type {type(value).__name__} instead.")
        raise ValueError(f"The {name!r} parameter of {caller} must be {rule}. "
                         f"Got {value!r} instead.")
    return dict(params)


def check_int(value: Any, *, parameter: str, caller: str, low: int, high: int | None = None,
              rule: str | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]`` (``high=None``: no upper bound).

    A value that is not an integer (bools are not) raises ``TypeError``, one outside the
    range ``ValueError``, both in the message format of :func:`validate_params`. ``rule``
    replaces the range in words when it should name what the bounds stand for.

    Examples
    --------
    >>> check_int(3, parameter="k", caller="mdav", low=2)
    3
    >>> check_int(1, parameter="k", caller="mdav", low=2)
    Traceback (most recent call last):
    ...
    ValueError: The 'k' parameter of mdav must be an int >= 2. Got 1 instead.
    """
    rule = rule or Interval(int, low, high, closed="both").describe()
    if not _is_int(value):
        raise TypeError(f"The {parameter!r} parameter of {caller} must be {rule}. "
                        f"Got {value!r} of type {type(value).__name__} instead.")
    number = int(value)
    if number < low or (high is not None and number > high):
        raise ValueError(f"The {parameter!r} parameter of {caller} must be {rule}. "
                         f"Got {number} instead.")
    return number


def unknown_option(parameter: str, value: Any, valid: Iterable[str], *,
                   where: str = "") -> ValueError:
    """The one message for a name that is none of ``valid`` (see :func:`check_option`), for
    code that looks the name up itself; ``where`` says in which case the names are valid."""
    return ValueError(f"Unknown {parameter} {value!r}{' ' + where if where else ''}. "
                      f"Valid: {', '.join(valid)}.")


def check_option(value: Any, options: Iterable[str], *, parameter: str, where: str = "") -> Any:
    """Return ``value`` if it is one of ``options``; else ``ValueError`` listing them in order.

    Examples
    --------
    >>> check_option("entropy", ("distinct", "entropy", "recursive"), parameter="diversity")
    'entropy'
    >>> check_option("x", ("distinct", "entropy", "recursive"), parameter="diversity")
    Traceback (most recent call last):
    ...
    ValueError: Unknown diversity 'x'. Valid: distinct, entropy, recursive.
    """
    valid = tuple(options)
    if value not in valid:
        raise unknown_option(parameter, value, valid, where=where)
    return value

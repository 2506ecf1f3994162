"""The base of every step's options (:class:`StepOptions`) and the conversions a step's
options share (:func:`as_int`, :func:`as_float`, :func:`as_bool`, :func:`as_names`,
:func:`as_mapping`, :func:`as_list`).

A step's options are a frozen dataclass that subclasses :class:`StepOptions`, with a class
variable ``name`` (its key in :data:`microagg.steps.STEPS`) and named fields. The CLI's
``--step`` gives every value as text and a schema file gives TOML values: the dataclass's own
``__post_init__`` converts them with the helpers here, so every face builds the same options
(after sdcMicro's one ``sdcMicroObj`` per plan of methods, Templ, Kowarik & Meindl 2015,
J. Stat. Softw. 67(4)). Each field's documentation is an attribute docstring (a string
literal right after the field), which the faces show as the option's help.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import numbers
import textwrap
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

__all__ = ["StepOptions", "as_bool", "as_choice", "as_float", "as_int", "as_json", "as_list",
           "as_mapping", "as_names", "option_docs"]


class StepOptions:
    """The options of one step of a plan: subclass it with a frozen dataclass.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class TopCode(StepOptions):
    ...     name: ClassVar[str] = "topcode"
    ...     column: str
    ...     threshold: float
    ...     '''Values above it are replaced by it.'''
    ...     def __post_init__(self) -> None:
    ...         object.__setattr__(self, "threshold", as_float(
    ...             self.threshold, step=self.name, option="threshold"))
    ...     @property
    ...     def columns(self) -> tuple[str, ...]:
    ...         return (self.column,)
    >>> TopCode("income", "1e5").to_record()
    {'step': 'topcode', 'column': 'income', 'threshold': 100000.0}
    """

    name: ClassVar[str]
    """The step's key in :data:`microagg.steps.STEPS`."""
    column_types: ClassVar[frozenset[str]] = frozenset(
        {"numeric", "ordinal", "categorical", "date"})
    """The schema types (``numeric``, ``ordinal``, ``categorical``, ``date``) of the columns
    the step can change; a face offers the step only where some column it may change has
    one of them (or an earlier step leaves one: :attr:`makes_type`)."""
    needs_roles: ClassVar[frozenset[str]] = frozenset()
    """The schema roles some column must have for the step to apply (a household step: a
    ``household`` id)."""
    makes_type: ClassVar[str | None] = None
    """The schema type of the columns the step leaves, where it changes it (bands: text
    categories); ``None``: their type as it was."""
    household_option: ClassVar[str | None] = None
    """How to write the option that makes the step keep a column the same for every member
    of a household (``"per_household=true"``), ``{column}`` standing for the column; ``None``:
    the step has none (it runs per person)."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the step changes (the plan's keys are the union of its steps')."""
        raise NotImplementedError(f"The options of step {self.name!r} must say which columns "
                                  "the step changes (a 'columns' property).")

    @property
    def required_k(self) -> int | None:
        """The k the step promises on its columns, if it promises one (the release's k is
        the smallest of them, reported over the plan's keys)."""
        return None

    @property
    def promised_over(self) -> tuple[str, ...]:
        """The columns over which :attr:`required_k` is promised: its own columns, and for a
        step that partitions within the classes of other columns (stratified
        microaggregation) those too."""
        return self.columns

    @property
    def counts_households(self) -> bool:
        """Whether the step's k counts households (it treats one row per household and
        copies the result to every member) rather than records."""
        return False

    @property
    def treats_weight(self) -> bool:
        """Whether the step treats the sampling weight (the weight role's column) so that it
        no longer re-links households: a request with such a step is not refused for its
        weight when built; the release still measures re-linking on the published table."""
        return False

    def publication(self) -> Mapping[str, str]:
        """How the step needs its columns published, for those where the step decides it:
        ``"as-is"`` (never rounded: the step's values are part of what it promises),
        ``"month"`` or ``"year"`` (a date column published at that precision),
        ``"integer"`` (a column the step made whole numbers, such as a date made an age:
        published as integers, no longer as a date). Columns not named are published as
        the release publishes any column (:mod:`microagg._pipeline.publish`)."""
        return MappingProxyType({})

    def renamed(self, spelling: Mapping[str, str]) -> StepOptions:
        """These options with each column named as ``spelling`` spells it: every field that
        names columns of :attr:`columns` (a name, or a tuple of names)."""
        columns = set(self.columns) | set(self.promised_over)
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, str) and value in columns:
                changes[f.name] = spelling.get(value, value)
            elif isinstance(value, tuple) and value and all(
                    isinstance(v, str) and v in columns for v in value):
                changes[f.name] = tuple(spelling.get(v, v) for v in value)
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_record(self) -> dict[str, Any]:
        """The step as a plain record (``{"step": name, option: value}``): what a schema's
        ``[[steps]]`` table and ``Release.params["plan"]`` hold; options at their default
        are left out, tuples as lists and mappings as dicts."""
        record: dict[str, Any] = {"step": self.name}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if _required(f) or value != _default(f):
                record[f.name] = _plain(value)
        return record


def _plain(value: Any) -> Any:
    """``value`` as JSON-ready values: tuples as lists, mappings as dicts with text keys, an
    object loaded from a file (a :class:`~microagg.hierarchy.Hierarchy`) as where it comes
    from (its ``source``)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(getattr(value, "source", value))


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _default(f: dataclasses.Field[Any]) -> Any:
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default


def required_options(options_class: type[StepOptions]) -> list[str]:
    """The fields of an options class that have no default."""
    return [f.name for f in dataclasses.fields(options_class)  # type: ignore[arg-type]
            if _required(f)]


def option_docs(options_class: type[StepOptions]) -> dict[str, str]:
    """Each field's attribute docstring (the string right after it in the class body), or
    ``""``: the help every face shows for the option."""
    try:
        source = textwrap.dedent(inspect.getsource(options_class))
    except (OSError, TypeError):  # defined where its source cannot be read
        return {f.name: "" for f in dataclasses.fields(options_class)}  # type: ignore[arg-type]
    body = ast.parse(source).body[0]
    docs: dict[str, str] = {}
    statements = getattr(body, "body", [])
    for node, after in zip(statements, [*statements[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                and isinstance(after.value.value, str):
            docs[node.target.id] = " ".join(after.value.value.split())
    return {f.name: docs.get(f.name, "")
            for f in dataclasses.fields(options_class)}  # type: ignore[arg-type]


def _where(step: str, option: str) -> str:
    return f"The {option!r} option of step {step!r}"


def as_int(value: Any, *, step: str, option: str, low: int | None = None,
           high: int | None = None) -> int:
    """An int (text of digits accepted), within ``[low, high]`` when given."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value)
    allowed = (f" in [{'-inf' if low is None else low}, {'inf' if high is None else high}]")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        error = ValueError if isinstance(value, str) else TypeError  # a text: a bad value
        raise error(f"{_where(step, option)} must be an int{allowed}. Got {value!r} "
                    "instead.")
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{_where(step, option)} must be an int{allowed}. Got {value!r}.")
    return number


def as_float(value: Any, *, step: str, option: str, low: float | None = None,
             high: float | None = None, low_open: bool = False, high_open: bool = False,
             optional: bool = False) -> Any:
    """A finite float (text accepted) in the interval ``low`` .. ``high`` (each end closed
    unless ``*_open``); with ``optional``, ``None`` or empty text gives ``None``."""
    if optional and (value is None or (isinstance(value, str)
                                       and value.strip().lower() in ("", "none"))):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    allowed = (f" in {'(' if low_open or low is None else '['}"
               f"{'-inf' if low is None else f'{low:g}'}, "
               f"{'inf' if high is None else f'{high:g}'}"
               f"{')' if high_open or high is None else ']'}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value):
        error = TypeError if isinstance(value, bool) or not isinstance(
            value, (str, numbers.Real)) else ValueError  # a text or inf: a bad value
        raise error(f"{_where(step, option)} must be a finite number{allowed}. Got "
                    f"{value!r} instead.")
    number = float(value)
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if below or above:
        raise ValueError(f"{_where(step, option)} must be a number{allowed}. Got {value!r}.")
    return number


def as_choice(value: Any, allowed: Sequence[str], *, step: str, option: str) -> str:
    """One of ``allowed`` (text with spaces around it accepted)."""
    text = value.strip() if isinstance(value, str) else value
    if text not in allowed:
        raise ValueError(f"{_where(step, option)} must be one of "
                         f"{', '.join(map(repr, allowed))}. Got {value!r} instead.")
    return str(text)


def as_json(value: Any, *, step: str, option: str, example: str) -> Any:
    """``value`` itself, or the JSON it holds when it is a text that starts like JSON (``[``
    or ``{``), as the command line gives lists and mappings."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"{_where(step, option)} must be JSON such as {example}. Got "
                             f"{value!r} ({error.msg}).") from None
    return value


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def as_bool(value: Any, *, step: str, option: str) -> bool:
    """A bool (text ``true``/``false``, ``yes``/``no``, ``1``/``0``, ``on``/``off``)."""
    if isinstance(value, str) and value.strip().lower() in (*_TRUE, *_FALSE):
        return value.strip().lower() in _TRUE
    if not isinstance(value, bool):
        raise TypeError(f"{_where(step, option)} must be true or false. Got {value!r} "
                        "instead.")
    return value


def as_names(value: Any, *, step: str, option: str, empty: bool = False) -> tuple[str, ...]:
    """Column names as a tuple, each once: one name, a sequence of names, ``"a,b"`` or a
    JSON list in text; with ``empty``, none (``None``, ``""``, ``[]``) is allowed."""
    if empty and value is None:
        return ()
    value = as_json(value, step=step, option=option, example='["age", "income"]')
    if isinstance(value, str):
        names = tuple(v.strip() for v in value.split(",") if v.strip())
    elif isinstance(value, Sequence):
        names = tuple(value)
    else:
        raise TypeError(f"{_where(step, option)} must be a column name or a list of column "
                        f"names. Got {value!r} instead.")
    if not all(isinstance(n, str) and n for n in names) or (not names and not empty):
        raise ValueError(f"{_where(step, option)} must name at least one column. Got "
                         f"{value!r} instead.")
    if len(set(names)) != len(names):
        raise ValueError(f"{_where(step, option)} names a column twice: {list(names)!r}.")
    return names


def _json(value: str, *, step: str, option: str, example: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as error:
        raise ValueError(f"{_where(step, option)} must be {example}. Got {value!r} "
                         f"({error.msg}).") from None


def as_mapping(value: Any, *, step: str, option: str) -> Mapping[str, Any]:
    """A read-only mapping from a mapping or, in text, a JSON object."""
    if isinstance(value, str):
        value = _json(value, step=step, option=option,
                      example="a JSON object such as '{\"gamma\": 0.2}'")
    if not isinstance(value, Mapping):
        raise TypeError(f"{_where(step, option)} must be a mapping of parameter names to "
                        f"values. Got {value!r} instead.")
    return MappingProxyType(dict(value))


def as_list(value: Any, *, step: str, option: str) -> tuple[Any, ...]:
    """A tuple from a list or tuple or, in text, a JSON array."""
    if isinstance(value, str):
        value = _json(value, step=step, option=option,
                      example="a JSON array such as '[1, 2, 3]'")
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise TypeError(f"{_where(step, option)} must be a list. Got {value!r} instead.")
    return tuple(value)

"""The recoding steps as steps of a plan (:data:`microagg.steps.STEPS`): for ``recode``,
``band``, ``recode_date``, ``topcode`` and ``mvtopcode`` an ``apply`` (the core of
:mod:`.categories`, :mod:`.bands`, :mod:`.dates` or :mod:`.topcode` on the working table, its
details recorded), a ``verify`` (the verifier of :mod:`.verify` on the published table,
which also recounts the records the step says it changed) and a ``check`` that refuses,
before any step runs, what the step cannot run on the request's table.

Dates: a date quasi-identifier is held as days since 1970-01-01 in the working table and in
the verifier's original (:attr:`~microagg.steps._state.StepRoles.dates`); ``recode_date``
turns it into dates for its core and back into days, and the release publishes it at the
step's precision (:meth:`~.options.RecodeDate.publication`). A text column of ISO dates not
declared a date is recoded to ISO partial dates (``1989-03``, ``1989``) by the step itself.

References
----------
Templ, M., Kowarik, A. and Meindl, B. "Statistical disclosure control for micro-data using
the R package sdcMicro." J. Stat. Softw. 67(4) (2015) (``globalRecode``, ``groupAndRename``,
``topBotCoding``, ``mvTopCoding``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .._state import PlanState, StepRoles
from . import bands, categories, dates, topcode, verify
from ._common import column_of, numeric_values, with_column
from .options import Band, MultivariateTopCode, Recode, RecodeDate, TopCode

if TYPE_CHECKING:  # pragma: no cover
    from .._plan import Plan

__all__ = ["apply_band", "apply_mvtopcode", "apply_recode", "apply_recode_date",
           "apply_topcode", "check_band", "check_mvtopcode", "check_recode",
           "check_recode_date", "check_topcode", "verify_band", "verify_mvtopcode",
           "verify_recode", "verify_recode_date", "verify_topcode"]


def _roles(state: PlanState) -> StepRoles:
    assert state.roles is not None  # PlanState.start fills them in
    return state.roles


def _applied(core: Callable[..., tuple[pd.DataFrame, dict[str, Any]]]
             ) -> Callable[[PlanState, Any, np.random.Generator], PlanState]:
    def apply(state: PlanState, options: Any, rng: np.random.Generator) -> PlanState:
        table, details = core(state.table, options, rng, **_roles(state).keywords(options.name))
        return state.after_step(options, table, details=details)

    apply.__doc__ = (f"The step of :func:`{core.__module__}.{core.__name__}` on the working "
                     "table, its details recorded.")
    return apply


apply_recode = _applied(categories.apply_recode)
apply_band = _applied(bands.apply_band)
apply_topcode = _applied(topcode.apply_topcode)
apply_mvtopcode = _applied(topcode.apply_mvtopcode)


def _as_datetimes(days: pd.Series) -> pd.Series:
    """Days since 1970-01-01 (floats, NaN missing) as ``datetime64``."""
    values = days.to_numpy(dtype=np.float64, na_value=np.nan)
    micro = np.where(np.isnan(values), 0.0, np.round(values * 86_400e6)).astype(np.int64)
    moments = micro.view("datetime64[us]").copy()
    moments[np.isnan(values)] = np.datetime64("NaT")
    return pd.Series(moments, index=days.index, name=days.name)


def _as_days(moments: pd.Series) -> pd.Series:
    values = moments.to_numpy(dtype="datetime64[us]")
    days = (values - np.datetime64(0, "us")) / np.timedelta64(1, "D")
    return pd.Series(np.where(np.isnat(values), np.nan, days), index=moments.index,
                     name=moments.name)


def _partial_dates(moments: pd.Series, precision: str) -> pd.Series:
    """Dates as ISO partial dates (``1989-03`` by month, ``1989`` by year)."""
    values = moments.to_numpy(dtype="datetime64[us]")
    unit: Literal["M", "Y"] = "M" if precision == "month" else "Y"
    text = pd.Series(np.datetime_as_string(values.astype(f"datetime64[{unit}]"), unit=unit),
                     index=moments.index, name=moments.name, dtype="str")
    return text.where(~np.isnat(values))


def _date_input(table: pd.DataFrame, options: RecodeDate, roles: StepRoles) -> pd.DataFrame:
    """``table`` with the step's column as dates for the core: days back to dates; a number
    column that is not a date refused by name."""
    series = column_of(table, options.column, step=options.name)
    if options.column in roles.dates:
        return with_column(table, options.column, _as_datetimes(series))
    if pd.api.types.is_numeric_dtype(series.dtype):
        raise SchemaError(f"Step 'recode_date' needs a date column; column {options.column!r} "
                          f"is {series.dtype} and not declared a date. Declare it one (dates="
                          ", --dates, type = \"date\" in a schema), or band numbers with the "
                          "'band' step.")
    return table


def apply_recode_date(state: PlanState, options: RecodeDate,
                      rng: np.random.Generator) -> PlanState:
    """Coarsen a date column (:func:`.dates.apply_recode_date`): a date held as days stays
    days (published at the step's precision); a text column becomes ISO partial dates; an
    age is a number."""
    roles = _roles(state)
    table = _date_input(state.table, options, roles)
    out, details = dates.apply_recode_date(table, options, rng, **roles.keywords(options.name))
    if options.precision != "age":
        new = out[options.column]
        out = with_column(state.table, options.column,
                          _as_days(new) if options.column in roles.dates
                          else _partial_dates(new, options.precision))
    else:
        out = with_column(state.table, options.column, out[options.column])
    return state.after_step(options, out, details=details)


def _with_details(result: Mapping[str, Any], details: Mapping[str, Any] | None
                  ) -> dict[str, Any]:
    """The verifier's result, not holding when the records it recounted as changed are not
    those the step recorded (``details["records_changed"]``)."""
    out = dict(result)
    if details is not None and "records_changed" in details:
        recorded = int(details["records_changed"])
        out["records_changed_recorded"] = recorded
        if recorded != out["records_changed"]:
            out["holds"] = False
            out["model"] = (f"{out['model']}; the step recorded {recorded} records changed, "
                            f"the published table shows {out['records_changed']}")
    return out


def _verified(core: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def check(options: Any, original: pd.DataFrame, published: pd.DataFrame,
              roles: StepRoles, *, details: Mapping[str, Any] | None = None
              ) -> dict[str, Any]:
        return _with_details(core(options, original, published, **roles.keywords(options.name)),
                             details)

    check.__doc__ = (f":func:`{core.__module__}.{core.__name__}` on the published table; "
                     "not holding either when the records changed differ from the step's "
                     "record.")
    return check


verify_recode = _verified(verify.verify_recode)
verify_band = _verified(verify.verify_band)
verify_topcode = _verified(verify.verify_topcode)
verify_mvtopcode = _verified(verify.verify_mvtopcode)


def verify_recode_date(options: RecodeDate, original: pd.DataFrame, published: pd.DataFrame,
                       roles: StepRoles, *, details: Mapping[str, Any] | None = None
                       ) -> dict[str, Any]:
    """:func:`.verify.verify_recode_date` on the dates as published: the original's days as
    dates, published ISO (partial) dates parsed (a year read back from a file as a number
    too), a time zone dropped to its wall time."""
    column = options.column
    if column in roles.dates:
        original = with_column(original, column, _as_datetimes(original[column]))
    shown = published[column]
    if options.precision != "age":
        if pd.api.types.is_datetime64_any_dtype(shown.dtype):
            if getattr(shown.dt, "tz", None) is not None:
                shown = shown.dt.tz_localize(None)
        elif options.precision == "year" and pd.api.types.is_numeric_dtype(shown.dtype):
            years = shown.astype("Float64").round().astype("Int64").astype("str")
            shown = pd.to_datetime(years.where(shown.notna()), errors="coerce", format="%Y")
        else:
            shown = pd.to_datetime(shown.astype(object), errors="coerce", format="ISO8601")
        published = with_column(published, column, shown)
    result = verify.verify_recode_date(options, original, published, **roles.keywords(options.name))
    return _with_details(result, details)


def _where(position: int, error: SchemaError) -> SchemaError:
    return SchemaError(f"Step {position} of the plan: {error}")


def check_recode(options: Recode, table: pd.DataFrame, position: int, plan: Plan) -> None:
    """Refuse an unknown column, a group naming a value the column does not have, or a
    value outside the hierarchy (the core's own checks, on the one column)."""
    try:
        column = column_of(table, options.column, step=options.name)
        categories.apply_recode(column.to_frame(), options, np.random.default_rng(0))
    except SchemaError as error:
        raise _where(position, error) from None


def check_band(options: Band, table: pd.DataFrame, position: int, plan: Plan) -> None:
    """Refuse an unknown column, a text, date or boolean column, bands that cannot be
    found, and values outside every band."""
    try:
        column = column_of(table, options.column, step=options.name)
        bands.apply_band(column.to_frame(), options, np.random.default_rng(0))
    except SchemaError as error:
        raise _where(position, error) from None


def check_recode_date(options: RecodeDate, table: pd.DataFrame, position: int,
                      plan: Plan) -> None:
    """Refuse an unknown column, a text column of values that are not ISO dates, or a
    boolean one (a number column is a date held as days, or is refused when the step
    runs: the checker does not see which columns are dates)."""
    try:
        column = column_of(table, options.column, step=options.name)
        if pd.api.types.is_bool_dtype(column.dtype) or not (
                pd.api.types.is_numeric_dtype(column.dtype)):
            dates.as_dates(column, step=options.name)
    except SchemaError as error:
        raise _where(position, error) from None


def check_topcode(options: TopCode, table: pd.DataFrame, position: int, plan: Plan) -> None:
    """Refuse an unknown or non-numeric column, and a top code below the bottom code
    (quantile codes computed on the column)."""
    try:
        column = column_of(table, options.column, step=options.name)
        topcode.top_codes(options, numeric_values(column, step=options.name))
    except SchemaError as error:
        raise _where(position, error) from None


def check_mvtopcode(options: MultivariateTopCode, table: pd.DataFrame, position: int,
                    plan: Plan) -> None:
    """Refuse an unknown or non-numeric column (the robust fit, and its refusal of a
    singular covariance, comes when the step runs)."""
    try:
        for name in options.columns:
            numeric_values(column_of(table, name, step=options.name), step=options.name)
    except SchemaError as error:
        raise _where(position, error) from None

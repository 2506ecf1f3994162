"""The steps of ``microagg anonymize`` (:mod:`.anonymize` declares its options): check the
outputs, pick the engine, read the input, build the Request, run it, write and print."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from microagg.cli._common import (
    DelayedProgress,
    UsageError,
    match_column,
    match_columns,
    parse_params,
    passthrough_as_read,
    split_names,
    stderr,
    stdout,
)
from microagg.cli._tables import summary_table

if TYPE_CHECKING:
    import pandas as pd

    from microagg._pipeline.request import Request
    from microagg.engines import Engine
    from microagg.io.tables import TableMetadata
    from microagg.release import Release
    from microagg.schema.schema_file import Schema
    from microagg.steps import Plan

__all__ = [
    "FLAGS",
    "Outputs",
    "aggregation_params",
    "check_outputs",
    "codes_for",
    "columns_as_spelled",
    "command_engine",
    "engine_refusal",
    "parse_dates",
    "parse_plan",
    "parse_rounding",
    "print_release",
    "read_dataset",
    "request_keywords",
    "run_in_memory",
    "run_on_file",
    "schema_for",
    "whole_numbers_as_integers",
    "write_in_memory",
]

FLAGS = {
    "sensitive": "-s/--sensitive", "identifiers": "--drop", "keep": "--keep",
    "method_params": "--param", "diversity": "--diversity", "diversity_c": "--diversity-c",
    "t_distance": "--t-distance", "n_attribute_groups": "--n-attribute-groups",
    "categorical_aggregation": "--categorical-aggregation", "blocking": "--blocking",
    "block_size": "--block-size", "missing": "--missing", "strata": "--strata",
    "aggregation": "--aggregation", "aggregation_params": "--agg-param",
    "epsilon": "--epsilon", "bounds": "--bounds", "hierarchies": "--hierarchy", "l": "-l",
    "t": "-t", "intruder_knows": "--intruder-knows", "attribute_groups": "--attribute-groups",
    "clustering_il": "--clustering-il", "refine": "--refine", "scaling": "--scaling",
    "certify": "--certify",
    "n_jobs": "--jobs", "method": "-m/--method (it generalizes)",
    "dates": "--dates", "rounding": "--round", "weights": "--weight",
    "households": "--household", "plan": "--step", "control": "--control",
    "schema": "--schema with hierarchies, ordinal columns, categorical quasi-identifiers "
              "(their codes would be averaged), date quasi-identifiers or round digits",
}
"""The option of this command behind each Request option an engine may refuse (every name of
:data:`microagg.engines.REFUSABLE`, and ``method``)."""


@dataclass(frozen=True)
class Outputs:
    """Where the release goes: the table, and optionally its summary and report."""

    table: pathlib.Path | str
    summary: pathlib.Path | None
    report: pathlib.Path | None


def check_outputs(input_path: str | None, dataset: str | None, output: str,
             summary_json: pathlib.Path | None, report: pathlib.Path | None) -> Outputs:
    """Exactly one input; the outputs checked (never the input, never each other)."""
    from microagg.io.tables import check_output_path, check_table_output

    if (input_path is None) == (dataset is None):
        raise UsageError("Give exactly one of INPUT or --dataset "
                         f"(got {'both' if dataset is not None else 'neither'}).")
    inputs = [input_path] if input_path is not None else []
    out = check_table_output(output, inputs=inputs, parameter="--output")
    summary_out = None
    if summary_json is not None:
        summary_out = check_output_path(summary_json, inputs=inputs, extensions=(".json",),
                                        parameter="--summary-json", outputs={"--output": out})
    report_out = None
    if report is not None:
        report_out = check_output_path(
            report, inputs=inputs, extensions=(".html", ".htm"), parameter="--report",
            outputs={"--output": out, "--summary-json": summary_out})
    return Outputs(out, summary_out, report_out)


def command_engine(name: str, input_path: str | None, dataset: str | None, outputs: Outputs,
            scheduler: str | None) -> tuple[Engine, list[str]]:
    """The registry entry of ``--engine``, and this command's options it cannot take: an
    engine that reads its input file itself takes no --dataset, database table or --report
    (which needs the table in memory)."""
    from microagg.engines import get_engine
    from microagg.io.sql import is_sql_url

    runner = get_engine(name)
    if runner.command != "anonymize":  # the stream engine is a command of its own
        raise UsageError(f"--engine {name!r} runs as `microagg {runner.command}`, a command "
                         "of its own; --engine takes local, file or dask.")
    if scheduler is not None and runner.name != "dask":
        raise UsageError("--scheduler applies to --engine dask.")
    if not runner.reads_files:
        return runner, []
    face = [flag for flag, given in (("--dataset", dataset is not None),
                                     ("--report", outputs.report is not None)) if given]
    if dataset is not None:
        raise engine_refusal(runner, face)
    assert input_path is not None
    if is_sql_url(input_path) or isinstance(outputs.table, str) \
            or _read_whole(input_path) or _read_whole(outputs.table):
        raise UsageError(f"--engine {runner.option} reads and writes files (CSV, Parquet); for "
                         "a database table or an Excel, Stata or SPSS file use --engine local.")
    return runner, face


def _read_whole(path: str | pathlib.Path) -> bool:
    """An Excel, Stata or SPSS file: read whole, never streamed in chunks."""
    from microagg.io._formats import STREAMED_EXTENSIONS, SUPPORTED_EXTENSIONS, format_suffix

    suffix = format_suffix(pathlib.Path(path))
    return suffix in SUPPORTED_EXTENSIONS and suffix not in STREAMED_EXTENSIONS


def engine_refusal(runner: Engine, flags: list[str],
                   runners: Sequence[str] = ("memory",)) -> UsageError:
    """The refusal of ``flags`` by ``runner``, naming the engines that run them
    (``runners``: registry names)."""
    from microagg.engines import get_engine

    others = " or ".join(f"--engine {get_engine(name).option}" for name in runners)
    return UsageError(f"--engine {runner.option} streams numeric microaggregation with group "
                      f"means only; drop {', '.join(flags)} (or use {others or 'no engine'}).")


def codes_for(schema: Schema | None, items: list[str] | None, runner: Engine
              ) -> dict[str, tuple[Any, ...]]:
    """The missing-value codes of the schema and of ``--missing-codes`` (which wins for a
    column in both); refused with an engine that reads its input itself."""
    from microagg.io._missing_codes import parse_missing_codes

    try:
        codes = {**(schema.missing if schema is not None else {}),
                 **parse_missing_codes(items, option="--missing-codes")}
    except ValueError as error:
        raise UsageError(str(error)) from None
    if codes and runner.reads_files:
        raise UsageError(f"Missing-value codes (--missing-codes, a schema's missing) apply "
                         f"to --engine local; --engine {runner.name} reads its input itself.")
    return codes


def schema_for(schema: pathlib.Path | None, dataset: str | None) -> Schema | None:
    if schema is None:
        return None
    if dataset is not None:
        raise UsageError("--schema describes an INPUT file; --dataset brings its own roles.")
    from microagg.schema.schema_file import load_schema

    return load_schema(schema)


def parse_plan(steps: list[str] | None, given: Sequence[str], schema: Schema | None
               ) -> Plan | None:
    """The plan of the repeated ``--step`` options (:meth:`Plan.from_text
    <microagg.steps.Plan.from_text>`); ``None`` without them (a schema's ``[[steps]]`` then
    run as the schema's own). ``given``: the one-step options given on the command line
    (``-k``...), refused by name with ``--step`` or a schema's ``[[steps]]``, as a plan
    given twice is."""
    from microagg.steps import Plan

    if not steps:
        if schema is not None and schema.plan is not None and given:
            raise UsageError(f"The schema's [[steps]] say each step's columns, k and method; "
                             f"drop {', '.join(given)} (or the schema's [[steps]]).")
        return None
    if given:
        raise UsageError(f"--step and {', '.join(given)} cannot be given together: each "
                         "--step names its own quasi-identifiers, k and method (e.g. --step "
                         "'microaggregate quasi-identifiers=age,income k=5 method=mdav').")
    if schema is not None and schema.plan is not None:
        raise UsageError(f"--step and the [[steps]] of the schema {schema.source} give the "
                         "plan twice; give it once.")
    try:
        return Plan.from_text(steps)
    except (TypeError, ValueError) as error:
        raise UsageError(f"--step: {error}") from None


def aggregation_params(aggregation: str | None, rho: float | None,
                        agg_param: list[str] | None) -> dict[str, Any] | None:
    """``--agg-param`` pairs, and ``--rho`` (a shorthand of ``--agg-param rho=...``)."""
    params = parse_params(agg_param, "--agg-param")
    if rho is not None:
        if aggregation != "rho":
            raise UsageError(f"--rho applies to --aggregation rho, not {aggregation or 'mean'!r}.")
        params["rho"] = rho
    return params or None


def parse_dates(values: list[str] | None) -> dict[str, dict[str, str]] | None:
    """``--dates dob,visit:month`` -> ``{"dob": {}, "visit": {"publish": "month"}}``."""
    from microagg._pipeline.dates import PRECISIONS

    parsed: dict[str, dict[str, str]] = {}
    for item in split_names(values) or []:
        name, colon, precision = item.partition(":")
        if not name or (colon and precision not in PRECISIONS) or name in parsed:
            raise UsageError(f"--dates takes COLUMN or COLUMN:PRECISION (precision one of "
                             f"{', '.join(PRECISIONS)}), each column once. Got {item!r}.")
        parsed[name] = {"publish": precision} if colon else {}
    return parsed or None


def parse_rounding(values: list[str] | None) -> dict[str, int | None] | bool | None:
    """``--round age=0,income=-2,bmi=none`` -> digits by column (``none``: not rounded);
    ``--round none`` alone: no rounding at all (not even of whole numbers)."""
    items = split_names(values) or []
    if items == ["none"]:
        return False
    parsed: dict[str, int | None] = {}
    for item in items:
        name, eq, digits = item.partition("=")
        valid = digits == "none" or digits.lstrip("-").isdigit()
        if not eq or not name or name in parsed or not valid:
            raise UsageError("--round takes COLUMN=DIGITS (0: integers, -1: tens, 2: cents) "
                             "or COLUMN=none, each column once, or 'none' alone (no "
                             f"rounding). Got {item!r}.")
        parsed[name] = None if digits == "none" else int(digits)
    return parsed or None


_NAME_LISTS = ("quasi_identifiers", "sensitive", "identifiers", "keep", "intruder_knows")
_NAME_KEYS = ("hierarchies", "bounds", "dates", "rounding")


def columns_as_spelled(options: dict[str, Any], columns: Sequence[object]) -> dict[str, Any]:
    """``options`` with every column name as the table spells it (:func:`match_columns`:
    Unicode NFC, surrounding spaces), in the role lists and as the keys of the options by
    column."""
    out = dict(options)
    for key in _NAME_LISTS:
        if options[key]:
            out[key] = match_columns(options[key], columns)
    for key in ("weights", "households", "strata"):
        if options[key] is not None:
            out[key] = match_column(options[key], columns)
    for key in _NAME_KEYS:
        if isinstance(options[key], dict):
            names = match_columns(list(options[key]), columns) or []
            out[key] = dict(zip(names, options[key].values(), strict=True))
    if options.get("plan") is not None:
        from microagg.schema._steps import plan_keys, renamed_plan

        named = plan_keys(options["plan"])
        out["plan"] = renamed_plan(options["plan"], named, match_columns(named, columns) or [])
    return out


def request_keywords(options: dict[str, Any]) -> dict[str, Any]:
    """The keywords of :meth:`Request.build` from the parsed options: roles not given (nor
    by a bundled data set, :func:`_read_dataset`) empty, empty mappings ``None``; a plan's
    run (``--step``, or a schema's ``[[steps]]``: ``k`` is then ``None``) without the
    one-step options, which its steps give."""
    options = {name: value for name, value in options.items() if name != "missing_codes"}
    if options.get("plan") is None:  # the one-step shorthand, or a schema's [[steps]]
        options.pop("plan", None)
    if options["k"] is None:  # a plan: each step names its columns, k and method
        return {**options, "sensitive": options["sensitive"] or (),
                "identifiers": options["identifiers"] or (),
                "hierarchies": options["hierarchies"] or None}
    return {**options, "quasi_identifiers": options["quasi_identifiers"] or [],
            "sensitive": options["sensitive"] or (), "identifiers": options["identifiers"] or (),
            "method_params": options["method_params"] or None,
            "hierarchies": options["hierarchies"] or None}


def read_dataset(name: str, options: dict[str, Any]
                  ) -> tuple[pd.DataFrame, str, dict[str, Any]]:
    """A bundled data set, with its roles and hierarchies where the options give none."""
    from microagg.datasets import load_dataset

    ds = load_dataset(name)
    qi, sens, ids = options["quasi_identifiers"], options["sensitive"], options["identifiers"]
    plan = options.get("plan")
    if plan is not None:  # the plan's steps name the columns masked
        from microagg.schema._steps import plan_keys

        qi = plan_keys(plan)
    if qi is None:
        qi = list(ds.quasi_identifiers)
    if sens is None:
        sens = [c for c in ds.sensitive if c not in qi and c not in (ids or ())]
    if ids is None:
        ids = [c for c in ds.identifiers if c not in qi]
    hierarchies = dict(options["hierarchies"] or {})
    for col, path in ds.hierarchies.items():  # categorical QIs get the bundled ones
        if col in qi and col not in hierarchies and ds.data[col].dtype.kind not in "biuf":
            hierarchies[col] = str(path)
    named = {*qi, *(sens or ()), *(ids or ())}
    survey = {key: value for key, value in (("weights", ds.weight), ("households", ds.household))
              if options.get(key) is None and value is not None and value not in named}
    keep = list(options.get("keep") or ()) or [c for c in ds.kept if c not in named]
    return ds.data, f"dataset {ds.name}", {**options, **survey, "keep": keep,
                                           "quasi_identifiers": qi if plan is None else None,
                                           "sensitive": sens,
                                           "identifiers": ids,
                                           "hierarchies": hierarchies or None}


def run_in_memory(runner: Engine, input_path: str | None, dataset: str | None,
                   options: dict[str, Any], schema: Schema | None, sep: str | None,
                   outputs: Outputs) -> tuple[Release, str]:
    """Read the table, build the Request, run it in memory, write what was asked."""
    from microagg._pipeline.request import Request
    from microagg.cli._long_runs import check_size
    from microagg.io._nested import check_storable
    from microagg.io.tables import read_table, table_metadata

    with DelayedProgress(stderr(), ("read", "anonymize", "write")) as progress:
        progress.stage("read", done=0)
        if dataset is not None:
            df, source, options = read_dataset(dataset, options)
        else:
            assert input_path is not None  # _outputs: exactly one input
            df, source = read_table(input_path, sep=sep, text_columns=(
                schema.text_columns if schema is not None else ()),
                missing=options["missing_codes"]), str(input_path)
            options = columns_as_spelled(options, list(df.columns))
        if options.get("control") is not None:  # the held-out records the attacks compare with
            options = {**options, "control": read_table(options["control"], sep=sep)}
        progress.stage("anonymize", done=1)
        request = Request.build(df, schema=schema, engine=runner.name,
                                **request_keywords(options))
        # a list or struct column the output cannot hold: refused before the run
        check_storable(df.drop(columns=list(request.identifiers)), outputs.table)
        check_size(request)  # exact MDAV estimated past minutes: refuse, name both estimates
        progress.label = request.method or "mdav"
        progress.quadratic = request.blocking is None  # blocks: the time left is linear
        release = runner.run(request, progress=progress.records)
        progress.stage("write", done=2)
        write_in_memory(release, request, input_path, outputs, sep, metadata=table_metadata(df))
        progress.stage("done", done=3)
    return release, source


def write_in_memory(release: Release, request: Request, input_path: str | None,
                     outputs: Outputs, sep: str | None, *,
                     metadata: TableMetadata | None = None) -> None:
    """The table (pass-through columns as read; the Stata / SPSS labels of ``metadata``
    that still fit, :meth:`TableMetadata.released`), the summary and the report."""
    from microagg.io._labelled import with_date_precision
    from microagg.io.tables import write_table, write_text_atomic

    written = release.data
    masked = changed_columns(release)
    if input_path is not None and release.params.get("epsilon") is None:
        written = passthrough_as_read(written, input_path, outputs.table, sep=sep,
                                       masked=masked,
                                       missing=metadata.missing_codes if metadata else None)
    if metadata is not None:
        metadata = metadata.released(written, masked=masked)
    metadata = with_date_precision(metadata, release.params.get("dates") or {})
    if str(outputs.table).lower().endswith((".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz",
                                            ".txt.gz", ".parquet", ".pq")):
        written = whole_numbers_as_integers(written, release.params.get("rounding") or {})
    write_table(written, outputs.table, sep=sep, metadata=metadata)
    if outputs.summary is not None:
        write_text_atomic(release.to_json() + "\n", outputs.summary)
    if outputs.report is not None:
        from microagg.report.html import write_report

        write_report(release, request.data, outputs.report)


def changed_columns(release: Release) -> list[str]:
    """The columns the release changed, never written back as read: its quasi-identifiers
    and every column a step of its plan changed (``StepRecord.columns_changed``: the
    household step's weight, a recoded or perturbed column)."""
    masked = list(release.params["quasi_identifiers"])
    for record in release.steps:
        masked.extend(c for c in record.columns_changed if c not in masked)
    return masked


def whole_numbers_as_integers(frame: pd.DataFrame, rounding: Any) -> pd.DataFrame:
    """Columns rounded to whole numbers (``params["rounding"]`` digits <= 0) that are floats
    only because some cells are missing, as nullable integers: a CSV then shows ``16900``,
    not ``16900.0`` (and an empty cell where the value is missing).

    Examples
    --------
    >>> import pandas as pd
    >>> whole_numbers_as_integers(pd.DataFrame({"income": [16900.0, None]}),
    ...                           {"income": -2})["income"].tolist()
    [16900, <NA>]
    """
    import pandas as pd

    out = frame
    for col, digits in dict(rounding).items():
        if digits is None or digits > 0 or col not in frame.columns \
                or not pd.api.types.is_float_dtype(frame[col]):
            continue
        values = frame[col]
        seen = values.dropna()
        if (seen == seen.round()).all() and (seen.abs() < 2.0**53).all():
            out = out.assign(**{col: values.astype("Int64")})
    return out


def run_on_file(runner: Engine, input_path: str, options: dict[str, Any],
                 schema: Schema | None, sep: str | None, outputs: Outputs,
                 scheduler: str | None, face: list[str], rho: float | None) -> Release:
    """``--engine file`` / ``dask``: the Request from the input's first rows, then the
    engine streams the input and writes the output atomically."""
    from microagg._pipeline.rules import EngineRefusal
    from microagg.cli._file_plans import plan_on_file
    from microagg.engines._chunks import first_rows
    from microagg.engines._reads_files import file_request
    from microagg.io.tables import write_text_atomic

    source = pathlib.Path(input_path)
    options = columns_as_spelled(options, list(first_rows(source, sep=sep).columns))
    release = plan_on_file(runner, input_path, options, schema, sep,
                           str(outputs.table), face, FLAGS)
    if release is not None:
        if outputs.summary is not None:
            write_text_atomic(release.to_json() + "\n", outputs.summary)
        return release
    try:
        request = file_request(source, engine=runner.name, sep=sep, schema=schema,
                               **request_keywords(options))
    except EngineRefusal as refusal:
        flags = ["--rho" if name == "aggregation_params" and rho is not None else FLAGS[name]
                 for name in refusal.options]
        raise engine_refusal(runner, [*flags, *face], refusal.runners) from None
    if face:
        raise engine_refusal(runner, face)
    extra = {"scheduler": scheduler} if scheduler is not None else {}
    with DelayedProgress(stderr(), runner.stages) as progress:
        release = runner.run(request, source, pathlib.Path(outputs.table), sep=sep,
                             on_stage=lambda name: progress.stage(
                                 name, done=runner.stages.index(name)), **extra)
        progress.stage("done", done=len(runner.stages))
    if outputs.summary is not None:
        write_text_atomic(release.to_json() + "\n", outputs.summary)
    return release


def print_release(release: Release, source: str, outputs: Outputs, caught: list[str],
           seconds: float) -> None:
    """The summary table (the verdict first), where the summary and report went, every
    warning, then the verdict's headline again as the last line."""
    notes = list(release.warnings)
    notes += [message for message in caught if message not in notes]
    console = stdout()
    console.print(summary_table(release, source=source, output=outputs.table, seconds=seconds))
    if outputs.summary is not None:
        console.print(Text(f"summary written to {outputs.summary}"), soft_wrap=True)
    if outputs.report is not None:
        console.print(Text(f"report written to {outputs.report}"), soft_wrap=True)
    for note in notes:
        console.print(Text(f"Warning: {note}", style="yellow"), soft_wrap=True)
    console.print(Text(release.verdict.headline,
                       style="bold green" if release.verdict.protected else "bold red"),
                  soft_wrap=True)

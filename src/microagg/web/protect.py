"""The Protect, Result and Export pages' logic: the form read into :func:`microagg.anonymize`
keywords, each release kept as an attempt, and what the Export page hands out (never the
original data).

Form fields of the Protect page (stable names, also used by the browser tests): ``k``,
``method``, ``l``, ``t``, ``epsilon``, ``bounds`` (``col=lo:hi`` separated by spaces),
``params`` (method parameters ``name=value`` separated by spaces), ``random_state``
(blank: a seed is drawn and recorded), ``missing``, ``aggregation`` and ``knows-N``
(:mod:`.release_options`), ``csrf_token``; the button is ``id="protect"``. Only the methods
that apply to the roles and types are offered (:func:`method_offer`).
"""

from __future__ import annotations

import io
import pathlib
import secrets
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from microagg.exceptions import SchemaError
from microagg.release import Release
from microagg.schema.schema_file import Schema, load_schema

from . import release_options, roles
from .jobs import JobRunner, RunnerBusy

__all__ = [
    "INSENSITIVE",
    "PROTECT_ERRORS",
    "Attempt",
    "FormErrors",
    "build_schema",
    "make_attempt",
    "method_offer",
    "method_problem",
    "methods",
    "parse_form",
    "plan_toml",
    "published_bytes",
    "recommended_method",
    "release_for",
    "reproduction",
]

PROTECT_ERRORS = (SchemaError, ValueError, TypeError)
"""What building a release may raise for bad choices (the message is shown in the form)."""


INSENSITIVE = "insensitive"
"""The partition of an epsilon-differentially private release (with ``epsilon`` and
``bounds``), offered beside the registry's methods."""


def methods() -> list[dict[str, str]]:
    """Every method of the registry with its one-line summary, parameters (as ``microagg
    methods`` lists them) and reference, then ``insensitive``, the partition of differential
    privacy (Soria-Comas, Domingo-Ferrer, Sanchez & Martinez 2014)."""
    from microagg.partition import PARTITIONERS

    listed = [{"name": name, "summary": entry.summary, "reference": entry.reference,
               "params": ", ".join(f"{p}={d!r}" for p, d in entry.params.items()
                                   if p != "sensitive") or "-"}
              for name, entry in PARTITIONERS.items()]
    return [*listed, {"name": INSENSITIVE, "params": "-", "summary": (
        "the partition of an epsilon-differentially private release (with epsilon and "
        "bounds): it does not depend on any one record"),
        "reference": "Soria-Comas, Domingo-Ferrer, Sanchez & Martinez, VLDB J. 23 (2014)"}]


def _insensitive_refusal(schema: Mapping[str, Mapping[str, Any]],
                         categorical: Sequence[str]) -> str | None:
    """Why the epsilon-DP release cannot be made with these roles, as the release refuses
    it (``microagg._pipeline.rules.check_dp_request``: every published column noised; no
    categorical key, which generalizes)."""
    reasons = []
    if categorical:
        reasons.append(f"needs numeric quasi-identifiers: {', '.join(categorical)} "
                       f"{'is a category' if len(categorical) == 1 else 'are categories'}")
    others = [str(c) for c, e in schema.items()
              if e.get("role") not in ("quasi-identifier", "identifier")]
    if others:
        reasons.append(f"noises every published column, and {', '.join(others)} would be "
                       "published unchanged (make them quasi-identifiers or identifiers)")
    return "; ".join(reasons) or None


def method_offer(schema: Mapping[str, Mapping[str, Any]], dtypes: Mapping[str, Any]
                 ) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The methods that apply to the session's roles and types (:func:`methods`' entries)
    and the others with why not, in plain words
    (:func:`microagg.partition._offer.methods_that_apply`, from the registry's fields)."""
    from microagg.partition._offer import categorical_keys, methods_that_apply

    _, refused = methods_that_apply(schema, dtypes)
    why = _insensitive_refusal(schema, categorical_keys(schema, dtypes))
    if why is not None:
        refused[INSENSITIVE] = why
    return [m for m in methods() if m["name"] not in refused], refused


def method_problem(method: str | None, refused: Mapping[str, str]) -> str | None:
    """The form's message for a posted ``method`` that does not apply (``None``: it does,
    or none was posted): the server never trusts the select it sent."""
    if method is None or method not in refused:
        return None
    return f"method {method!r} does not apply to these roles and types: {refused[method]}."


def recommended_method(schema: Mapping[str, Mapping[str, Any]],
                       dtypes: Mapping[str, Any] | None = None) -> str:
    """mdav for numeric quasi-identifiers, mage when one is categorical (as ``sweep``):
    declared so, or holding text (``dtypes``, :func:`~microagg.partition._offer.categorical_keys`)."""
    from microagg.partition._offer import categorical_keys

    return "mage" if categorical_keys(schema, dtypes or {}) else "mdav"


def build_schema(schema: Mapping[str, Mapping[str, Any]], folder: pathlib.Path) -> Schema:
    """The session's schema as a :class:`~microagg.schema.Schema` (through its TOML text,
    exactly what the Export page hands out)."""
    file = folder / f"schema-{secrets.token_hex(8)}.toml"
    file.write_text(roles.to_toml(schema), encoding="utf-8")
    try:
        return load_schema(file)
    except SchemaError as error:
        raise SchemaError(str(error).replace(repr(str(file)), "the schema")) from None
    finally:
        file.unlink(missing_ok=True)


class FormErrors(ValueError):
    """Every problem of a posted form (:attr:`problems`), shown at once."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = list(problems)


def _number(form: Mapping[str, str], name: str, kind: type, problems: list[str]) -> Any:
    """The field ``name`` as ``kind`` (None when blank); a malformed one is added to
    ``problems``."""
    text = form.get(name, "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        word = "a whole number" if kind is int else "a number"
        problems.append(f"{name} must be {word}; got {text!r}.")
        return None


def parse_form(form: Mapping[str, str]) -> dict[str, Any]:
    """The Protect form as :func:`microagg.anonymize` keywords (``k``, ``method``, ``l``,
    ``t``, ``epsilon``, ``bounds``, ``method_params``, ``random_state``, and, when given,
    ``missing``, ``aggregation``, ``intruder_knows``: :mod:`.release_options`); a
    :class:`FormErrors` with every malformed field at once, each in the CLI's words."""
    from microagg.cli._common import parse_bounds, parse_params

    problems: list[str] = []
    k = _number(form, "k", int, problems)
    if k is None and not form.get("k", "").strip():
        problems.append("k is required (k >= 2).")
    options: dict[str, Any] = {"k": k, "method": form.get("method", "").strip() or None}
    for name in ("l", "t", "epsilon"):
        options[name] = _number(form, name, float, problems)
    seed = _number(form, "random_state", int, problems)
    options["random_state"] = seed if seed is not None else secrets.randbelow(2**31)
    for name, parse, key in (("bounds", parse_bounds, "bounds"),
                             ("params", parse_params, "method_params")):
        try:
            options[key] = parse(form.get(name, "").split() or None) or None
        except ValueError as error:  # the CLI's UsageError
            problems.append(str(error))
    if problems:
        raise FormErrors(problems)
    return {**options, **release_options.parse_settings(form)}


@dataclass
class Attempt:
    """One release made in the session, with the choices that made it."""

    number: int
    options: dict[str, Any]
    release: Release
    seconds: float
    schema: dict[str, dict[str, Any]]
    made_at: str = field(default_factory=lambda: time.strftime("%H:%M:%S"))
    as_read: Any = None
    """The input's cells as written (:class:`microagg.io._as_read.AsRead`), or ``None``."""
    metadata: Any = None
    """The input's labels, date formats and missing codes
    (:class:`microagg.io.TableMetadata`), or ``None``."""
    undone: dict[str, Any] | None = None
    """The record of the step this attempt's plan left out (**Undo the last step**), or
    ``None``."""
    _report: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def required_k(self) -> str:
        """The k asked for: the form's, or each step's (``"5, 3"``) for a plan."""
        steps = self.options.get("plan")
        return (", ".join(str(s.get("k", "-")) for s in steps) if steps
                else str(self.options["k"]))

    @property
    def figures(self) -> dict[str, str]:
        """The key figures shown side by side: achieved k, headline loss and risk."""
        from microagg.metrics.headline import headline_loss, headline_risk

        out = {"k": str(self.release.k)}
        for key, found in (("loss", headline_loss(self.release.metrics)),
                           ("risk", headline_risk(self.release.metrics))):
            out[key] = f"{found[0].short} {found[1]:.2f} %" if found else "-"
        return out

    def report(self, original: pd.DataFrame, runner: JobRunner | None = None) -> str:
        """The HTML report, rendered once, on first use (a second caller waits for it): in
        a worker process of ``runner`` when one is free, so that drawing its figures does
        not hold the server's interpreter; else here."""
        with self._lock:
            if self._report is None and runner is not None:
                try:
                    job = runner.submit(report_html, (self.release, original), kind="report",
                                        label=f"report of attempt {self.number}")
                except RunnerBusy:
                    job = None
                if job is not None and job.wait() and job.state == "done":
                    self._report = str(job.result)
            if self._report is None:
                self._report = report_html(self.release, original)
            return self._report


def report_html(release: Release, original: pd.DataFrame, *,
                progress: Callable[[int, int, str], None] | None = None) -> str:
    """The release's HTML report (:func:`microagg.report.render_report`); a job of a worker
    process (``progress`` unused: it does not measure itself)."""
    from microagg.report.html import render_report

    return render_report(release, original)


def release_for(df: pd.DataFrame, schema: dict[str, dict[str, Any]], folder: pathlib.Path,
                options: dict[str, Any], *,
                progress: Callable[[int, int, str], None] | None = None) -> Release:
    """The release of ``df`` under ``schema`` with the form's ``options``: the job a worker
    process runs (:mod:`microagg.web.jobs`). ``progress(grouped, n, unit)`` hears the
    records grouped by a partitioner that measures them (:mod:`microagg._runtime.progress`); the
    Request's errors propagate (:data:`PROTECT_ERRORS`)."""
    import microagg
    from microagg._runtime.progress import reporting

    def grouped(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total, "records grouped")

    from microagg.steps import Plan

    from .hierarchies import plan_hierarchies

    keywords: dict[str, Any] = dict(options)
    if keywords.get("plan") is not None:  # plain records: what a worker process receives
        keywords["plan"] = Plan.from_records(plan_hierarchies(keywords["plan"], folder))
    with reporting(grouped if progress is not None else None):
        return microagg.anonymize(df, schema=build_schema(schema, folder), **keywords)


def make_attempt(number: int, options: dict[str, Any], release: Release, seconds: float,
                 schema: Mapping[str, Mapping[str, Any]], as_read: Any = None,
                 metadata: Any = None, *, undone: Mapping[str, Any] | None = None
                 ) -> Attempt:
    """An :class:`Attempt` of a finished release (the choices copied, not shared), with
    the cells of its input as written (``as_read``), its metadata (``metadata``) and the
    step its plan left out (``undone``), see :class:`Attempt`."""
    return Attempt(number, dict(options), release, seconds,
                   {name: dict(entry) for name, entry in schema.items()}, as_read=as_read,
                   metadata=metadata, undone=None if undone is None else dict(undone))


def published_bytes(attempt: Attempt, suffix: str) -> bytes:
    """The published table as ``suffix`` (``.csv``, ``.parquet``, ``.xlsx``, ``.sav``,
    ``.dta``, or ``.sqlite``: a database with one table, ``published``), written as the CLI
    writes it (pass-through columns as the uploaded file had them, :mod:`microagg.io._as_read`;
    the upload's value and variable labels, date formats, missing codes and measurement
    levels that still fit, :meth:`~microagg.io.TableMetadata.released`; whole numbers as
    integers; Excel text as text cells, never formulas), so the reproduction gives the same
    bytes (the same cells for ``.xlsx``, whose file records when it was written)."""
    import tempfile
    import urllib.parse

    from microagg.cli._anonymize_run import changed_columns, whole_numbers_as_integers
    from microagg.io._as_read import published_as_read
    from microagg.io._labelled import with_date_precision
    from microagg.io._nested import check_storable
    from microagg.io.tables import write_table

    release, metadata = attempt.release, attempt.metadata
    masked = changed_columns(release)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / f"published{suffix}"
        # through microagg.io.sql, as `-o sqlite:///...?table=` writes
        target = f"sqlite:///{urllib.parse.quote(str(path))}?table=published" \
            if suffix == ".sqlite" else str(path)
        frame = release.data
        if release.params.get("epsilon") is None:  # an epsilon release shuffles its rows
            frame = published_as_read(frame, attempt.as_read, output=target, masked=masked,
                                      missing=metadata.missing_codes if metadata else None)
        check_storable(frame, path.name)  # named for the user: not the temporary path
        if metadata is not None:
            metadata = metadata.released(frame, masked=masked)
        metadata = with_date_precision(metadata, release.params.get("dates") or {})
        if suffix not in (".sav", ".dta"):  # as the CLI: labelled formats keep their codes
            frame = whole_numbers_as_integers(frame, release.params.get("rounding") or {})
        write_table(frame, target, metadata=metadata)
        return path.read_bytes()


def _float(value: float) -> str:
    return repr(int(value)) if float(value).is_integer() else repr(value)


def reproduction(attempt: Attempt, input_name: str = "INPUT.csv") -> dict[str, str]:
    """The exact ``microagg anonymize`` command and the Python call that give this release
    again (the seed included: internal material, not for publication); for a plan also
    ``plan_command``, the same release from ``plan.toml``, the schema with its
    ``[[steps]]`` (:func:`plan_toml`)."""
    from .plan_form import step_text

    o = attempt.options
    head = ["microagg", "anonymize", input_name, "--schema", "schema.toml"]
    args: list[str] = []
    if o.get("plan"):
        steps = [word for record in o["plan"] for word in ("--step", step_text(record))]
        python = [f"plan=Plan.from_records({o['plan']!r})"]
    else:
        steps = ["-k", str(o["k"])]
        python = [f"k={o['k']}"]
    if o.get("method"):
        args += ["-m", o["method"]]
        python.append(f"method={o['method']!r}")
    for flag, name in (("-l", "l"), ("-t", "t"), ("--epsilon", "epsilon")):
        if o.get(name) is not None:
            args += [flag, _float(o[name])]
            python.append(f"{name}={o[name]!r}")
    for column, (low, high) in (o.get("bounds") or {}).items():
        args += ["--bounds", f"{column}={_float(low)}:{_float(high)}"]
    if o.get("bounds"):
        python.append(f"bounds={o['bounds']!r}")
    for name, value in (o.get("method_params") or {}).items():
        args += ["--param", f"{name}={value}"]
    if o.get("method_params"):
        python.append(f"method_params={o['method_params']!r}")
    args += release_options.flags(o)
    python += release_options.python_keywords(o)
    args += ["--random-state", str(o["random_state"]), "-o", "out.csv"]
    python.append(f"random_state={o['random_state']}")
    plan_args = [*head[:-1], "plan.toml", *args]
    args = [*head, *steps, *args]
    code = io.StringIO()
    code.write("import microagg\nfrom microagg.io import read_table\n"
               "from microagg.schema import load_schema\n"
               + ("from microagg.steps import Plan\n" if o.get("plan") else "") + "\n"
               f"df = read_table({input_name!r})\n"
               f"release = microagg.anonymize(df, schema=load_schema('schema.toml'), "
               f"{', '.join(python)})\n")
    script = {"command": shlex.join(args), "python": code.getvalue(),
              "args": shlex.join(args[1:])}
    if o.get("plan"):
        script["plan_command"] = shlex.join(plan_args)
    return script


def plan_toml(attempt: Attempt) -> str:
    """The attempt's schema as a TOML file with its plan as ``[[steps]]`` tables (one per
    step, in order: :mod:`microagg.schema._steps`); a one-step attempt: its schema."""
    return roles.to_toml(attempt.schema, steps=attempt.options.get("plan") or ())

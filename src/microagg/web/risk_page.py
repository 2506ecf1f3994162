"""Route handlers of the Risk page (the workbench's step 3): the risk of the table as it is,
on key variables the steward chooses apart from the columns to mask.

Routes (stable, also used by the browser tests): ``GET /risk``; ``POST /risk`` (fields
``csrf_token``, ``key-N`` = ``yes`` for each ticked column N of the table, or ``reset``: back
to the quasi-identifiers of the roles), which keeps the choice in the session and shows the
page again. The library measures a release on the columns it masks (it takes no separate risk
keys), so the choice is the Risk page's only, and the page says so.
"""

from __future__ import annotations

import warnings
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from . import protect, risk_figures
from .pages import _ensure_schema, render
from .protect import PROTECT_ERRORS
from .security import check_csrf, session_of
from .sessions import SessionState
from .uploads import read_form

__all__ = ["get_risk", "post_risk", "risk_figures_of"]

_ROLES_FIRST = "Open a table on the Data page and check its roles on the Roles page first."


def risk_figures_of(session: SessionState) -> dict[str, Any]:
    """The figures of the Risk page on the session's key variables
    (:func:`~microagg.web.risk_figures.chosen_keys`): class sizes and record risk, the
    individual risk's histogram and the riskiest records, and, when the schema has a weight,
    a household or strata, the survey risk with SUDA2."""
    from microagg.audit.check import check_table
    from microagg.metrics.survey_risk import survey_risk

    table = session.table
    assert table is not None
    schema = protect.build_schema(session.schema, session.folder)
    keys = risk_figures.chosen_keys(session.schema, session.risk_keys)
    if not keys:
        raise ValueError("No key variable: mark quasi-identifiers on the Roles page, or tick "
                         "key variables below.")
    # class sizes only: l and t (which refuse a sensitive column with missing values) are
    # the release's checks, not shown here
    checked = check_table(table, quasi_identifiers=keys, closeness=False)
    with warnings.catch_warnings(record=True) as caught:  # a continuous key: said on the page
        warnings.simplefilter("always")
        survey = survey_risk(table, keys, weights=schema.weight, strata=schema.strata)
    histogram = risk_figures.risk_histogram(survey.risk)
    figures: dict[str, Any] = {
        "keys": keys, "check": checked.summary(), "survey": None,
        "weighted": survey.weighted, "histogram": histogram,
        "drawing": risk_figures.histogram_drawing(histogram),
        "riskiest": risk_figures.riskiest(table, keys, survey.risk, survey.fk,
                                          survey.Fk if survey.weighted else None),
        "notes": list(dict.fromkeys(str(w.message) for w in caught))}
    if schema.weight or schema.household or schema.strata:
        from microagg.cli.risk import file_risk

        with warnings.catch_warnings():  # the same keys: the same notes, given once above
            warnings.simplefilter("ignore")
            figures["survey"] = _survey_rows(file_risk(
                table, keys, weights=schema.weight, households=schema.household,
                threshold=0.05, ks=(2, 3, 5), missing="any", suda=True, strata=schema.strata))
    return figures


def _survey_rows(figures: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The survey risk and SUDA2 figures a reader needs, each with what it means."""
    s, suda = figures["survey_risk"], figures.get("suda") or {}
    rows = [("global risk", f"{s['global_risk_pct']:.3g} %", "mean individual "
             "re-identification risk, estimated from the sampling weights"),
            ("expected re-identifications", f"{s['expected_reidentifications']:.1f}",
             "sum of the individual risks over the records"),
            ("largest individual risk", f"{100 * s['max_risk']:.3g} %", "the record most "
             "at risk"),
            (f"records above {100 * s['threshold']:g} %", f"{s['n_above_threshold']:,}",
             "records whose individual risk passes the usual limit")]
    if s.get("strata"):
        rows.append(("strata", s["strata"], "frequencies counted within each stratum (a key "
                     "the intruder may know)"))
    rows += [(f"records violating {k}-anonymity", f"{n:,}", f"records sharing their keys "
              f"with fewer than {int(k) - 1} others in the sample")
             for k, n in s.get("k_anonymity_violations", {}).items()]
    if s.get("household_risk_pct") is not None:
        rows.append(("household risk", f"{s['household_risk_pct']:.3g} %", "chance that "
                     "some member of a household is re-identified, on average"))
    population = (figures.get("population_risk") or {}).get("k_map")
    if population:
        rows += [("k-map", f"{population['k_map']:.4g}", "the fewest persons of the "
                  "population estimated to share a record's keys"),
                 ("journalist risk", f"{100 * population['journalist_max']:.3g} %",
                  "1 / k-map: the most exposed record, for an intruder who knows a person of "
                  "the population"),
                 ("marketer risk", f"{100 * population['marketer']:.3g} %", "share of the "
                  "records an intruder matching every record is expected to re-identify")]
    if suda:
        rows += [("SUDA2 records with a special unique", f"{suda['records_with_msu']:,}",
                  "records unique on a small subset of their keys (minimal sample uniques)"),
                 ("SUDA2 largest DIS score", f"{suda['dis_score_max']:.3g}",
                  "estimated chance that such a sample unique is unique in the population")]
    return rows


def _choices(session: SessionState) -> list[dict[str, Any]]:
    """The key-variable checkboxes: each offered column, its index in the table (the field
    ``key-N``), its role, and whether it is ticked."""
    assert session.table is not None
    index = {str(c): i for i, c in enumerate(session.table.columns)}
    keys = set(risk_figures.chosen_keys(session.schema, session.risk_keys))
    return [{"name": name, "index": index[name], "ticked": name in keys,
             "role": session.schema[name].get("role", "")}
            for name in risk_figures.key_choices(session.schema) if name in index]


async def risk_page(request: Request, *, errors: list[str] | None = None,
                    status: int = 200) -> Response:
    """The Risk page: what needs protecting (the ex-ante risk of the key variables)."""
    session = session_of(request)
    problems = _ensure_schema(session)
    context: dict[str, Any] = {"title": "Risk", "page_name": "risk", "figures": None,
                               "choices": [], "default_keys": True}
    if session.table is None or not session.schema or problems:
        return render(request, "risk.html", errors=problems, message=_ROLES_FIRST, **context)
    context.update(choices=_choices(session), default_keys=session.risk_keys is None)
    errors = list(errors or [])
    try:
        context["figures"] = await run_in_threadpool(risk_figures_of, session)
    except PROTECT_ERRORS as error:
        errors.append(str(error))
        status = 400
    return render(request, "risk.html", status=status, errors=errors, message=None,
                  **context)


async def get_risk(request: Request) -> Response:
    """The Risk page on the session's key variables."""
    return await risk_page(request)


async def post_risk(request: Request) -> Response:
    """Keep the ticked key variables (or, with ``reset``, the quasi-identifiers again) and
    show the Risk page on them; none ticked: the page again with the error, the choice
    unchanged."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    if session.table is None or not session.schema:
        return RedirectResponse("/risk", status_code=303)
    if "reset" in form:
        session.risk_keys = None
        return RedirectResponse("/risk", status_code=303)
    ticked = tuple(choice["name"] for choice in _choices(session)
                   if form.get(f"key-{choice['index']}") == "yes")
    if not ticked:
        return await risk_page(request, status=400, errors=[
            "Tick at least one key variable: the columns an intruder may know."])
    session.risk_keys = ticked
    return RedirectResponse("/risk", status_code=303)

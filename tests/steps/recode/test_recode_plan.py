"""The recoding steps in a plan: recode + topcode + microaggregate from the API, a schema's
``[[steps]]`` and the CLI's ``--step`` (the same bytes, the step details in the summary JSON
and the report's step table); banded and coarsened columns as published in CSV, Parquet and
SPSS, their verifiers holding on the files read back; bad input refused before any work."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.cli import EXIT_USER_ERROR
from microagg.exceptions import SchemaError
from microagg.io.tables import read_table, write_table
from microagg.report.html import render_report
from microagg.schema.schema_file import load_schema
from microagg.steps import (
    STEPS,
    Band,
    Microaggregate,
    Plan,
    Recode,
    RecodeDate,
    TopCode,
)
from microagg.steps._state import StepRoles
from microagg.steps.recode import step as recode_step
from microagg.steps.recode.verify import verify_band, verify_recode_date

# 20 rows, counted by hand: region N1 x6, N2 x4, S x10 (10 records recoded to "North");
# income 1000..20000 step 1000, top code 15000: 16000..20000 coded (5 records).
REGION = ["N1"] * 6 + ["N2"] * 4 + ["S"] * 10
STEPS_TEXT = ["recode column=region groups='{\"North\": [\"N1\", \"N2\"]}'",
              "topcode column=income top=15000",
              "microaggregate quasi-identifiers=height k=5"]
SCHEMA = """
[columns.region]
role = "quasi-identifier"
[columns.income]
role = "quasi-identifier"
[columns.height]
role = "quasi-identifier"

[[steps]]
step = "recode"
column = "region"
groups = { North = ["N1", "N2"] }

[[steps]]
step = "topcode"
column = "income"
top = 15000

[[steps]]
step = "microaggregate"
quasi_identifiers = ["height"]
k = 5
"""


def _table() -> pd.DataFrame:
    height = np.random.default_rng(3).normal(170, 8, 20).round(1)
    return pd.DataFrame({"region": REGION, "income": np.arange(1, 21) * 1000.0,
                         "height": height})


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def test_the_recoding_steps_are_registered_with_their_references():
    for name in ("recode", "band", "recode_date", "topcode", "mvtopcode"):
        entry = STEPS[name]
        assert entry.options.name == name and not entry.randomized and entry.reads_details
        assert entry.load() and entry.load_verifier() and entry.load_checker()
    assert "globalRecode" in STEPS["band"].reference
    assert "groupAndRename" in STEPS["recode"].reference
    assert "topBotCoding" in STEPS["topcode"].reference
    assert "mvTopCoding" in STEPS["mvtopcode"].reference


def test_a_plan_of_recode_topcode_and_microaggregate_records_what_each_changed():
    df = _table()
    release = microagg.anonymize(df, plan=Plan.from_text(STEPS_TEXT), random_state=0)
    assert release.data["region"].tolist() == ["North"] * 10 + ["S"] * 10
    assert release.data["income"].tolist() == [*(np.arange(1, 16) * 1000.0), *[15000.0] * 5]
    # k is promised on height; the recoded region and top-coded income, published as an
    # intruder could know them, split its classes
    assert release.verdict.status == "not protected"
    assert dict(release.checks["published_columns"]["columns"]) == {"region": 2, "income": 1}
    recode, top, micro = release.checks["steps"]
    assert recode["holds"] and recode["records_changed"] == 10
    assert recode["records_changed_recorded"] == 10
    assert top["holds"] and top["records_changed"] == 5 and top["top"] == 15000.0
    assert micro["holds"] and micro["achieved"] >= 5
    steps = release.summary()["steps"]
    assert steps[0]["details"]["mapping"] == {"N1": "North", "N2": "North"}
    assert steps[0]["details"]["counts"] == {"North": 10, "S": 10}
    assert steps[1]["details"]["top_coded"] == 5 and steps[1]["cells_changed"] == 5
    page = render_report(release, df)
    table = page[page.index("The plan's steps"):]
    table = table[:table.index("</table>")]
    assert "<td class='l'>recode</td><td class='l'>region</td>" \
           "<td class='l'>10 of 20 records (50.0%)</td>" in table
    assert "<td class='l'>5 of 20 records (25.0%)</td>" in table
    assert table.count("<td class='l'>holds</td>") == 3


def test_api_schema_and_cli_publish_the_same_bytes(tmp_path):
    source = tmp_path / "people.csv"
    _table().to_csv(source, index=False)
    schema_file = tmp_path / "people.toml"
    schema_file.write_text(SCHEMA, encoding="utf-8")
    api = microagg.anonymize(pd.read_csv(source), plan=Plan.from_text(STEPS_TEXT),
                             random_state=0)
    by_schema = microagg.anonymize(pd.read_csv(source), schema=load_schema(schema_file),
                                   random_state=0)
    assert by_schema.params["plan"] == api.params["plan"]
    api.data.to_csv(tmp_path / "api.csv", index=False)
    outputs = {}
    for face, args in (("cli", [a for s in STEPS_TEXT for a in ("--step", s)]),
                       ("file", ["--schema", schema_file])):
        out, summary, report = (tmp_path / f"{face}.csv", tmp_path / f"{face}.json",
                                tmp_path / f"{face}.html")
        done = _cli("anonymize", source, *args, "--random-state", "0", "-o", out,
                    "--summary-json", summary, "--report", report)
        assert done.returncode == 4, done.stderr  # not protected (region, income), written
        outputs[face] = out.read_bytes()
        written = json.loads(summary.read_text())
        assert written["verdict"] == api.verdict.summary()
        assert written["steps"][1]["details"]["records_changed"] == 5
        assert "10 of 20 records (50.0%)" in report.read_text(encoding="utf-8")
    assert outputs["cli"] == outputs["file"] == (tmp_path / "api.csv").read_bytes()


def test_a_top_code_below_the_bottom_code_is_refused_by_the_cli_and_nothing_is_written(
        tmp_path):
    source = tmp_path / "people.csv"
    _table().to_csv(source, index=False)
    out = tmp_path / "out.csv"
    done = _cli("anonymize", source, "--step", "topcode column=income top=100 bottom=500",
                "-o", out)
    assert done.returncode == EXIT_USER_ERROR
    assert "top code must be above the bottom code; top=100.0 is not above bottom=500.0" \
        in " ".join(done.stderr.split())
    assert not out.exists()


def test_bad_recodings_are_refused_before_any_step_runs():
    df = _table()
    with pytest.raises(SchemaError, match=re.escape(
            "Step 1 of the plan: Step 'recode': the 'groups' option names 1 value(s) that "
            "column 'region' does not have: 'W'")):
        microagg.anonymize(df, plan=Plan([Recode("region", groups={"X": ["N1", "W"]})]))
    with pytest.raises(ValueError, match="must be strictly increasing, without overlapping "
                                         r"bands; 30\.0 is followed by 20\.0"):
        Band("income", breaks=[0, 30, 20, 50])
    with pytest.raises(SchemaError, match=re.escape(
            "Step 1 of the plan: Step 'band' needs a numeric column; column 'region' is")):
        microagg.anonymize(df, plan=Plan([Band("region", breaks=[0, 1])]))
    with pytest.raises(SchemaError, match=re.escape(
            "lie outside all bands (from 18000 to 20000); the bands cover [0, 17000]")):
        microagg.anonymize(df, plan=Plan([Band("income", breaks=[0, 17000])]))
    with pytest.raises(SchemaError, match=re.escape(  # the 0.9 quantile of 1000..20000: 18100
            "the top code of column 'income' (18100) is below its bottom code (19000)")):
        microagg.anonymize(df, plan=Plan([TopCode("income", top_quantile=0.9, bottom=19000)]))
    with pytest.raises(SchemaError, match=re.escape(
            "Step 1 of the plan: Step 'recode_date' needs a date column; 20 value(s) of "
            "column 'region' are not ISO dates (e.g. 'N1')")):
        microagg.anonymize(df, plan=Plan([RecodeDate("region", "year")]))
    with pytest.raises(SchemaError, match=re.escape(  # refused when the step runs
            "column 'income' is float64 and not declared a date")):
        microagg.anonymize(df, plan=Plan([RecodeDate("income", "year")]),
                           sensitive=["height"], keep=["region"])
    with pytest.raises(SchemaError, match="already masked by step 1"):  # microaggregate's
        microagg.anonymize(df, plan=Plan([Microaggregate(["income"], k=5),
                                          TopCode("income", top=15000)]))


def test_steps_chain_on_one_column_and_each_link_is_checked():
    df = _table()
    release = microagg.anonymize(df, plan=Plan([TopCode("income", top=15000),
                                                Band("income", breaks=[0, 10000, 20000])]),
                                 sensitive=["height"], keep=["region"], random_state=0)
    top, band = release.checks["steps"]
    assert top["holds"] and top["records_changed"] == 5  # on its own output
    assert "as this step left them" in top["checked_on"]
    assert band["holds"] and "checked_on" not in band  # on the published table itself
    assert release.data["income"].value_counts().to_dict() == {"[10000, 20000]": 11,
                                                               "[0, 10000)": 9}
    assert release.steps[0].columns_changed == release.steps[1].columns_changed == ("income",)


def test_the_verifier_does_not_hold_when_the_recorded_changes_differ():
    df = _table()
    published = df.assign(income=np.minimum(df["income"], 15000.0))
    options = TopCode("income", top=15000)
    roles = StepRoles(quasi_identifiers=("income",))
    agree = recode_step.verify_topcode(options, df, published, roles,
                                       details={"records_changed": 5})
    assert agree["holds"] and agree["records_changed"] == 5
    differ = recode_step.verify_topcode(options, df, published, roles,
                                        details={"records_changed": 4})
    assert not differ["holds"]
    assert "the step recorded 4 records changed, the published table shows 5" in \
        differ["model"]


def _dated() -> pd.DataFrame:
    # hand-picked: 1989-03-13 -> 1989-03 / 1989 / 35 at 2024-06-30 (birthday passed);
    # 2000-07-01 -> 23 (birthday to come); 2000-02-29 -> 24; a missing date stays missing
    return pd.DataFrame({
        "born": ["1989-03-13", "2000-07-01", "2000-02-29", None, "1989-03-31", "1975-12-01"],
        "age": [34, 23, 24, 51, 35, 48]})


@pytest.mark.parametrize(("precision", "declared", "expected", "changed"), [
    ("month", False, ["1989-03", "2000-07", "2000-02", None, "1989-03", "1975-12"], 3),
    ("year", True, ["1989", "2000", "2000", None, "1989", "1975"], 5)])
def test_coarsened_text_dates_are_published_as_iso_partial_dates(precision, declared,
                                                                  expected, changed, tmp_path):
    df = _dated()
    release = microagg.anonymize(df, plan=Plan([RecodeDate("born", precision)]),
                                 dates=["born"] if declared else None, sensitive="age")
    shown = [None if pd.isna(v) else v for v in release.data["born"]]
    assert shown == expected and release.checks["steps"][0]["holds"]
    assert release.steps[0].details["records_changed"] == changed  # 1st of a month: kept
    path = tmp_path / "out.csv"
    write_table(release.data, path)
    back = read_table(path)  # what is published, read back, still verifies
    assert (tmp_path / "out.csv").read_text().splitlines()[1].startswith(expected[0])
    step_roles = StepRoles(quasi_identifiers=("born",))
    assert recode_step.verify_recode_date(RecodeDate("born", precision), df, back,
                                          step_roles)["holds"]


def test_a_coarsened_datetime_is_published_as_the_first_of_its_month_in_parquet_and_spss(
        tmp_path):
    df = _dated().assign(born=lambda d: pd.to_datetime(d["born"]))
    release = microagg.anonymize(df, plan=Plan([RecodeDate("born", "month"),
                                                Band("age", breaks=[20, 30, 40, 60])]))
    first = pd.to_datetime(["1989-03-01", "2000-07-01", "2000-02-01", None, "1989-03-01",
                            "1975-12-01"])
    assert (release.data["born"].fillna(pd.Timestamp(0)) == first.fillna(pd.Timestamp(0))
            ).all()
    assert release.data["age"].tolist() == ["[30, 40)", "[20, 30)", "[20, 30)", "[40, 60]",
                                            "[30, 40)", "[40, 60]"]
    assert all(c["holds"] for c in release.checks["steps"])
    for suffix in ("parquet", "sav"):
        path = tmp_path / f"out.{suffix}"
        write_table(release.data, path)
        back = read_table(path)
        assert pd.api.types.is_datetime64_any_dtype(back["born"]), suffix
        assert verify_recode_date(RecodeDate("born", "month"), df, back)["holds"], suffix
        assert verify_band(Band("age", breaks=[20, 30, 40, 60]), df, back)["holds"], suffix
        assert back["age"].tolist() == release.data["age"].tolist(), suffix


def test_an_age_is_published_as_whole_numbers_and_a_finer_date_than_declared_is_refused():
    df = _dated()
    release = microagg.anonymize(df, plan=Plan([RecodeDate("born", "age",
                                                           reference="2024-06-30")]),
                                 dates=["born"], sensitive="age")
    ages = release.data["born"].tolist()
    assert ages[:3] == [35, 23, 24] and pd.isna(ages[3]) and ages[4:] == [35, 48]
    assert release.checks["steps"][0]["holds"]
    with pytest.raises(SchemaError, match=re.escape(
            "Step 1 of the plan (recode_date) publishes column 'born' by month, but the "
            "column is declared published by year")):
        microagg.anonymize(df, plan=Plan([RecodeDate("born", "month")]),
                           dates={"born": {"publish": "year"}}, sensitive="age")


def test_the_step_table_escapes_what_it_shows():
    df = pd.DataFrame({"<b>r</b>": ["a&b"] * 3 + ["c"] * 3, "x": np.arange(6.0)})
    release = microagg.anonymize(df, plan=Plan([Recode("<b>r</b>", groups={"<i>": ["a&b"]})]),
                                 sensitive="x")
    page = render_report(release, df)
    table = page[page.index("The plan's steps"):]
    table = table[:table.index("</table>")]
    assert "<b>r</b>" not in table and "&lt;b&gt;r&lt;/b&gt;" in table
    assert "3 of 6 records (50.0%)" in table

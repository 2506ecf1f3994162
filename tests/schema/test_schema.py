"""Schema files: parsing with every problem listed, checking a table, ordinal columns,
the proposed draft, and the CLI (--schema, init-schema, check --schema)."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app
from microagg.exceptions import SchemaError
from microagg.schema.schema_file import load_schema, propose_schema

GOOD = """
[columns.name]
role = "identifier"

[columns.age]
role = "quasi-identifier"
type = "numeric"
bounds = [0, 120]

[columns.education]
role = "quasi-identifier"
type = "ordinal"
order = ["none", "primary", "secondary", "degree"]

[columns.disease]
role = "sensitive"
type = "categorical"
"""


def _table(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "name": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "education": rng.choice(["none", "primary", "secondary", "degree"], n),
        "disease": rng.choice(["flu", "cold", "asthma"], n),
    })


def test_good_schema_roles_and_ordinal(tmp_path):
    (tmp_path / "s.toml").write_text(GOOD)
    schema = load_schema(tmp_path / "s.toml")
    assert schema.quasi_identifiers == ["age", "education"]
    assert schema.sensitive == ["disease"] and schema.identifiers == ["name"]
    assert schema.bounds == {"age": (0.0, 120.0)}
    applied = schema.apply(_table())
    assert applied["education"].cat.ordered
    assert list(applied["education"].cat.categories) == ["none", "primary", "secondary",
                                                         "degree"]


def test_every_problem_is_listed_at_once(tmp_path):
    (tmp_path / "bad.toml").write_text("""
[columns.a]
role = "quasi"
[columns.b]
role = "quasi-identifier"
type = "ordinal"
order = ["x"]
colour = "red"
[columns.c]
role = "sensitive"
hierarchy = "missing.csv"
bounds = [5, 1]
""")
    with pytest.raises(SchemaError) as error:
        load_schema(tmp_path / "bad.toml")
    message = str(error.value)
    assert "5 problem(s)" in message
    for part in ("role must be one of", "needs order", "unknown key(s) ['colour']",
                 "does not exist", "bounds must be"):
        assert part in message
    (tmp_path / "broken.toml").write_text("[columns.a\nrole=")
    with pytest.raises(SchemaError, match="not valid TOML"):
        load_schema(tmp_path / "broken.toml")
    with pytest.raises(SchemaError, match="does not exist"):
        load_schema(tmp_path / "nope.toml")


def test_table_problems_are_listed(tmp_path):
    (tmp_path / "s.toml").write_text(GOOD)
    schema = load_schema(tmp_path / "s.toml")
    bad = _table().drop(columns=["disease"]).assign(extra=1)
    bad.loc[3, "education"] = "phd"
    with pytest.raises(SchemaError) as error:
        schema.check(bad)
    message = str(error.value)
    assert "3 problem(s)" in message and "'disease'" in message and "'phd'" in message \
        and "'extra'" in message


def test_proposed_schema_loads_and_guesses(tmp_path):
    text = propose_schema(_table().assign(code=range(60)))
    (tmp_path / "p.toml").write_text(text)
    schema = load_schema(tmp_path / "p.toml")
    assert schema.columns["name"].role == "identifier"
    assert schema.columns["code"].role == "identifier"  # unique on every row
    assert schema.columns["age"].type == "numeric"
    assert schema.columns["disease"].type == "categorical"
    assert schema.sensitive == []  # only the data steward knows



def test_proposed_schema_header_lists_every_role():
    from microagg.datasets import load_dataset
    from microagg.schema.schema_file import ROLES

    text = propose_schema(load_dataset("survey").data)
    header = next(line for line in text.splitlines() if line.startswith("# roles:"))
    listed = {role.strip() for role in header.removeprefix("# roles:").split("(")[0].split(",")}
    assert listed == set(ROLES)
    drafted = {line.split('"')[1] for line in text.splitlines() if line.startswith("role = ")}
    assert {"weight", "household"} <= drafted <= listed

def test_cli_schema_round_trip(tmp_path):
    _table().to_csv(tmp_path / "in.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["init-schema", str(tmp_path / "in.csv"), "-o",
                                 str(tmp_path / "draft.toml")])
    assert result.exit_code == 0, result.output
    assert load_schema(tmp_path / "draft.toml").identifiers == ["name"]
    (tmp_path / "s.toml").write_text(GOOD)
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "--schema",
                                 str(tmp_path / "s.toml"), "-k", "4", "--method",
                                 "mdav-categorical", "-o", str(tmp_path / "out.csv"),
                                 "--summary-json", str(tmp_path / "r.json"),
                                 "--random-state", "0"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "r.json").read_text())
    assert summary["params"]["ordinal_quasi_identifiers"] == ["education"]
    assert summary["params"]["identifiers"] == ["name"]
    out = pd.read_csv(tmp_path / "out.csv")
    assert "name" not in out.columns
    assert set(out["education"]) <= {"none", "primary", "secondary", "degree"}
    result = runner.invoke(app, ["check", str(tmp_path / "out.csv"), "--schema",
                                 str(tmp_path / "s.toml")])
    assert result.exit_code == 0, result.output
    assert "k-anonymity" in result.stdout
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "--schema",
                                 str(tmp_path / "s.toml"), "-q", "age", "-o",
                                 str(tmp_path / "x.csv")])
    assert result.exit_code == EXIT_USER_ERROR and "not both" in result.output
    assert not pathlib.Path(tmp_path / "x.csv").exists()


# -- issue 18: dates, ages, postcodes and places proposed as quasi-identifiers ----------------

def test_proposed_schema_names_the_classic_quasi_identifiers(tmp_path):
    from microagg.datasets import load_dataset

    survey = load_dataset("survey").data
    text = propose_schema(survey)
    (tmp_path / "p.toml").write_text(text)
    schema = load_schema(tmp_path / "p.toml")
    assert schema.columns["date_of_birth"].role == "quasi-identifier"
    assert schema.columns["date_of_birth"].type == "date"
    assert "[columns.date_of_birth]  # dates (of birth, of events) are classic " \
           "quasi-identifiers" in text
    assert "[columns.age]  # ages are classic quasi-identifiers" in text
    assert schema.columns["postcode"].type == "categorical"
    assert "[columns.postcode]  # postcodes are classic quasi-identifiers" in text
    assert "[columns.region]  # places (of residence, of birth) are classic" in text
    assert schema.columns["region"].role == "quasi-identifier"
    assert schema.dates == {"date_of_birth": {}}  # ISO dates: no format line
    # whole numbers: a comment says they are rounded by default
    age_table = text.split("[columns.age]")[1].split("[columns.")[0]
    assert "published rounded to integers by default" in age_table
    weight_table = text.split("[columns.weight]")[1].split("[columns.")[0]
    assert "rounded" not in weight_table  # 583.65: not whole numbers


def test_proposed_dates_by_dtype_or_share_of_parseable_text(tmp_path):
    n = 40
    days = pd.date_range("1950-01-01", periods=n, freq="37D")
    text_dates = days.strftime("%d.%m.%Y").tolist()
    text_dates[0] = "unknown"  # 1 of 40 unparseable: 97.5 % parse, still a date
    mostly_text = days.strftime("%Y-%m-%d").tolist()
    mostly_text[:3] = ["n/a", "soon", "never"]  # 92.5 %: below the 95 % share
    df = pd.DataFrame({"visit": days, "born": text_dates, "note": mostly_text,
                       "zip": [f"{1000 + i % 7:04d}" for i in range(n)],
                       "city": [f"town{i}" for i in range(n)],
                       "birth_year": 1950 + np.arange(n) % 9})
    text = propose_schema(df)
    (tmp_path / "p.toml").write_text(text)
    schema = load_schema(tmp_path / "p.toml")
    assert schema.columns["visit"].type == "date"
    assert schema.columns["born"].type == "date"
    assert schema.columns["born"].format == "%d.%m.%Y"
    assert schema.columns["note"].type != "date"
    assert schema.columns["zip"].role == "quasi-identifier"
    assert schema.columns["city"].role == "quasi-identifier"  # unique, but a place
    assert schema.columns["birth_year"].type == "numeric"
    assert "[columns.birth_year]  # ages are classic quasi-identifiers" in text


def test_date_type_keys_and_table_check(tmp_path):
    (tmp_path / "s.toml").write_text(
        '[columns.dob]\nrole = "quasi-identifier"\ntype = "date"\nformat = "%d.%m.%Y"\n'
        'publish = "year"\n[columns.age]\nrole = "quasi-identifier"\nformat = "%Y"\n')
    with pytest.raises(SchemaError, match=r"\[columns.age\]: format and publish apply to "
                                          r"type = \"date\" only"):
        load_schema(tmp_path / "s.toml")
    (tmp_path / "s.toml").write_text(
        '[columns.dob]\nrole = "quasi-identifier"\ntype = "date"\nformat = "%d.%m.%Y"\n'
        'publish = "year"\n')
    schema = load_schema(tmp_path / "s.toml")
    assert schema.dates == {"dob": {"format": "%d.%m.%Y", "publish": "year"}}
    assert schema.text_columns == ["dob"]  # read as text, parsed with the declared format
    with pytest.raises(SchemaError, match=r"'dob' is declared a date but holds numbers"):
        schema.check(pd.DataFrame({"dob": [19890313]}))
    df = pd.DataFrame({"dob": [f"{1 + i % 28:02d}.0{1 + i % 9}.19{50 + i}" for i in range(12)]})
    from microagg import anonymize

    release = anonymize(df, k=3, schema=schema, random_state=0)
    assert all(len(v) == 4 and v.isdigit() for v in release.data["dob"])  # by year: "1950"
    assert release.params["dates"]["dob"]["format"] == "%d.%m.%Y"


def test_proposed_schema_names_weights_and_households() -> None:
    """Issue 19: a sampling weight and a household id are proposed by name, with the reason
    (EU-SILC's rb050 / db030 too); household_size stays a quasi-identifier."""
    from microagg.schema.schema_file import propose_schema

    df = pd.DataFrame({"rb050": [10.5, 20.0, 30.0], "db030": [1, 1, 2],
                       "household_size": [2, 2, 1], "weight": [0.0, 1.0, 2.0]})
    text = propose_schema(df)
    assert '[columns.rb050]  # its name looks like a sampling weight' in text
    assert '[columns.db030]  # its name looks like a household id' in text
    blocks = dict(zip(re.findall(r"\[columns\.(\w+)\]", text),
                      re.findall(r'role = "([\w-]+)"', text), strict=True))
    assert blocks == {"rb050": "weight", "db030": "household",
                      "household_size": "quasi-identifier",
                      "weight": "quasi-identifier"}  # a zero is no sampling weight


# -- a column that breaks k by itself is never proposed as "other" --------------------------

def _breaking_table(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    days = pd.date_range("1950-01-01", periods=n * 5 // 6, freq="71D").strftime("%Y-%m-%d")
    income = rng.lognormal(10, 0.6, n).round(-1).astype(int).astype(str)
    income[rng.choice(n, 9, replace=False)] = "."  # a missing-value code
    remarks = [f"remark {i % 55}" for i in range(n)]  # 55 texts, each on 5 or 6 rows
    remarks[:3] = ["lives alone by the lighthouse", "twins", "twins"]  # 57: beyond 50
    return pd.DataFrame({
        "dob": rng.permutation(np.concatenate([days, days[:n - len(days)]])),  # 5 in 6 distinct
        "spend": rng.permutation(np.arange(n)) * 12.5 + 300.0,  # near-unique numbers
        "remarks": remarks,
        "income": income,
        "wave": ["2024"] * n,
    })


def test_init_schema_masks_or_drops_what_breaks_k_by_itself(tmp_path):
    df = _breaking_table()
    text = propose_schema(df, k=5)
    (tmp_path / "p.toml").write_text(text)
    schema = load_schema(tmp_path / "p.toml")
    roles = {c: (s.role, s.type) for c, s in schema.columns.items()}
    assert roles == {"dob": ("quasi-identifier", "date"),
                     "spend": ("quasi-identifier", "numeric"),
                     "remarks": ("identifier", None),  # was "other": published unchanged
                     "income": ("quasi-identifier", "numeric"),
                     "wave": ("other", None)}  # constant: it breaks nothing
    tables = dict(zip(re.findall(r"\[columns\.(\w+)\]", text),
                      text.split("[columns.")[1:], strict=True))
    assert "# breaks k = 5 by itself: 250 of its 250 distinct values occur on fewer than 5 " \
           "rows (200 on one row only), on 300 of the 300 rows with a value; mask it" \
        in tables["dob"]
    assert "# breaks k = 5 by itself: 300 of its 300 distinct values" in tables["spend"]
    assert "57 distinct text values: free text? It breaks k = 5 by itself: 2 of its 57 " \
           "distinct values occur on fewer than 5 rows (1 on one row only), on 3 of the 300 " \
           "rows" in tables["remarks"]
    assert 'missing = ["."]  # missing-value codes seen: read as missing' in tables["income"]
    assert "'.'" not in tables["income"].split("breaks k")[1]  # no value, as a missing one
    assert "breaks k" not in tables["wave"]
    # at k = 2 the remarks' rare texts are the lighthouse only
    assert "1 of its 57 distinct values" in propose_schema(df, k=2)
    with pytest.raises(ValueError, match=r"The 'k' parameter of propose_schema must be an "
                                         r"int >= 2\. Got 1"):
        propose_schema(df, k=1)


def test_cli_init_schema_takes_the_k_of_the_release(tmp_path):
    frame = _breaking_table(120).drop(columns=["remarks"])
    frame["remark"] = [f"remark {i % 60}" for i in range(120)]  # each on 2 rows
    frame.to_csv(tmp_path / "in.csv", index=False)
    for k, role in (("2", "other"), ("3", "identifier")):
        result = CliRunner().invoke(app, ["init-schema", str(tmp_path / "in.csv"), "-k", k,
                                          "-o", str(tmp_path / f"k{k}.toml")])
        assert result.exit_code == 0, result.output
        assert load_schema(tmp_path / f"k{k}.toml").columns["remark"].role == role
    result = CliRunner().invoke(app, ["init-schema", str(tmp_path / "in.csv"), "-k", "1",
                                      "-o", str(tmp_path / "bad.toml")])
    assert result.exit_code == EXIT_USER_ERROR and "must be an int >= 2" in result.output
    assert not (tmp_path / "bad.toml").exists()

"""One plan, every face, the same release: a plan of two ``microaggregate`` steps run from
the API (``anonymize(df, plan=...)``), from the CLI (``--step``, a process of its own, CSV
out) and from a schema file (``[[steps]]``, by the API and by the CLI) publishes the same
table byte for byte, with the same ``params["plan"]``."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.cli._anonymize_run import whole_numbers_as_integers
from microagg.io.tables import read_table, write_table
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan

PLAN = Plan([Microaggregate(["income", "tax"], k=5, method="mdav"),
             Microaggregate(["height", "weight"], k=3)])
STEPS = ["microaggregate quasi-identifiers=income,tax k=5 method=mdav",
         "microaggregate quasi-identifiers=height,weight k=3"]
SCHEMA = """
[columns.id]
role = "identifier"
[columns.income]
role = "quasi-identifier"
[columns.tax]
role = "quasi-identifier"
[columns.height]
role = "quasi-identifier"
[columns.weight]
role = "quasi-identifier"

[[steps]]
step = "microaggregate"
quasi_identifiers = ["income", "tax"]
k = 5
method = "mdav"

[[steps]]
step = "microaggregate"
quasi_identifiers = ["height", "weight"]
k = 3
"""


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (its exit status is the command's)."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture
def body(tmp_path: pathlib.Path) -> pathlib.Path:
    """60 people: money (income, tax) and body measures (height, weight)."""
    rng = np.random.default_rng(3)
    income = rng.normal(40_000, 12_000, 60).round(2)
    frame = pd.DataFrame({"id": [f"p{i:03d}" for i in range(60)], "income": income,
                          "tax": (income * rng.uniform(0.1, 0.3, 60)).round(2),
                          "height": rng.normal(170, 9, 60).round(1),
                          "weight": rng.normal(72, 11, 60).round(1)})
    path = tmp_path / "body.csv"
    frame.to_csv(path, index=False)
    return path


def _written(release: microagg.Release, path: pathlib.Path) -> bytes:
    """The release's table as the CLI writes a CSV."""
    write_table(whole_numbers_as_integers(release.data, release.params.get("rounding") or {}),
                path)
    return path.read_bytes()


def test_the_same_plan_from_every_face_publishes_the_same_table(
        body: pathlib.Path, tmp_path: pathlib.Path) -> None:
    schema_file = tmp_path / "body.toml"
    schema_file.write_text(SCHEMA, encoding="utf-8")
    df = read_table(body)

    api = microagg.anonymize(df, plan=PLAN, identifiers="id", random_state=0)
    by_schema = microagg.anonymize(df, schema=load_schema(schema_file), random_state=0)
    cli_out, cli_json = tmp_path / "cli.csv", tmp_path / "cli.json"
    done = _cli("anonymize", body, "--drop", "id", "--step", STEPS[0], "--step", STEPS[1],
                "--random-state", "0", "-o", cli_out, "--summary-json", cli_json)
    assert done.returncode == 0, done.stderr
    file_out, file_json = tmp_path / "schema.csv", tmp_path / "schema.json"
    done = _cli("anonymize", body, "--schema", schema_file, "--random-state", "0",
                "-o", file_out, "--summary-json", file_json)
    assert done.returncode == 0, done.stderr

    published = _written(api, tmp_path / "api.csv")
    assert _written(by_schema, tmp_path / "by_schema.csv") == published
    assert cli_out.read_bytes() == published
    assert file_out.read_bytes() == published
    records = PLAN.to_records()
    assert api.params["plan"] == by_schema.params["plan"] == records
    assert json.loads(cli_json.read_text())["params"]["plan"] == records
    assert json.loads(file_json.read_text())["params"]["plan"] == records
    table = pd.read_csv(cli_out)
    assert "id" not in table.columns and len(table) == 60
    assert table.groupby(["income", "tax"]).size().min() >= 5
    assert table.groupby(["height", "weight"]).size().min() >= 3

"""anonymize(certify=...) / --certify (issue 23): the release's certified optimality gap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg._pipeline.certify import CERTIFY_ROWS
from microagg._pipeline.rules import EngineRefusal
from microagg.cli import EXIT_NOT_PROTECTED, app
from microagg.exceptions import SchemaError
from microagg.metrics import sse
from microagg.report.html import render_report


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"age": rng.normal(40, 12, 60), "income": rng.lognormal(10, 0.5, 60),
                         "job": rng.choice(["a", "b"], 60)})


def test_the_release_reports_a_proved_gap(people) -> None:
    release = anonymize(people, quasi_identifiers=["age", "income"], k=3, certify=5,
                        random_state=0, rounding=False)
    cert = release.metrics["certificate"]
    assert release.params["certify"] == 5.0
    assert 0.0 <= cert["sse_lower_bound"] <= cert["sse"]
    assert release.metrics["certified_gap"] == pytest.approx(
        100 * (1 - cert["sse_lower_bound"] / cert["sse"]))
    # the SSE certified is the partition's, on the z-scores the partition was found on
    X = people[["age", "income"]].to_numpy()
    Z = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    assert cert["sse"] == pytest.approx(sse(Z, release.labels), rel=1e-6)
    assert "certify" in release.timings
    assert "certified" in render_report(release, people)


def test_two_far_clusters_are_certified_optimal() -> None:
    df = pd.DataFrame({"x": [0.0, 0.1, 0.2, 10.0, 10.1, 10.3],
                       "y": [0.0, 0.2, 0.1, 5.0, 5.2, 5.1]})
    release = anonymize(df, quasi_identifiers=["x", "y"], k=3, certify=5, random_state=0,
                        rounding=False)
    assert release.metrics["certificate"]["lp_certified"]  # n <= 14: every group priced
    assert release.metrics["certified_gap"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("value", ["yes", 0, -2.0])
def test_certify_must_be_true_or_seconds(people, value) -> None:
    with pytest.raises(ValueError, match="'certify' parameter must be True or a number of "
                                         f"seconds > 0. Got {value!r}"):
        anonymize(people, quasi_identifiers=["age"], k=3, certify=value)


def test_certify_refuses_what_it_cannot_bound(people) -> None:
    big = pd.DataFrame({"a": np.arange(CERTIFY_ROWS + 1.0)})
    with pytest.raises(ValueError, match=r"at most 5,000 records; this one has 5,001"):
        anonymize(big, quasi_identifiers=["a"], k=3, certify=True)
    with pytest.raises(SchemaError, match="not categorical quasi-identifiers"):
        anonymize(people, quasi_identifiers=["age", "job"], k=3, certify=True)
    with pytest.raises(SchemaError, match="epsilon-DP"):
        anonymize(people, quasi_identifiers=["age"], k=3, epsilon=1.0, certify=True,
                  bounds={"age": (0, 100)})
    holes = people.copy()
    holes.loc[[1, 4], "age"] = np.nan
    with pytest.raises(SchemaError, match="2 of 60 rows have missing values"):
        anonymize(holes, quasi_identifiers=["age", "income"], k=3, certify=True)


def test_cli_certify_and_the_file_engine_refusal(tmp_path, people) -> None:
    people.to_csv(tmp_path / "in.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "age,income",
                                 "-k", "3", "--certify", "3", "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    assert "certified gap" in result.output
    refused = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "age,income",
                                  "-k", "3", "--certify", "3", "--engine", "file",
                                  "-o", str(tmp_path / "out2.csv")])
    assert refused.exit_code != 0
    assert "certify" in refused.output + str(refused.stderr)
    with pytest.raises(EngineRefusal, match="certify"):
        from microagg._pipeline.request import Request

        Request.build(people.head(5), quasi_identifiers=["age"], k=3, engine="file",
                      certify=True)

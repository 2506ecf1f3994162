"""Tests for the command-line interface (typer app in microagg.cli)."""

from __future__ import annotations

import io
import json
import pathlib
import time
from typing import Any

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

import microagg._pipeline.stages
import microagg.io.tables
from microagg._pipeline.request import Request
from microagg.cli import EXIT_BUG, EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.cli._common import DelayedProgress, parse_params
from microagg.exceptions import PrivacyViolationError

runner = CliRunner()


def _invoke(*args: str | pathlib.Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def people(tmp_path: pathlib.Path) -> pathlib.Path:
    """A semicolon-separated CSV with an identifier, two numeric QIs, a text and a sensitive."""
    rows = [f"p{i};{20 + (7 * i) % 40};{1000 + (37 * i) % 500};{'ab'[i % 2]};{i % 3}"
            for i in range(30)]
    path = tmp_path / "people.csv"
    path.write_text("name;age;income;town;disease\n" + "\n".join(rows) + "\n")
    return path


def test_anonymize_bundled_dataset_writes_table_and_summary(tmp_path: pathlib.Path) -> None:
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = _invoke("anonymize", "--dataset", "census", "-k", "5", "-o", out,
                     "--summary-json", summary, "--random-state", "7")
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["checks"]["k_anonymity"]["required"] == 5
    assert data["checks"]["k_anonymity"]["achieved"] >= 5
    assert data["seed"] == 7
    assert len(data["params"]["quasi_identifiers"]) == 13  # the data set's own QIs
    published = pd.read_csv(out)
    assert published.shape == (1080, 13)
    assert published.groupby(list(published.columns)).size().min() >= 5
    assert "achieved k" in result.stdout and "IL (%)" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "s.json"]


def test_dataset_identifiers_are_dropped_by_default(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "eia.parquet"
    result = _invoke("anonymize", "--dataset", "eia", "-k", "3", "-o", out)
    # written, but not protected: columns published unchanged break k (named in its verdict)
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    assert "Not protected: published column(s) that break the required k" in result.stdout
    published = pd.read_parquet(out)
    assert "UTILNAME" not in published.columns
    assert published.shape[0] == 4092


def test_anonymize_csv_with_roles(tmp_path: pathlib.Path, people: pathlib.Path) -> None:
    out, summary = tmp_path / "out.tsv", tmp_path / "s.json"
    result = _invoke("anonymize", people, "-q", "age,income", "-k", "3", "--drop", "name",
                     "-s", "disease", "--aggregation", "median", "-o", out,
                     "--summary-json", summary)
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output  # town breaks k
    published = pd.read_csv(out, sep="\t")
    original = pd.read_csv(people, sep=";")
    assert list(published.columns) == ["age", "income", "town", "disease"]
    assert published["disease"].tolist() == original["disease"].tolist()
    assert published.groupby(["age", "income"]).size().min() >= 3
    params = json.loads(summary.read_text())["params"]
    assert params["aggregation"] == "median"
    assert params["identifiers"] == ["name"]
    assert params["sensitive"] == ["disease"]


def test_options_reach_the_library(tmp_path: pathlib.Path, people: pathlib.Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI's job is parsing and passing (the Request checks); a stub avoids compiling
    # another method here.
    seen: dict[str, Any] = {}

    def stub(df: pd.DataFrame, **kwargs: Any) -> Any:
        seen.update(kwargs, shape=df.shape)
        raise ValueError("stub stops here")

    monkeypatch.setattr(Request, "build", stub)
    result = _invoke("anonymize", people, "-q", "age", "-q", "income", "-k", "4",
                     "--method", "vmdav", "--param", "gamma=0.5", "--param", "label=x",
                     "--scaling", "minmax", "--random-state", "11", "-o", tmp_path / "o.csv")
    assert result.exit_code == EXIT_USER_ERROR
    assert "stub stops here" in result.stderr
    assert seen == {
        "shape": (30, 5), "quasi_identifiers": ["age", "income"], "k": 4, "method": "vmdav",
        "sensitive": (), "identifiers": (), "aggregation": None, "scaling": "minmax",
        "random_state": 11, "method_params": {"gamma": 0.5, "label": "x"},
        "aggregation_params": None, "epsilon": None, "bounds": None, "intruder_knows": None,
        "hierarchies": None, "l": None, "diversity": "distinct", "diversity_c": 2.0,
        "t": None, "t_distance": "auto", "attribute_groups": None,
        "n_attribute_groups": None, "categorical_aggregation": "generalize",
        "clustering_il": None, "blocking": None, "block_size": None, "n_jobs": None,
        "refine": None, "certify": None, "schema": None, "engine": "memory", "keep": (),
        "missing": "pattern", "dates": None, "rounding": None, "weights": None,
        "households": None, "strata": None, "attacks": True, "control": None,
    }
    seen.clear()
    _invoke("anonymize", people, "-q", "age,income", "--aggregation", "rho", "--rho", "0.8",
            "--intruder-knows", "age", "-o", tmp_path / "o.csv")
    assert seen["aggregation_params"] == {"rho": 0.8} and seen["intruder_knows"] == ["age"]
    assert seen["method"] is None and seen["scaling"] is None
    seen.clear()
    _invoke("anonymize", people, "-q", "age,income", "--epsilon", "0.5", "--bounds",
            "age=0:120", "--bounds", "income=-10:1e4", "-o", tmp_path / "o.csv")
    assert seen["epsilon"] == 0.5
    assert seen["bounds"] == {"age": (0.0, 120.0), "income": (-10.0, 1e4)}


def test_mixed_release_with_hierarchies_and_l_diversity(tmp_path: pathlib.Path,
                                                        people: pathlib.Path) -> None:
    hierarchy = tmp_path / "town.csv"
    hierarchy.write_text("a;*\nb;*\n")
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = _invoke("anonymize", people, "-q", "age,income,town", "--hierarchy",
                     f"town={hierarchy}", "-s", "disease", "--drop", "name", "-k", "3", "-l",
                     "2", "--diversity", "entropy", "-o", out, "--summary-json", summary,
                     "--random-state", "0")
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["params"]["method"] == "mage"
    assert data["checks"]["l_diversity"]["achieved"] >= 2
    published = pd.read_csv(out, sep=None, engine="python")
    assert published.groupby(["age", "income", "town"]).size().min() >= 3
    assert "l-diversity (entropy)" in result.stdout and "NCP (%)" in result.stdout


def test_cdt_and_t_closeness_from_the_cli(tmp_path: pathlib.Path, people: pathlib.Path) -> None:
    pytest.importorskip("kmedoids")
    out, summary = tmp_path / "cdt.csv", tmp_path / "cdt.json"
    result = _invoke("anonymize", people, "-q", "age,income,town", "-s", "disease",
                     "--drop", "name", "-m", "cdt", "-k", "3", "--param", "max_clusters=5",
                     "-o", out, "--summary-json", summary, "--random-state", "0")
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["params"]["method"] == "cdt" and data["checks"]["k_anonymity"]["achieved"] >= 3
    assert "distinct_l" in data["metrics"] and "UL / P(Q) / P(S) (%)" in result.stdout
    out = tmp_path / "t.csv"
    result = _invoke("anonymize", people, "-q", "age,income", "-s", "disease", "--drop",
                     "name,town", "-k", "3", "-t", "0.3", "-o", out, "--summary-json", summary,
                     "--random-state", "0")
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text())["checks"]["t_closeness"]["achieved"] <= 0.3
    assert "t-closeness" in result.stdout


def test_adult_uses_its_bundled_hierarchies(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "adult.csv"
    result = _invoke("anonymize", "--dataset", "adult", "-q", "age,sex,education", "-k", "10",
                     "--drop", "native-country",  # one Holand-Netherlands: breaks k by itself
                     "-o", out, "--random-state", "0")
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output  # race, ... break k
    published = pd.read_csv(out)
    assert published.groupby(["age", "sex", "education"]).size().min() >= 10


def test_noisy_and_private_releases_from_the_cli(tmp_path: pathlib.Path) -> None:
    out, summary = tmp_path / "rho.csv", tmp_path / "rho.json"
    result = _invoke("anonymize", "--dataset", "pima", "-k", "5", "--method", "top-down",
                     "--aggregation", "rho", "--rho", "0.5", "-o", out, "--summary-json",
                     summary, "--random-state", "1")
    assert result.exit_code == 0, result.output
    checks = json.loads(summary.read_text())["checks"]
    assert checks["group_k"]["achieved"] >= 5 and checks["k_anonymity"]["required"] is None
    assert "not k-anonymous" in result.stdout
    bounds = ["pregnancies=0:20", "glucose=0:250", "blood_pressure=0:150",
              "skin_thickness=0:100", "insulin=0:900", "bmi=0:70", "diabetes_pedigree=0:3",
              "age=18:100"]
    out = tmp_path / "dp.csv"
    result = _invoke("anonymize", "--dataset", "pima", "-k", "60", "--epsilon", "2",
                     *[a for b in bounds for a in ("--bounds", b)], "--drop", "outcome",
                     "-o", out, "--random-state", "1")
    assert result.exit_code == 0, result.output
    assert "epsilon=2.0 (holds)" in result.stdout
    published = pd.read_csv(out)
    assert published.shape == (768, 8)
    assert published.groupby(list(published.columns)).size().min() >= 60


def test_output_equal_to_input_is_rejected_before_any_work(
    tmp_path: pathlib.Path, people: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = people.read_bytes()
    calls: list[str] = []
    monkeypatch.setattr(microagg.io.tables, "read_table", lambda *a, **k: calls.append("read"))
    monkeypatch.setattr(Request, "build", lambda *a, **k: calls.append("anon"))
    result = _invoke("anonymize", people, "-q", "age,income", "-o", people)
    assert result.exit_code == EXIT_USER_ERROR
    assert "Error:" in result.stderr and "never overwrites its input" in result.stderr
    assert "Traceback" not in result.output
    assert calls == []
    assert people.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


def test_summary_json_must_not_overwrite_the_input(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "in.json"
    src.write_text("{}")
    result = _invoke("anonymize", "--dataset", "casc1", "-k", "3", "-o", tmp_path / "o.csv",
                     "--summary-json", tmp_path / "o.csv")
    assert result.exit_code == EXIT_USER_ERROR
    assert "--summary-json" in result.stderr
    assert not (tmp_path / "o.csv").exists()


def test_missing_output_directory_is_rejected(tmp_path: pathlib.Path) -> None:
    result = _invoke("anonymize", "--dataset", "casc1", "-k", "3",
                     "-o", tmp_path / "missing" / "out.csv")
    assert result.exit_code == EXIT_USER_ERROR
    assert "does not exist" in result.stderr
    assert "Traceback" not in result.output


def test_non_numeric_quasi_identifier_names_the_column(tmp_path: pathlib.Path,
                                                       people: pathlib.Path) -> None:
    out = tmp_path / "out.csv"
    result = _invoke("anonymize", people, "-q", "age,town", "-k", "3", "-m", "mdav",
                     "--drop", "name", "-o", out)
    assert result.exit_code == EXIT_USER_ERROR
    assert result.stderr.startswith("Error:")
    assert "'town'" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-q", "age", "-k", "3"], "exactly one of INPUT or --dataset (got neither)"),
        (["--dataset", "casc1", "PEOPLE", "-k", "3"], "(got both)"),
        (["PEOPLE", "-k", "3"], "-q/--quasi-identifiers (or --schema) is required"),
        (["PEOPLE", "-q", "age", "--param", "gamma"], "--param must look like name=value"),
        (["PEOPLE", "-q", "age", "--param", "gamma=1"], "Unknown parameter(s) gamma"),
        (["PEOPLE", "-q", "age", "--method", "nope"], "Unknown method 'nope'. Valid:"),
        (["PEOPLE", "-q", "age", "-k", "1"], "'k' parameter of anonymize must be an int >= 2"),
        (["PEOPLE", "-q", "nope"], "Unknown column 'nope'"),
        (["--dataset", "nope"], "unknown dataset 'nope'"),
        (["MISSING", "-q", "age"], "does not exist"),
        (["PEOPLE", "-q", "age", "--rho", "0.5"], "--rho applies to --aggregation rho"),
        (["PEOPLE", "-q", "age", "--epsilon", "1", "--bounds", "age=0-9"],
         "--bounds must look like column=lower:upper"),
        (["PEOPLE", "-q", "age", "--epsilon", "1", "--bounds", "age=0:9", "--bounds",
          "age=1:2"], "--bounds gives 'age' more than once"),
        (["PEOPLE", "-q", "age", "--epsilon", "1"], "'income', 'town', 'disease' would"),
        (["PEOPLE", "-q", "age", "--aggregation", "rho", "--rho", "3"], "'rho' parameter"),
        (["PEOPLE", "-q", "age,town", "-m", "mdav"], "works on numeric data only"),
        (["PEOPLE", "-q", "age,town", "--hierarchy", "town"], "--hierarchy must look like"),
        (["PEOPLE", "-q", "age,town", "--hierarchy", "town=MISSING"], "does not exist"),
        (["PEOPLE", "-q", "age", "-s", "disease", "-l", "9"], "cannot be made distinct 9"),
        (["PEOPLE", "-q", "age", "-l", "2"], "needs at least one sensitive column"),
    ],
)
def test_user_errors_exit_2_with_one_red_line(
    tmp_path: pathlib.Path, people: pathlib.Path, args: list[str], message: str
) -> None:
    args = [str(people) if a == "PEOPLE" else str(tmp_path / "gone.csv") if a == "MISSING"
            else a.replace("MISSING", str(tmp_path / "gone.csv")) for a in args]
    if str(people) in args:  # its 'name' column would be refused first (issue 18)
        args += ["--drop", "name"]
    result = _invoke("anonymize", *args, "-o", tmp_path / "out.csv")
    assert result.exit_code == EXIT_USER_ERROR, result.output
    assert result.stderr.startswith("Error: ")
    assert message.lower() in result.stderr.lower()
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.csv").exists()


def test_privacy_violation_is_reported_as_a_bug(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise PrivacyViolationError("achieved k=2 < required k=5")

    monkeypatch.setattr(microagg._pipeline.stages, "run", broken)
    result = _invoke("anonymize", "--dataset", "casc1", "-k", "3", "-o", tmp_path / "o.csv")
    assert result.exit_code == EXIT_BUG
    assert "this is a bug" in result.stderr
    assert "achieved k=2" in result.stderr
    assert not (tmp_path / "o.csv").exists()


def test_methods_lists_the_registry() -> None:
    result = _invoke("methods")
    assert result.exit_code == 0, result.output
    assert "mdav" in result.stdout
    assert "gamma=0.2" in result.stdout
    assert "Aliases:" in result.stdout and "mdav-generic -> mdav" in result.stdout
    assert "rho (rho=0.5) [noisy: not k-anonymous, not DP]" in result.stdout
    assert "bottom-up" in result.stdout


def test_datasets_lists_the_bundled_sets() -> None:
    result = _invoke("datasets")
    assert result.exit_code == 0, result.output
    assert "census" in result.stdout and "1080" in result.stdout


def test_version() -> None:
    result = _invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("microagg ")


def test_parse_params_types() -> None:
    assert parse_params(["a=3", "b=0.5", "c=text", "d=1e3", "e="]) == {
        "a": 3, "b": 0.5, "c": "text", "d": 1000.0, "e": ""}
    assert isinstance(parse_params(["a=3"])["a"], int)
    with pytest.raises(ValueError, match="more than once"):
        parse_params(["a=1", "a=2"])


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=80), buffer


def test_progress_stays_hidden_for_quick_runs() -> None:
    console, buffer = _terminal()
    with DelayedProgress(console, ("read", "anonymize", "write"), delay=5.0) as progress:
        progress.stage("anonymize", done=1)
    assert buffer.getvalue() == ""


def test_progress_appears_for_slow_runs() -> None:
    console, buffer = _terminal()
    with DelayedProgress(console, ("read", "anonymize", "write"), delay=0.05) as progress:
        progress.stage("anonymize", done=1)
        time.sleep(0.4)
    assert "anonymize" in buffer.getvalue()


def test_refine_option_runs_the_quality_mode(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.csv"
    summary = tmp_path / "s.json"
    result = runner.invoke(app, ["anonymize", "--dataset", "census", "-k", "3", "--method",
                                 "mdav", "--refine", "0.5", "--random-state", "1", "-o",
                                 str(out), "--summary-json", str(summary)])
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["params"]["method"] == "mdav-ls"
    assert data["params"]["method_params"]["start"] == "mdav"
    assert data["checks"]["k_anonymity"]["achieved"] >= 3
    assert data["metrics"]["information_loss"] < 5.6922  # MDAV's IL on Census at k=3
    bad = runner.invoke(app, ["anonymize", "--dataset", "census", "--refine", "0", "-o",
                              str(tmp_path / "x.csv")])
    assert bad.exit_code == 2


def test_attribute_groups_and_clustering_il_from_the_cli(tmp_path: pathlib.Path) -> None:
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = _invoke("anonymize", "--dataset", "census", "-k", "5", "--attribute-groups",
                     "AFNLWGT,AGI;EMCONTRB,FEDTAX,PTOTVAL,STATETAX,TAXINC,POTHVAL,INTVAL,"
                     "PEARNVAL,FICA,WSALVAL,ERNVAL", "--clustering-il", "4",
                     "--aggregation", "fuzzy-random", "--agg-param", "m=2", "-o", out,
                     "--summary-json", summary, "--random-state", "0")
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["params"]["attribute_groups"] == [["AFNLWGT", "AGI"], [
        "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC", "POTHVAL", "INTVAL",
        "PEARNVAL", "FICA", "WSALVAL", "ERNVAL"]]
    assert data["params"]["aggregation_params"]["m"] == 2
    assert data["checks"]["k_anonymity"]["required"] is None
    assert 0 <= data["metrics"]["il_ari"] <= 2 and "il_fuzzy_rand" in data["metrics"]
    assert "intersection attack" in result.stdout and "NOT 5-anonymous" in result.stdout


def test_bad_attribute_groups_and_agg_param(tmp_path: pathlib.Path) -> None:
    result = _invoke("anonymize", "--dataset", "census", "-k", "5", "--attribute-groups",
                     "AGI;;FICA", "-o", tmp_path / "o.csv")
    assert result.exit_code == EXIT_USER_ERROR and "empty group" in result.output
    result = _invoke("anonymize", "--dataset", "census", "-k", "5", "--agg-param", "m",
                     "--aggregation", "fuzzy-random", "-o", tmp_path / "o.csv")
    assert result.exit_code == EXIT_USER_ERROR and "--agg-param must look like" in result.output
    assert not (tmp_path / "o.csv").exists()


def test_blocking_from_the_cli(tmp_path: pathlib.Path) -> None:
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = _invoke("anonymize", "--dataset", "census", "-k", "3", "--blocking", "vp",
                     "--block-size", "300", "--jobs", "1", "-o", out, "--summary-json",
                     summary, "--random-state", "0")
    assert result.exit_code == 0, result.output
    data = json.loads(summary.read_text())
    assert data["params"]["blocking"] == {"blocking": "vp", "block_size": 300}
    assert data["checks"]["k_anonymity"]["achieved"] >= 3


def test_check_a_published_file(tmp_path: pathlib.Path) -> None:
    table = pd.DataFrame({"age": [30, 30, 40, 40, 40, 50],
                          "zip": ["a", "a", "b", "b", "b", "c"],
                          "disease": ["flu", "cold", "flu", "flu", "flu", "cold"]})
    table.to_csv(tmp_path / "pub.csv", index=False)
    result = _invoke("check", tmp_path / "pub.csv", "-q", "age,zip", "-s", "disease",
                     "--summary-json", tmp_path / "c.json")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["k"] == 1 and data["classes"] == 3
    assert data["risk"]["max"] == 1.0
    assert data["risk"]["share_in_classes_below_2"] == pytest.approx(1 / 6)
    assert data["l_diversity"]["disease"]["distinct"] == 1.0
    assert data["homogeneity"]["disease"]["homogeneous_classes"] == 2
    assert "k-anonymity" in result.stdout
    result = _invoke("check", tmp_path / "pub.csv", "-q", "age,nope")
    assert result.exit_code == EXIT_USER_ERROR and "'nope'" in result.output


def test_engine_stream_is_its_own_command(tmp_path):
    result = runner.invoke(app, ["anonymize", "--dataset", "census", "-k", "3", "--engine",
                                 "stream", "-o", str(tmp_path / "o.csv")])
    assert result.exit_code == 2
    assert "runs as `microagg stream`" in result.output
    assert not (tmp_path / "o.csv").exists()


def test_quasi_identifier_help_says_what_is_accepted(people: pathlib.Path,
                                                     tmp_path: pathlib.Path) -> None:
    import typer.main

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    helps = {name: next(p.help for p in command.params if "-q" in getattr(p, "opts", ()))
             for name, command in commands.items()
             if any("-q" in getattr(p, "opts", ()) for p in command.params)}
    assert "categorical" in helps["anonymize"] and "numeric columns" not in helps["anonymize"]
    result = _invoke("anonymize", people, "-q", "age,town", "-s", "disease", "-k", "3", "--drop",
                     "name,income",
                     "--random-state", "0", "-o", tmp_path / "out.csv")
    assert result.exit_code == 0, result.output  # a text quasi-identifier is accepted
    # the one command whose help says "numeric columns" refuses a text column
    assert [name for name, text in helps.items() if "numeric columns" in text] == ["stream"]
    result = _invoke("stream", people, "-q", "age,town", "-k", "3", "--sep", ";",
                     "-o", tmp_path / "stream.csv")
    assert result.exit_code == EXIT_USER_ERROR and "is not a number" in result.output

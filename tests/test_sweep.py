"""The risk-utility sweep: grid, Pareto front, refused runs, plot and CLI."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import app
from microagg.sweep import pareto_front, plot_sweep, sweep


def test_pareto_front_against_brute_force():
    rng = np.random.default_rng(0)
    loss, risk = rng.random(40), rng.random(40)
    front = pareto_front(loss, risk)
    for i in range(40):
        beaten = any(loss[j] <= loss[i] and risk[j] <= risk[i]
                     and (loss[j] < loss[i] or risk[j] < risk[i]) for j in range(40))
        assert front[i] == (not beaten)
    with pytest.raises(ValueError, match="same length"):
        pareto_front([1, 2], [1])


def test_sweep_grid_trade_off_and_refusals():
    data = pd.DataFrame(np.random.default_rng(1).normal(size=(200, 3)), columns=list("abc"))
    table = sweep(data, quasi_identifiers=list("abc"), ks=[2, 5, 20, 500],
                  methods=["mdav"], aggregations=[("mean", {}), ("rho", {"rho": 0.5})])
    assert len(table) == 8
    refused = table[table["k"] == 500]
    assert (refused["error"] != "").all() and refused["information_loss"].isna().all()
    ok = table[(table["error"] == "") & (table["aggregation"] == "mean")]
    # more k: more loss, less risk (the trade-off a steward reads off the map)
    assert ok["information_loss"].is_monotonic_increasing
    assert ok["dld_risk"].is_monotonic_decreasing
    assert table.loc[table["error"] == "", "pareto"].any()
    assert not table.loc[table["error"] != "", "pareto"].any()
    assert (table.loc[(table["aggregation"] == "rho") & (table["error"] == ""),
                      "achieved_k"] == 1).all()


def test_plot_and_cli(tmp_path):
    pytest.importorskip("matplotlib")
    result = CliRunner().invoke(app, ["sweep", "--dataset", "census", "--methods", "mdav,md",
                                      "-k", "3,5,10", "-o", str(tmp_path / "s.csv"),
                                      "--plot", str(tmp_path / "s.png")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "s.csv")
    assert len(table) == 6 and table["pareto"].any()
    png = (tmp_path / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert "Pareto front" in result.stdout
    out = plot_sweep(table, tmp_path / "again.png")
    assert pathlib.Path(out).stat().st_size > 10_000
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_categorical_sweep_uses_ncp_and_class_risk():
    from microagg.audit.check import equivalence_classes
    from microagg.datasets import load_dataset
    from microagg.sweep import risk_column, sweep

    ds = load_dataset("adult")
    qi = ["age", "education", "marital-status"]
    data = ds.data.head(600)
    roles = {"sensitive": ["occupation"], "identifiers": ["native-country"]}  # else refused:
    table = sweep(data, quasi_identifiers=qi, ks=[2, 5], methods=["mage"],  # rare values
                  options={"hierarchies": {c: ds.hierarchies[c] for c in qi[1:]}}, **roles)
    assert (table["loss_measure"] == "NCP").all()  # SSE/SST would cover age alone
    assert table["dld_risk"].isna().all() and risk_column(table) == "class_risk"
    # the class risk is the mean of 1 / class size over the published records
    from microagg import anonymize

    release = anonymize(data, quasi_identifiers=qi, k=5, random_state=0,
                        hierarchies={c: ds.hierarchies[c] for c in qi[1:]}, **roles)
    classes = equivalence_classes(release.data, qi)
    expected = 100 * (1.0 / np.bincount(classes)[classes]).mean()
    assert table.loc[table["k"] == 5, "class_risk"].item() == pytest.approx(expected)
    assert table["class_risk"].iloc[0] > table["class_risk"].iloc[1]  # k = 2 riskier than 5


def test_sweep_over_privacy_models(tmp_path):
    out = tmp_path / "sweep.csv"
    result = CliRunner().invoke(app, [
        "sweep", "--dataset", "census", "-q", "AFNLWGT,AGI,EMCONTRB", "-s", "FEDTAX",
        "--drop", "PTOTVAL,STATETAX,TAXINC,POTHVAL,INTVAL,PEARNVAL,FICA,WSALVAL,ERNVAL",
        "-k", "3,10", "-l", "3", "-t", "0.3", "--epsilon", "1", "--bounds", "AFNLWGT=0:1e6",
        "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out, keep_default_na=False)
    assert table["model"].tolist() == ["k", "l=3", "t=0.3", "epsilon=1"] * 2
    ok = table[table["error"] == ""]
    assert set(ok["model"]) == {"k", "l=3", "t=0.3"}
    # t-closeness merges groups: never less loss than k alone, never more linkage risk
    for k in (3, 10):
        base = ok[(ok["k"] == k) & (ok["model"] == "k")].iloc[0]
        close = ok[(ok["k"] == k) & (ok["model"] == "t=0.3")].iloc[0]
        assert float(close["information_loss"]) >= float(base["information_loss"])
        assert float(close["dld_risk"]) <= float(base["dld_risk"])
    refused = table[table["model"] == "epsilon=1"]["error"]
    assert refused.str.contains("insensitive partition").all()  # mdav is data-driven
    bare = CliRunner().invoke(app, ["sweep", "--dataset", "census", "--epsilon", "1",
                                    "-o", str(tmp_path / "x.csv")])
    assert bare.exit_code == 2 and "--epsilon needs --bounds" in bare.output


def test_a_schema_with_a_weight_maps_the_global_risk(tmp_path) -> None:
    """Issue 19: with a weight in the schema every run has the published file's global risk,
    and the map uses it as the risk axis."""
    from microagg.datasets import load_dataset
    from microagg.schema.schema_file import load_schema
    from microagg.sweep import RISK_LABELS, risk_column, sweep

    survey = load_dataset("survey").data.drop(columns=["income", "date_of_birth"])
    file = tmp_path / "s.toml"
    file.write_text("\n".join(
        [f'[columns.{c}]\nrole = "quasi-identifier"' for c in ("age", "sex", "region")]
        + [f'[columns.{c}]\nrole = "identifier"' for c in ("person_id", "name", "postcode")]
        + ['[columns.weight]\nrole = "weight"', '[columns.household_id]\nrole = "household"']
        + [f'[columns.{c}]\nrole = "other"' for c in ("household_size", "education",
                                                    "occupation", "diagnosis")]) + "\n")
    table = sweep(survey, quasi_identifiers=["age", "sex", "region"], ks=[3, 10], methods=["mage"],
                  options={"schema": load_schema(file), "keep": ["weight"]},  # re-links
                  random_state=0)                                 # households: on purpose
    assert risk_column(table) == "global_risk" and "global risk" in RISK_LABELS["global_risk"]
    assert table["global_risk"].iloc[0] > table["global_risk"].iloc[1] > 0  # k=3 above k=10

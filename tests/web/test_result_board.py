"""The Result page answers the board's questions: its embedded report has the "Attacks"
section with the release's own figures and, when the roles have a weight, the population
figures (k-map, journalist and marketer risk) of the release's JSON. The weight takes two
values (one per region group): a weight that identifies households is refused unchanged."""

from __future__ import annotations

import re

import numpy as np
from starlette.testclient import TestClient

from microagg.datasets import load_dataset

from .conftest import post_protect, upload


def _release(client: TestClient):  # type: ignore[no-untyped-def]
    """The last release of the (only) session."""
    store = client.app.state.store  # type: ignore[attr-defined]
    session = next(iter(store._sessions.values()))
    return session.attempts[-1].release


def test_result_report_has_the_attacks_and_the_population_figures(client: TestClient) -> None:
    df = load_dataset("survey").data.iloc[:1000]
    table = df[["age", "sex", "region", "income", "diagnosis"]].assign(
        weight=np.where(df["region"] == df["region"].iloc[0], 400.0, 650.0))
    upload(client, "people.csv", table.to_csv(index=False).encode())
    done = post_protect(client, method="mage")
    assert done.status_code == 200, done.text  # type: ignore[attr-defined]
    assert '<iframe id="report"' in client.get("/result").text
    report = client.get("/result/report.html").text
    release = _release(client)
    assert release.params["weight"] == "weight"  # the proposed roles: its name says weight
    attacks = release.metrics["attacks"]
    assert attacks["compared_with"] == "leave-one-out"
    section = report[report.index("<h2>Attacks</h2>"):]
    found = [attacks[n] for n in ("singling_out", "singling_out_multivariate", "linkability")
             if n in attacks] + list(attacks.get("inference", {}).values())
    worst = max(found, key=lambda r: r["risk"])
    assert f"{worst['risk']:.2f} [{worst['risk_ci'][0]:.2f}, {worst['risk_ci'][1]:.2f}]" \
        in section
    assert f"Seed {attacks['random_state']}." in section
    # the population figures of the published table, from its weights, in plain words
    after = release.metrics["survey_risk"]["after"]["population"]
    risk = after["k_map"]
    sentence = re.sub(r"\s+", " ", report)
    assert (f"every published record shares its key variables with at least "
            f"{risk['k_map']:.4g} persons (k-map)") in sentence
    assert f"{100 * risk['journalist_max']:.3g} % (journalist risk)" in sentence
    assert f"{100 * risk['marketer']:.3g} % of them (marketer risk)" in sentence
    assert "k-map (smallest population class)" in report

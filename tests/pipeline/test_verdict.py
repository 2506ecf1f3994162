"""The one verdict (:mod:`microagg._pipeline.verdict`): decided once from the checks the
verifier derived, carried by every Release, the same words in its summary."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.verdict import NO_K_REQUIRED, NOT_PROTECTED, PROTECTED, decide
from microagg.exceptions import PrivacyLeakWarning

K5 = {"k_anonymity": {"required": 5, "achieved": 6}}


def test_protected_only_when_nothing_argues_otherwise() -> None:
    verdict = decide(K5)
    assert (verdict.protected, verdict.status, verdict.reasons) == (True, PROTECTED, ())
    assert verdict.label == "Protected"
    assert verdict.detail == "k = 5 required and reached on the published file."


def test_every_reason_is_named_with_its_figures() -> None:
    checks = {"k_anonymity": {"required": 5, "achieved": 3},
              "t_closeness": {"required": 0.2, "achieved": 0.35},
              "published_columns": {"required": 5, "columns": {"weight": 1, "zip": 2}},
              "rounding": {"columns": {}, "model": "..."}}
    verdict = decide(checks, kept=("person_id",))
    assert verdict.status == NOT_PROTECTED and not verdict.protected
    assert verdict.reasons == (
        "k anonymity: required 5, achieved 3", "t closeness: required 0.2, achieved 0.35",
        "identifier-like column(s) published on purpose: person_id",
        "published column(s) that break the required k: weight (k = 1 with it), zip "
        "(k = 2 with it)")
    assert verdict.headline == "Not protected: " + "; ".join(verdict.reasons) + "."


def test_published_columns_is_not_an_unmet_model_of_its_own() -> None:
    """It has a required k but no achieved level: only the columns it names count."""
    verdict = decide({**K5, "published_columns": {"required": 5, "columns": {"w": 1}}})
    assert "achieved n/a" not in verdict.headline
    assert verdict.reasons == ("published column(s) that break the required k: w (k = 1 with "
                               "it)",)


def test_without_a_required_k_the_status_says_so() -> None:
    plain = decide({"k_anonymity": {"required": None, "achieved": 3}})
    assert plain.status == NO_K_REQUIRED and not plain.protected
    assert plain.headline == ("No k was required: the published file is 3-anonymous on its "
                              "quasi-identifiers.")
    lowered = decide({"k_anonymity": {"required": None, "achieved": 3},
                      "published_columns": {"required": 3, "columns": {"w": 1}}})
    assert lowered.status == NO_K_REQUIRED
    assert lowered.headline.endswith("; published column(s) that lower it: w (k = 1 with it).")
    broken_dp = decide({"k_anonymity": {"required": None, "achieved": 1},
                        "differential_privacy": {"epsilon": 1.0, "holds": False}})
    assert broken_dp.status == NOT_PROTECTED
    assert "epsilon-differential privacy does not hold (epsilon = 1)" in broken_dp.headline


@pytest.fixture(scope="module")
def weighted():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": np.repeat([30.0, 40.0, 50.0, 60.0], 5),
                       "weight": rng.permutation(20) + 0.5})
    with pytest.warns(PrivacyLeakWarning):
        return anonymize(df, quasi_identifiers=["age"], weights="weight", k=5, random_state=0)


def test_a_release_carries_the_verdict_of_its_own_checks(weighted) -> None:
    assert weighted.verdict == decide(weighted.checks)
    assert weighted.verdict.status == NOT_PROTECTED
    summary = json.loads(weighted.to_json())
    assert summary["verdict"] == {"protected": False, "status": NOT_PROTECTED,
                                  "headline": weighted.verdict.headline,
                                  "reasons": list(weighted.verdict.reasons)}
    assert pickle.loads(pickle.dumps(weighted)).verdict == weighted.verdict
    # changed checks make a new verdict: it can never disagree with them
    checks = {k: v for k, v in weighted.checks.items() if k != "published_columns"}
    assert dataclasses.replace(weighted, checks=checks).verdict.status == PROTECTED
    kept = dataclasses.replace(weighted, checks=checks,
                               params={**weighted.params, "keep": ("weight",)})
    assert kept.verdict.reasons == ("identifier-like column(s) published on purpose: weight",)

"""``microagg report`` on a mixed release: the NCP that ``anonymize`` reports as its headline
loss is recomputed from the original and published tables, and is the report's headline."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg._pipeline.verify import published_classes
from microagg.audit.assess import assess_release
from microagg.hierarchy import Hierarchy
from microagg.metrics.headline import GENERALIZED_LOSS, headline_loss
from microagg.report.html import render_report

QI = ["age", "income", "sex", "region"]
REGIONS = Hierarchy.from_mapping({"*": {"north": ["N1", "N2"], "south": ["S1", "S2", "S3"]}})


def _mixed(n: int = 120) -> pd.DataFrame:
    """Continuous numbers (many decimals), so that two groups never publish the same means:
    the published equivalence classes are then exactly the release's groups, the groups the
    pipeline's NCP is computed on (two groups with identical published values would merge
    into one class, whose wider spread the assessed NCP would then count)."""
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "age": rng.normal(45.0, 12.0, n), "income": rng.lognormal(10.0, 0.8, n),
        "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(["N1", "N2", "S1", "S2", "S3"], n)})


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = len(set(zip(a.tolist(), b.tolist(), strict=True)))
    return pairs == len(np.unique(a)) == len(np.unique(b))


@pytest.mark.parametrize("hierarchies", [None, {"region": REGIONS}],
                         ids=["flat", "region-hierarchy"])
def test_assessed_ncp_equals_the_pipelines(hierarchies):
    original = _mixed()
    release = microagg.anonymize(original, quasi_identifiers=QI, k=5, random_state=0,
                                 hierarchies=hierarchies)
    assert _same_partition(release.labels, published_classes(release.data, QI))
    assessed = assess_release(original, release.data, quasi_identifiers=QI,
                              hierarchies=hierarchies)
    assert 0 < release.metrics["ncp"] < 1
    assert assessed.metrics["ncp"] == pytest.approx(release.metrics["ncp"], abs=1e-9)
    measure, value = headline_loss(assessed.metrics)
    assert measure is GENERALIZED_LOSS
    assert value == pytest.approx(100 * release.metrics["ncp"], abs=1e-7)
    page = re.sub(r"data:image/png;base64,[^']*", "IMG", render_report(assessed, original))
    assert "normalized certainty penalty" in page


def test_numeric_release_keeps_sse_sst_and_missing_values_give_the_release_figures():
    original = _mixed()
    release = microagg.anonymize(original[["age", "income"]],
                                 quasi_identifiers=["age", "income"], k=5, random_state=0)
    assessed = assess_release(original[["age", "income"]], release.data,
                              quasi_identifiers=["age", "income"])
    assert "ncp" not in assessed.metrics
    assert headline_loss(assessed.metrics)[0].key == "information_loss"
    gappy = original.copy()
    gappy.loc[[3, 8, 21, 40, 77], "sex"] = None
    gappy.loc[[5, 9, 33, 60, 90], "income"] = np.nan
    made = microagg.anonymize(gappy, quasi_identifiers=QI, k=5, random_state=0)
    assessed = assess_release(gappy, made.data, quasi_identifiers=QI)
    # the missingness patterns measured as the release measured them: its own figures
    assert "ncp_records" not in assessed.metrics
    assert assessed.metrics["ncp"] == pytest.approx(made.metrics["ncp"], abs=1e-12)
    assert assessed.metrics["information_loss"] == pytest.approx(
        made.metrics["information_loss"], abs=1e-9)

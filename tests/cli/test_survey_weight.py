"""The sampling weight is published as read: ``microagg anonymize --weight`` (or a schema's
``role = "weight"``) on a CSV, written as CSV or Parquet, in a separate CLI process."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from microagg.cli._common import EXIT_NOT_PROTECTED

MICROAGG = str(Path(sys.executable).with_name("microagg"))


def _survey(folder: Path, n: int = 400) -> tuple[Path, list[str]]:
    """Persons in households of 1-4 sharing a weight with 3 decimals (589.554 among them:
    the mean of several copies of such a number is often 1 ulp off, 589.5540000000001)."""
    rng = np.random.default_rng(9)
    household = np.repeat(np.arange(n), rng.integers(1, 5, size=n))[:n]
    # up to 3 decimals, as a number's shortest text (770.02, not 770.020): every field
    # round-trips through a double
    weights = [repr(round(float(w), 3)) for w in rng.uniform(100, 900, size=n)]
    weights[0] = "589.554"
    path = folder / "survey.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "income", "sex", "weight"])
        for i in range(n):
            writer.writerow([int(rng.integers(18, 90)), f"{rng.lognormal(10, 0.5):.2f}",
                             "fm"[i % 2], weights[household[i]]])
    return path, [weights[h] for h in household]


@pytest.mark.parametrize(("qi", "suffix"), [  # MDAV, then MAGE; the other pairs exhaustive
    ("age,income", ".csv"), ("age,income,sex", ".parquet"),
    pytest.param("age,income", ".parquet", marks=pytest.mark.exhaustive),
    pytest.param("age,income,sex", ".csv", marks=pytest.mark.exhaustive)])
def test_the_weight_is_published_as_read(tmp_path: Path, qi: str, suffix: str) -> None:
    source, weights = _survey(tmp_path)
    output = tmp_path / f"out{suffix}"
    done = subprocess.run([MICROAGG, "anonymize", str(source), "-q", qi, "-k", "5",
                           "--weight", "weight", "--random-state", "0", "-o", str(output)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    # a household's weight tells its rows apart (the weight breaks k): written, not protected
    assert done.returncode == EXIT_NOT_PROTECTED, done.stderr
    if suffix == ".csv":
        with open(output, newline="", encoding="utf-8") as handle:
            published = [row["weight"] for row in csv.DictReader(handle)]
        assert published == weights  # the input's text, row by row
    else:
        column = pq.read_table(output).column("weight")
        assert str(column.type) == "double"
        assert [repr(w) for w in column.to_pylist()] == weights  # the same numbers

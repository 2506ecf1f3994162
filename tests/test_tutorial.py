"""docs/tutorial.md runs as written (issue 18): every ``sh`` block, in order, in one shell, as
separate CLI processes on a fresh folder, with the installed ``microagg`` on the PATH."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pandas as pd
import pytest

TUTORIAL = pathlib.Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
SETUP = ["make install", "source .venv/bin/activate",
         "mkdir -p ~/microagg-tutorial && cd ~/microagg-tutorial"]


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), flags=re.S)


def test_the_setup_block_is_what_a_fresh_clone_needs() -> None:
    """The first block installs and activates (done by ``make test`` itself here)."""
    assert _blocks()[0].strip().splitlines() == SETUP


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell tutorial")
def test_tutorial_runs_literally(tmp_path: pathlib.Path) -> None:
    script = "set -euo pipefail\nmkdir -p ~/microagg-tutorial && cd ~/microagg-tutorial\n"
    script += "\n".join(_blocks()[1:])
    bin_dir = pathlib.Path(sys.executable).parent
    env = {**os.environ, "HOME": str(tmp_path),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folder = tmp_path / "microagg-tutorial"
    # step 1: the identifiers refused (nothing written), then the exact dates of birth and
    # the weight (each breaks k by itself), then released with warnings
    assert "refused: nothing was written" in done.stdout
    assert "'person_id' (its name looks like an identifier)" in done.stderr
    assert "refused again: nothing was written" in done.stdout
    refusal = " ".join(done.stderr.split())
    assert "2 column(s) without a role break 5-anonymity by themselves" in refusal
    assert "'date_of_birth': 4,515 of its 4,515 distinct values occur on fewer than 5 rows " \
           "(4,070 on one row only)" in refusal
    assert "'weight': 1,966 of its 2,080 distinct values" in refusal
    assert "'weight' (k = 1)" in done.stdout
    # step 4: the schema's release, verified and rounded as declared
    published = pd.read_csv(folder / "survey_k5.csv")
    assert "person_id" not in published.columns and "weight" not in published.columns
    assert published["income"].isna().sum() == 412  # missing stays missing
    assert (published["income"].dropna() % 100 == 0).all()  # round = -2
    raw = pd.read_csv(folder / "survey_k5.csv", dtype=str)["income"].dropna()
    assert not raw.str.contains(".", regex=False).any()  # 16900, not 16900.0
    assert published["date_of_birth"].str.fullmatch(r"\d{4}-\d{2}").all()  # by month
    qi = ["age", "sex", "region", "household_size", "income", "date_of_birth", "education",
          "occupation"]
    sizes = published.groupby(qi, dropna=False).size()
    assert sizes.min() >= 5
    diverse = published.groupby(qi, dropna=False)["diagnosis"].nunique()
    assert diverse.min() >= 2
    for name in ("map.png", "survey_k5.html", "survey_k5_review.html", "survey_k5.sav"):
        assert (folder / name).stat().st_size > 0, name

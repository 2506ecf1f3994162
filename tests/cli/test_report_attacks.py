"""``microagg report --attacks [--control C]``: the attacks of a review in a CLI process, their
figures in the HTML report, the release's own figures repeated from its seed (with and
without a control), and the refusal of a control set that is not held-out records."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microagg._pipeline.attack_step import attack_seed
from microagg.audit.assess import assess_release
from microagg.audit.attacks_review import check_control, with_attacks
from microagg.metrics.attacks import attack_release, hold_out

QI = ["age", "income", "height", "region"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """400 records and 100 held out; the "release" is the original unchanged: each half of
    the known columns (age, income | height, region) picks out one person."""
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(3000, 800, n)
                       .round(0), "height": rng.normal(170, 10, n).round(1),
                       "region": rng.integers(1, 6, n), "health": rng.choice(list("abcd"), n)})
    kept, control = hold_out(df, 0.2, random_state=0)
    root = tmp_path_factory.mktemp("attacks")
    paths = {name: root / f"{name}.csv" for name in ("orig", "out", "control", "bad", "big")}
    kept.to_csv(paths["orig"], index=False)
    kept.to_csv(paths["out"], index=False)
    control.to_csv(paths["control"], index=False)
    control.drop(columns="health").to_csv(paths["bad"], index=False)
    pd.concat([control] * 5).to_csv(paths["big"], index=False)
    return paths, kept, control


def test_an_unchanged_release_is_linkable_and_its_report_says_so(files):
    paths, kept, control = files
    page = paths["orig"].parent / "r.html"
    done = _cli("report", str(paths["orig"]), str(paths["out"]), "-o", str(page),
                "-q", ",".join(QI), "-s", "health", "--attacks", "--control",
                str(paths["control"]), "--random-state", "3")
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    section = html[html.index("<h2>Attacks</h2>"):html.index("<h2>Group sizes")]
    # the same figures as attack_release on the three tables, the attacks' stream of seed 3
    direct = attack_release(kept, kept, control, secret=["health"], known=QI,
                            random_state=attack_seed(3))
    link = direct["linkability"]
    assert link["risk_ci"][0] > 0.8  # an unchanged release: nearly everyone linked
    assert f"<b>linkability</b>: risk {link['risk']:.2f} [{link['risk_ci'][0]:.2f}, " \
           f"{link['risk_ci'][1]:.2f}]" in section
    inference = direct["inference"]["health"]
    assert inference["risk_ci"][0] > 0.8  # the nearest record is the person's own
    assert f"{100 * inference['baseline']:.3g} % by random guessing" in section
    assert "inference of health" in section and f"Seed {attack_seed(3)}" in section


def test_the_review_carries_the_attacks_in_its_metrics(files):
    _, kept, control = files
    review = assess_release(kept, kept, quasi_identifiers=QI, sensitive=["health"])
    attacked = with_attacks(review, kept, control, quasi_identifiers=QI,
                            sensitive=["health"], random_state=3)
    got = attacked.metrics["attacks"]
    direct = attack_release(kept, kept, control, secret=["health"], known=QI, random_state=3)
    assert got["linkability"] == direct["linkability"]
    assert got["inference"]["health"] == direct["inference"]["health"]
    assert got["known"] == QI and got["random_state"] == 3 and got["n_control"] == 100
    assert "attacks" in attacked.summary()["metrics"]
    assert "attacks" not in review.metrics


def test_a_control_set_that_is_not_held_out_records_is_refused(files):
    paths, kept, control = files
    with pytest.raises(ValueError, match=r"missing \['health'\]"):
        check_control(kept, control.drop(columns="health"))
    with pytest.raises(ValueError, match=r"1 to 400 rows .* got 500"):
        check_control(kept, pd.concat([control] * 5))
    page = str(paths["orig"].parent / "bad.html")
    base = ["report", str(paths["orig"]), str(paths["out"]), "-o", page, "-q", ",".join(QI)]
    bad = _cli(*base, "--attacks", "--control", str(paths["bad"]))
    assert bad.returncode == 2 and "'--control' table must have the original's columns" \
        in " ".join(bad.stderr.split())
    big = _cli(*base, "--attacks", "--control", str(paths["big"]))
    assert big.returncode == 2 and "must hold 1 to 400 rows" in " ".join(big.stderr.split())
    alone = _cli(*base, "--control", str(paths["control"]))
    assert alone.returncode == 2 and "--control is read only by --attacks" in alone.stderr


def _close(a: Any, b: Any, tol: float = 1e-12) -> bool:
    """Equal figure for figure, numbers to ``tol``."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _close(a[k], b[k], tol) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=tol)
    return bool(a == b)


@pytest.mark.parametrize("held_out", [False, True])
def test_a_review_repeats_the_release_attacks_from_its_seed(files, held_out):
    """anonymize attacks its release (leave-one-out, or the control file); a review of the
    two files in another process, given only the release's summary, gets the same figures."""
    paths, _, _ = files
    root = paths["orig"].parent
    name = "held" if held_out else "loo"
    control = ["--control", str(paths["control"])] if held_out else []
    made = _cli("anonymize", str(paths["orig"]), "-q", ",".join(QI), "-k", "5", "-s",
                "health", "--random-state", "7", "-o", str(root / f"{name}.csv"),
                "--summary-json", str(root / f"{name}.json"), *control)
    assert made.returncode == 0, made.stderr
    review = _cli("report", str(paths["orig"]), str(root / f"{name}.csv"), "-o",
                  str(root / f"{name}.html"), "--summary-json", str(root / f"{name}.json"),
                  "--attacks", *control, "--review-json", str(root / f"{name}-review.json"))
    assert review.returncode == 0, review.stderr
    released = json.loads((root / f"{name}.json").read_text())["metrics"]["attacks"]
    reviewed = json.loads((root / f"{name}-review.json").read_text())["metrics"]["attacks"]
    assert released["random_state"] == attack_seed(7)
    assert released["compared_with"] == ("held-out records" if held_out else "leave-one-out")
    assert _close(released, reviewed)
    assert "<h2>Attacks</h2>" in (root / f"{name}.html").read_text()

"""``microagg risk`` attacks the file as if it were published unchanged (a CLI process): on
a file whose keys single everyone out the attacks succeed near their maximum, the JSON and
the printed table carry them, they are the release's own figures (the same function, the
same seed stream), and a control file that is not held-out records is refused by name."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microagg._pipeline.attack_step import attack_figures, attack_seed
from microagg.io.tables import read_table

KEYS = ["code", "income", "region"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, its table 200 columns wide (the width another test
    may have left in the environment would wrap the lines read below)."""
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


def _text(stdout: str) -> str:
    """The printed table's words, borders and line breaks dropped."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", stdout).split())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """300 records whose ``code`` is unique (every one-column statement on it singles out one
    person), 80 more of the same population held out, and two bad controls."""
    rng = np.random.default_rng(0)
    n = 380
    df = pd.DataFrame({"code": rng.permutation(n) * 7 + 11,
                       "income": rng.normal(3000, 800, n).round(1),
                       "region": rng.choice(list("abcd"), n),
                       "health": rng.choice(list("xyz"), n)})
    root = tmp_path_factory.mktemp("risk_attacks")
    df.iloc[:300].to_csv(root / "in.csv", index=False)
    df.iloc[300:].to_csv(root / "control.csv", index=False)
    df.iloc[300:].drop(columns="health").to_csv(root / "bad.csv", index=False)
    pd.concat([df] * 2).to_csv(root / "big.csv", index=False)
    return root


def _risk(folder, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return _cli("risk", "--attacks", str(folder / "in.csv"), "-q", ",".join(KEYS), "-s", "health",
                "--no-suda", "--summary-json", str(folder / f"{name}.json"), *extra)


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


def test_unique_keys_are_attacked_near_the_maximum_and_printed(folder):
    done = _risk(folder, "plain", "--random-state", "5")
    assert done.returncode == 0, done.stderr
    attacks = json.loads((folder / "plain.json").read_text())["attacks"]
    assert attacks["compared_with"] == "leave-one-out"
    assert attacks["known"] == KEYS and attacks["n_attacked"] == 300
    assert attacks["seed"] == 5 and attacks["random_state"] == attack_seed(5)
    # every person is singled out by her own code, linked through her own record and her
    # health read off it; with her record left out nobody is (control near 0): risk near 1
    for name in ("singling_out", "singling_out_multivariate", "linkability"):
        assert attacks[name]["risk_ci"][0] > 0.95, (name, attacks[name])
    assert attacks["inference"]["health"]["risk_ci"][0] > 0.95
    worst = max([attacks[n] for n in ("singling_out", "singling_out_multivariate",
                                      "linkability")] + [attacks["inference"]["health"]],
                key=lambda r: r["risk"])
    assert f"attacks, highest risk {worst['risk']:.2f} [{worst['risk_ci'][0]:.2f}, " \
           f"{worst['risk_ci'][1]:.2f}]" in _text(done.stdout)


def test_the_figures_are_the_release_attacks_of_the_file_unchanged(folder):
    done = _risk(folder, "same", "--random-state", "5")
    assert done.returncode == 0, done.stderr
    got = json.loads((folder / "same.json").read_text())["attacks"]
    table = read_table(folder / "in.csv")
    direct = attack_figures(table, table, None, quasi_identifiers=KEYS,
                            sensitive=["health"], random_state=attack_seed(5))
    assert direct is not None
    assert _close({**direct, "seed": 5}, got)


def test_a_control_file_is_compared_with_and_no_attacks_leaves_none(folder):
    done = _risk(folder, "held", "--control", str(folder / "control.csv"))
    assert done.returncode == 0, done.stderr
    attacks = json.loads((folder / "held.json").read_text())["attacks"]
    assert attacks["compared_with"] == "held-out records" and attacks["n_control"] == 80
    assert "against held-out records" in _text(done.stdout)
    done = _risk(folder, "off", "--no-attacks")
    assert done.returncode == 0, done.stderr
    assert "attacks" not in json.loads((folder / "off.json").read_text())
    assert "attacks, highest risk" not in done.stdout


@pytest.mark.parametrize(("extra", "message"), [
    (["--control", "bad.csv"], "The '--control' table must have the original's columns "
                               "(it holds original records held out before the release): "
                               "missing ['health']"),
    (["--control", "big.csv"], "The '--control' table must hold 1 to 300 rows"),
    (["--no-attacks", "--control", "control.csv"], "--control is read only by the attacks"),
])
def test_a_control_that_is_not_held_out_records_is_refused(folder, extra, message):
    extra = [str(folder / e) if e.endswith(".csv") else e for e in extra]
    done = _risk(folder, "refused", *extra)
    assert done.returncode == 2, done.stdout
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert not (folder / "refused.json").exists()

"""The attacks every in-memory release is tried with (``metrics["attacks"]``): the
leave-one-out control on the issue's two pinned properties (an unchanged file is attacked at
the maximum, an independent sample does not beat the control), the opt-out, the recorded
seed, the masking unchanged by the attacks, and the refusals of a bad control set."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.attack_step import attack_seed
from microagg.metrics._attack_tables import AttackOptions
from microagg.metrics.attacks import LEAVE_ONE_OUT, attack_release, hold_out

ATTACKS = ("singling_out", "singling_out_multivariate", "linkability")


def _survey(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Integer ages, rounded incomes and heights (ties), a region code, a secret drawn
    independently of everything (only the record itself tells it)."""
    return pd.DataFrame({
        "age": rng.integers(18, 90, n), "income": rng.lognormal(10, 0.5, n).round(-1),
        "height": rng.normal(170, 10, n).round(), "region": rng.choice(list("abcde"), n),
        "secret": rng.choice(list("xyz"), n)})


def _anonymize(df: pd.DataFrame, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # homogeneity and published-columns notes
        return anonymize(df, quasi_identifiers=["age", "income"], k=5, sensitive="secret",
                         identifiers=["height", "region"],
                         random_state=7, **options)


def test_an_unchanged_file_is_attacked_at_the_maximum_without_a_control() -> None:
    df = _survey(1000, np.random.default_rng(0))
    out = attack_release(df, df, secret="secret", options=AttackOptions(n_attacks=500),
                         random_state=0)
    assert out["compared_with"] == LEAVE_ONE_OUT and out["n_control"] == 0
    # a predicate singling out one released record singles out its original, and nobody
    # once she is left out; her secret is read off her own record, and off another's (a
    # third of the time, three codes at random) once it is left out
    for name in ("singling_out", "singling_out_multivariate"):
        assert out[name]["success"] > 0.95 and out[name]["control"] < 0.05
        assert out[name]["risk_ci"][0] > 0.9
    inferred = out["inference"]["secret"]
    assert inferred["success"] > 0.98 and inferred["control"] < 0.45
    assert inferred["risk_ci"][0] > 0.95


def test_independent_rows_do_not_beat_the_leave_one_out_control() -> None:
    # a fresh sample in place of the records: leaving out row i of an unrelated table changes
    # almost nothing, so the control equals the attack. The 95 % interval's one-sided false
    # alarm is 2.5 % per attack (independent guesses); five fixed seeds, four attacks: the
    # lower bound is 0 on every one (seeds 0..4 measured: every lower bound 0.0).
    for seed in range(5):
        rng = np.random.default_rng(seed)
        df = _survey(1000, rng)
        out = attack_release(df, _survey(1000, rng), secret="secret",
                             options=AttackOptions(n_attacks=500), random_state=seed)
        results = [out[name] for name in ATTACKS] + [out["inference"]["secret"]]
        assert [r["risk_ci"][0] for r in results] == [0.0] * 4, seed
    # random guessing would have called the univariate singling out a risk: the rare values
    # of a fresh sample single out as many originals as the release's own would
    assert out["singling_out"]["beats_baseline"]


def test_every_release_is_attacked_from_its_seed_and_the_masking_is_the_same() -> None:
    df = _survey(300, np.random.default_rng(1))
    release = _anonymize(df)
    attacks = release.metrics["attacks"]
    assert attacks["compared_with"] == LEAVE_ONE_OUT
    assert attacks["random_state"] == attack_seed(release.seed)
    assert attacks["known"] == ["age", "income"] and "secret" in attacks["inference"]
    assert attacks["n_attacked"] == 300 and attacks["sentence"].startswith("No held-out")
    # the same figures as attack_release on the original and the published table
    direct = attack_release(df, release.data, secret=["secret"], known=["age", "income"],
                            options=AttackOptions(n_attacks=2000, singling_out_rows=2000),
                            random_state=attacks["random_state"])
    assert attacks["linkability"] == direct["linkability"]
    assert attacks["inference"] == direct["inference"]
    # k = 5 on the keys: a released record the intruder finds on age and income is one of
    # five alike, and leaving hers out leaves four: the linkage learns little more
    assert attacks["linkability"]["risk"] < 0.1
    off = _anonymize(df, attacks=False)
    assert "attacks" not in off.metrics and "attacks" not in off.timings
    assert off.data.equals(release.data) and off.seed == release.seed
    assert '"attacks"' not in off.to_json() and '"attacks"' in release.to_json()


def test_a_control_set_is_what_the_attacks_compare_with() -> None:
    df = _survey(400, np.random.default_rng(2))
    kept, control = hold_out(df, 0.25, random_state=0)
    release = _anonymize(kept, control=control)
    attacks = release.metrics["attacks"]
    assert attacks["compared_with"] == "held-out records" and attacks["n_control"] == 100
    assert attacks["inference"]["secret"]["compared_with"] == "held-out records"


def test_a_bad_control_or_opt_out_is_refused_by_name() -> None:
    df = _survey(100, np.random.default_rng(3))
    with pytest.raises(ValueError, match=r"'control' table must have the original's columns"
                                         r".*missing \['secret'\]"):
        _anonymize(df, control=df.drop(columns="secret").iloc[:10])
    with pytest.raises(ValueError, match=r"'control' table must hold 1 to 100 rows .* got "
                                         r"200"):
        _anonymize(df, control=pd.concat([df, df]))
    with pytest.raises(ValueError, match=r"'control' parameter of anonymize is what the "
                                         r"attacks compare with; attacks=False"):
        _anonymize(df, attacks=False, control=df.iloc[:10])
    with pytest.raises(ValueError, match=r"'attacks' parameter of anonymize must be True or "
                                         r"False. Got 'no'"):
        _anonymize(df, attacks="no")

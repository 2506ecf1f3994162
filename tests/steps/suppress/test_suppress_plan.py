"""The suppression steps in a plan: suppress + microaggregate on a small synthetic household
survey from the API, a schema's ``[[steps]]`` and the CLI's ``--step`` (the same bytes, the
details in the summary), suppressed cells published as missing in CSV and SPSS (value labels
and categories kept, the verifier holding on the file read back), the two counts of k named,
risk-threshold suppression with weights, and bad input refused before any work."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.cli import EXIT_USER_ERROR
from microagg.exceptions import SchemaError
from microagg.io.tables import read_table, write_table
from microagg.schema.schema_file import load_schema
from microagg.steps import STEPS, Plan, SuppressRisk, SuppressToK
from microagg.steps._options import option_docs
from microagg.steps._state import StepRoles
from microagg.steps.suppress import step as suppress_step
from microagg.steps.suppress.counts import encode

from ._brute import sizes

KEYS = ("region", "sex", "education")
EXACT = "suppress keys=region,sex,education k=3 mode=exact time-limit=20"
AGE = "microaggregate quasi-identifiers=age k=3"
SCHEMA = """
[columns.region]
role = "quasi-identifier"
[columns.sex]
role = "quasi-identifier"
[columns.education]
role = "quasi-identifier"
[columns.age]
role = "quasi-identifier"
[columns.income]
role = "sensitive"

[[steps]]
step = "suppress"
keys = ["region", "sex", "education"]
k = 3
mode = "exact"
time_limit = 20

[[steps]]
step = "microaggregate"
quasi_identifiers = ["age"]
k = 3
"""


def _survey(n_households: int = 60, seed: int = 7) -> pd.DataFrame:
    """A household survey: region constant within a household, 1-4 members each."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 5, n_households)
    region = rng.choice(["North", "South", "East", "West", "Centre"], n_households,
                        p=[0.3, 0.3, 0.2, 0.15, 0.05])
    n = int(size.sum())
    return pd.DataFrame({
        "household": np.repeat([f"H{i:03d}" for i in range(n_households)], size),
        "region": np.repeat(region, size),
        "sex": rng.choice(["f", "m"], n),
        "education": rng.choice(["primary", "secondary", "tertiary", "none"], n,
                                p=[0.3, 0.4, 0.25, 0.05]),
        "age": rng.integers(0, 90, n),
        "income": rng.lognormal(10, 0.5, n).round(0)})


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def _blanked(before: pd.DataFrame, after: pd.DataFrame, key: str) -> int:
    return int((after[key].isna() & before[key].notna()).sum())


def test_the_suppression_steps_are_registered_with_their_references_and_help():
    for name, options in (("suppress", SuppressToK), ("suppress_risk", SuppressRisk)):
        entry = STEPS[name]
        assert entry.options is options and not entry.randomized
        assert entry.load() and entry.load_verifier() and entry.load_checker()
        assert all(option_docs(options).values()), name  # every option has its help
    assert "localSuppression" in STEPS["suppress"].reference
    assert "HiGHS" in STEPS["suppress"].reference
    assert "localSupp" in STEPS["suppress_risk"].reference
    assert SuppressToK(KEYS, k=3).required_k == 3
    assert SuppressToK(KEYS, k=(2, 4), combs=(2, 3)).required_k == 4  # the size-3 subset
    assert SuppressToK(KEYS, k=3, combs=2).required_k is None  # no promise on all three
    assert SuppressRisk(KEYS, threshold=0.2).required_k is None
    assert Plan.from_records(Plan.from_text([EXACT]).to_records()) == Plan.from_text([EXACT])


def test_suppress_then_microaggregate_records_cells_per_column_and_the_certificate():
    df = _survey().drop(columns="household")
    release = microagg.anonymize(df, plan=Plan.from_text([EXACT, AGE]), sensitive="income",
                                 random_state=0)
    out = release.data
    assert len(out) == len(df) and out["income"].tolist() == df["income"].tolist()
    codes = encode(out, KEYS)
    assert sizes(codes, "any").min() >= 3  # recounted pairwise, sdcMicro's freqCalc rule
    details = release.summary()["steps"][0]["details"]
    per_column = {key: _blanked(df, out, key) for key in KEYS}
    assert {key: details["columns"][key]["cells_suppressed"] for key in KEYS} == per_column
    assert details["cells_suppressed"] == sum(per_column.values()) > 0
    for key in KEYS:
        assert details["columns"][key]["share"] == pytest.approx(per_column[key] / len(df))
    certificate = details["exact"]
    assert certificate["optimal"] and certificate["gap"] == 0.0
    assert certificate["lower_bound"] == certificate["cells"] == details["cells_suppressed"]
    suppress, micro = release.checks["steps"]
    assert suppress["holds"] and micro["holds"] and suppress["required"] == 3
    assert suppress["achieved"] >= 3
    shown = published_k(out, KEYS)
    assert suppress["achieved_missing_as_category"] == shown
    assert "missing='any'" in suppress["counted"] and "as checks['k_anonymity']" in \
        suppress["counted"]
    assert release.checks["k_anonymity"]["required"] is None
    assert shown == 1  # 5 cells blanked; each blanked record is alone as a category
    assert any("as checks['k_anonymity'] counts, they are 1-anonymous" in w
               for w in release.warnings)  # the two counts disagree: said, not left silent


def published_k(table: pd.DataFrame, keys: tuple[str, ...]) -> int:
    """The smallest class of identical keys, a missing value a category (counted here)."""
    return int(table.loc[:, list(keys)].astype(object).fillna("<NA>")
               .value_counts().min())


def test_missing_as_a_category_makes_both_counts_agree_and_household_keys_stay_constant():
    df = _survey(seed=3)
    plan = Plan([SuppressToK(KEYS, k=3, missing="category", household_keys="region")])
    release = microagg.anonymize(df, plan=plan, sensitive=["income", "age"],
                                 households="household", random_state=0)
    out = release.data
    assert sizes(encode(out, KEYS), "category").min() >= 3
    (check,) = release.checks["steps"]
    assert check["holds"] and check["households_checked"] and check["households_varying"] == 0
    assert check["achieved"] == check["achieved_missing_as_category"] == published_k(out, KEYS)
    assert release.checks["k_anonymity"]["achieved"] == check["achieved"]  # the same keys
    region = out["region"].groupby(df["household"]).nunique(dropna=False)
    assert (region == 1).all()  # a household's region blanked for all its members or none
    assert not any("checks['k_anonymity'] counts" in w for w in release.warnings)


def test_api_schema_and_cli_publish_the_same_bytes_with_the_details_in_the_summary(tmp_path):
    source = tmp_path / "survey.csv"
    _survey().drop(columns="household").to_csv(source, index=False)
    schema_file = tmp_path / "survey.toml"
    schema_file.write_text(SCHEMA, encoding="utf-8")
    api = microagg.anonymize(pd.read_csv(source), plan=Plan.from_text([EXACT, AGE]),
                             sensitive="income", random_state=0)
    by_schema = microagg.anonymize(pd.read_csv(source), schema=load_schema(schema_file),
                                   random_state=0)
    assert by_schema.params["plan"] == api.params["plan"]
    api.data.to_csv(tmp_path / "api.csv", index=False)
    outputs = {}
    for face, args in (("cli", ["-s", "income", "--step", EXACT, "--step", AGE]),
                       ("file", ["--schema", schema_file])):
        out, summary = tmp_path / f"{face}.csv", tmp_path / f"{face}.json"
        done = _cli("anonymize", source, *args, "--random-state", "0", "-o", out,
                    "--summary-json", summary)
        assert done.returncode == 0, done.stderr
        outputs[face] = out.read_bytes()
        written = json.loads(summary.read_text())
        assert written["verdict"] == api.verdict.summary()
        assert written["steps"][0]["details"]["cells_suppressed"] == \
            api.steps[0].details["cells_suppressed"] > 0
        assert written["steps"][0]["details"]["exact"]["optimal"] is True
    assert outputs["cli"] == outputs["file"] == (tmp_path / "api.csv").read_bytes()
    back = read_table(tmp_path / "cli.csv")  # suppressed cells: empty fields, read as missing
    assert sum(_blanked(pd.read_csv(source), back, key) for key in KEYS) == \
        api.steps[0].details["cells_suppressed"]
    roles = StepRoles(quasi_identifiers=(*KEYS, "age"))
    assert suppress_step.verify_suppress_step(SuppressToK(KEYS, k=3), pd.read_csv(source),
                                              back, roles)["holds"]


def test_suppressed_cells_are_system_missing_in_spss_with_value_labels_and_categories_kept(
        tmp_path):
    import pyreadstat

    df = _survey(seed=5).drop(columns="household")
    labels = {key: {float(i + 1): v for i, v in enumerate(sorted(df[key].unique()))}
              for key in KEYS}
    codes_of = {key: {v: c for c, v in labels[key].items()} for key in KEYS}
    source = tmp_path / "survey.sav"
    pyreadstat.write_sav(df.assign(**{key: df[key].map(codes_of[key]) for key in KEYS}),
                         source, variable_value_labels=labels)
    table = read_table(source)  # every key read as its labels, as sdcMicro users expect
    assert table.loc[:, list(KEYS)].equals(df.loc[:, list(KEYS)].astype(table["sex"].dtype))
    release = microagg.anonymize(table, plan=Plan([SuppressToK(KEYS, k=4)]),
                                 sensitive=["income", "age"])
    out = release.data
    blank = {key: out[key].isna() & table[key].notna() for key in KEYS}
    assert sum(int(b.sum()) for b in blank.values()) == \
        release.steps[0].details["cells_suppressed"] > 0
    path = tmp_path / "out.sav"
    write_table(out, path)
    written, meta = pyreadstat.read_sav(path)
    for key in KEYS:
        assert meta.variable_value_labels[key] == labels[key]  # labels kept
        assert written[key].isna().tolist() == out[key].isna().tolist()  # system missing
        kept = written.loc[~blank[key], key]
        assert kept.tolist() == df.loc[~blank[key], key].map(codes_of[key]).tolist()
    back = read_table(path)
    roles = StepRoles(quasi_identifiers=KEYS)
    assert suppress_step.verify_suppress_step(SuppressToK(KEYS, k=4), table, back,
                                              roles)["holds"]
    # a categorical key keeps its categories, unused ones too, its suppressed cells missing
    as_category = table.assign(region=pd.Categorical(table["region"],
                                                     categories=["Centre", "East", "Mars",
                                                                 "North", "South", "West"]))
    published = microagg.anonymize(as_category, plan=Plan([SuppressToK(KEYS, k=4)]),
                                   sensitive=["income", "age"]).data
    assert list(published["region"].cat.categories) == \
        list(as_category["region"].cat.categories)
    assert published["region"].isna().sum() >= as_category["region"].isna().sum()


def test_risk_threshold_suppression_with_weights_holds_on_the_published_table():
    df = _survey(seed=11).drop(columns="household")
    df["w"] = np.random.default_rng(1).uniform(5, 15, len(df)).round(1)
    plan = Plan.from_text(["suppress_risk keys=region,sex,education threshold=0.1"])
    release = microagg.anonymize(df, plan=plan, sensitive=["income", "age"], weights="w",
                                 keep=["w"])
    (check,) = release.checks["steps"]
    details = release.steps[0].details
    assert details["risk_before"]["above"] > 0 and details["risk_after"]["above"] == 0
    assert check["holds"] and check["achieved"] <= 0.1 and check["required"] == 0.1
    assert details["cells_suppressed"] == sum(_blanked(df, release.data, key) for key in KEYS)
    assert not suppress_step.verify_suppress_risk_step(
        SuppressRisk(KEYS, threshold=0.1), df, df, StepRoles(KEYS, weight="w"))["holds"]


@pytest.mark.parametrize(("plan", "roles", "message"), [
    (["suppress keys=region,job k=3"], {},
     "Unknown column 'job' in quasi_identifiers. Available columns: 'household'"),
    (["suppress keys=region,age k=3"], {},
     "Step 1 of the plan (suppress): key 'age' is numeric (int64, "),
    (["suppress keys=region,sex k=3"], {"strata": "zone"},
     "k=3 is larger than stratum ['B'] of ['zone'], which has 2 record(s); k must be in "
     "[2, 2]"),
    (["suppress keys=region,sex k=3 household-keys=region"], {},
     "declares household_keys ['region'] but the release has no household column"),
    (["suppress keys=region,sex k=3 household-keys=sex"], {"households": "household"},
     "The household-level key 'sex' of step 'suppress' varies within"),
    (["suppress_risk keys=region,age threshold=0.2"], {},
     "Step 1 of the plan (suppress_risk): key 'age' is numeric"),
])
def test_bad_input_is_refused_before_any_step_runs(monkeypatch, plan, roles, message):
    df = _survey(seed=2)
    df["zone"] = np.where(np.arange(len(df)) < len(df) - 2, "A", "B")

    def never(*args, **kwargs):
        raise AssertionError("a step ran before the plan was checked")

    monkeypatch.setattr(suppress_step, "apply_suppress_step", never)
    monkeypatch.setattr(suppress_step, "apply_suppress_risk_step", never)
    with pytest.raises(SchemaError, match=re.escape(message)):
        microagg.anonymize(df, plan=Plan.from_text([*plan, AGE]),
                           sensitive=["income"], identifiers=["household"], **roles)


def test_options_refuse_an_unknown_importance_and_household_keys_in_the_exact_mode():
    with pytest.raises(ValueError, match=re.escape(
            "step 1 of the plan (suppress): The 'importance' option of step 'suppress' names "
            "['job'], which are not among its keys")):
        Plan.from_text(["suppress keys=region,sex k=3 importance=job,region"])
    with pytest.raises(ValueError, match="'household_keys' option of step 'suppress' "
                                         r"\(\['region'\]\) needs mode='heuristic'"):
        SuppressToK(KEYS, k=3, mode="exact", household_keys="region")


def test_several_strata_are_joined_into_one():
    df = pd.DataFrame({"region": ["N", "N", "S", "S", "S"], "a": ["x", "x", "x", "x", "y"],
                       "b": ["p", "p", "p", "p", "p"]})
    roles = StepRoles(("region",), strata=("a", "b"))
    plan = Plan([SuppressToK("region", k=2)])
    with pytest.raises(SchemaError, match=re.escape(
            "k=2 is larger than stratum ['y', 'p'] of ['a', 'b'], which has 1 record(s)")):
        suppress_step.check_suppress_step(plan.steps[0], df, 1, plan, roles=roles)
    joined, name = suppress_step._with_strata(df, ("a", "b"))
    assert joined[name].nunique() == 2 and list(joined.columns[:3]) == ["region", "a", "b"]


def test_the_cli_refuses_a_numeric_key_with_exit_2_and_writes_nothing(tmp_path):
    source = tmp_path / "survey.csv"
    _survey().drop(columns="household").to_csv(source, index=False)
    out = tmp_path / "out.csv"
    done = _cli("anonymize", source, "-s", "income", "--step",
                "suppress keys=region,sex,age k=3 mode=exact time-limit=20", "-o", out)
    assert done.returncode == EXIT_USER_ERROR, done.stderr
    said = " ".join(done.stderr.split())
    assert "key 'age' is numeric" in said and "band it in an earlier step" in said
    assert "Traceback" not in done.stderr and not out.exists()

"""Issue 16, items 6-9: constants published exactly, finite extremes handled, messages that
name the column and the real reason, warnings for unusable releases, a default time budget
for mdav-ls, and init-schema roles for unique measurements and constants."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import ConstantColumnWarning, LowUtilityWarning, anonymize
from microagg._pipeline.advice import LARGE_GROUPS, low_utility_message
from microagg.cli import app
from microagg.cli._common import match_columns, split_names
from microagg.exceptions import SchemaError
from microagg.io.tables import check_output_path, read_table
from microagg.models import enforce_l_diversity
from microagg.partition import local_search, quality_mode
from microagg.partition.blocking import fit_block_tree
from microagg.partition.local_search import default_time_limit
from microagg.schema.schema_file import load_schema, propose_schema

# -- item 6: constant quasi-identifiers ------------------------------------------------------


def test_constant_quasi_identifier_is_published_exactly_with_zero_loss():
    # the reproduction: 0.1 came back as 0.10000000000000002 and IL as inf
    df = pd.DataFrame({"a": [0.1] * 17})
    with pytest.warns(ConstantColumnWarning, match=r"'a' are constant.*information loss"):
        release = anonymize(df, quasi_identifiers="a", k=6, random_state=0)
    assert release.data["a"].tolist() == [0.1] * 17  # bit for bit
    assert release.metrics["information_loss"] == 0.0
    assert release.metrics["information_loss_original_units"] == 0.0
    assert release.metrics["information_loss_columns"] == ()
    assert release.k == 17


def test_constant_beside_a_varying_column_counts_only_the_varying_one():
    b = np.array([1.0, 2, 4, 8, 9, 15, 16, 23, 42, 50, 51, 60])
    df = pd.DataFrame({"a": [0.1] * 12, "b": b})
    with pytest.warns(ConstantColumnWarning):
        both = anonymize(df, quasi_identifiers=["a", "b"], k=3, random_state=0)
    alone = anonymize(df[["b"]], quasi_identifiers="b", k=3, random_state=0)
    assert both.data["a"].tolist() == [0.1] * 12
    assert both.metrics["information_loss_columns"] == ("b",)
    # the constant adds nothing to SSE or SST: the loss is the varying column's alone
    assert both.metrics["information_loss"] == pytest.approx(alone.metrics["information_loss"])
    assert both.metrics["information_loss_original_units"] == pytest.approx(
        alone.metrics["information_loss_original_units"])
    assert both.metrics["il1s"] == pytest.approx(alone.metrics["il1s"] / 2)  # mean over 2 cols


def test_constant_numeric_column_in_a_mixed_release_is_exact():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": [0.1] * 30, "x": rng.normal(size=30),
                       "c": rng.choice(["u", "v", "w"], 30)})
    release = anonymize(df, quasi_identifiers=["a", "x", "c"], k=5, method="mage",
                        random_state=0)
    assert release.data["a"].tolist() == [0.1] * 30
    assert release.metrics["information_loss_columns"] == ("x",)


# -- item 7: finite extremes -----------------------------------------------------------------

_EXTREMES = {
    "1e308": np.linspace(-1.0, 1.0, 40) * 1.7e308,
    "1e-300": np.linspace(0.0, 1e-300, 40),
    "subnormal": np.arange(1, 41) * 5e-324,
}


@pytest.mark.parametrize("name", list(_EXTREMES))
@pytest.mark.parametrize("options", [{}, {"aggregation": "median"},
                                     {"blocking": "kd", "block_size": 12}],
                         ids=["mean", "median", "blocked"])
def test_finite_extremes_are_released_like_ordinary_numbers(name, options):
    # the issue: refused as "NaN or infinite" in an internal 'X' parameter of mdav
    extreme = _EXTREMES[name]
    other = np.random.default_rng(0).normal(size=40)
    exponent = int(np.frexp(np.abs(extreme).max())[1])
    ordinary = np.ldexp(extreme, -exponent)  # the same column, exactly, near 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow along the way
        release = anonymize(pd.DataFrame({"a": extreme, "b": other}),
                            quasi_identifiers=["a", "b"], k=4, random_state=0, **options)
    reference = anonymize(pd.DataFrame({"a": ordinary, "b": other}),
                          quasi_identifiers=["a", "b"], k=4, random_state=0, **options)
    np.testing.assert_array_equal(release.labels, reference.labels)
    published = release.data["a"].to_numpy()
    assert np.isfinite(published).all() and release.k >= 4
    expected = np.ldexp(reference.data["a"].to_numpy(), exponent)
    if name == "subnormal":  # subnormal means round to a multiple of 5e-324
        np.testing.assert_allclose(published, expected, rtol=0, atol=5e-324)
    else:
        np.testing.assert_array_equal(published, expected)
    for metric in ("information_loss", "information_loss_original_units", "il1s"):
        assert np.isfinite(release.metrics[metric]), metric
    assert release.metrics["information_loss"] == pytest.approx(  # subnormals: rounded
        reference.metrics["information_loss"], rel=0.01 if name == "subnormal" else 1e-9)


def test_fit_block_tree_refuses_huge_values_with_the_reason():
    X = np.column_stack([np.linspace(-1.0, 1.0, 20) * 1e308, np.arange(20.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # was: numpy overflow warnings
        with pytest.raises(ValueError, match=r"'X' parameter of fit_block_tree holds 1e\+308 "
                                             r"in column 0.*squared distances.*overflow"):
            fit_block_tree(X, 10)


def test_generalizing_method_refuses_an_extreme_column_by_name():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": np.linspace(-1.0, 1.0, 30) * 1.7e308, "b": rng.normal(size=30),
                       "s": rng.integers(0, 4, 30)})
    with pytest.raises(SchemaError, match=r"'a' \(largest magnitude 1\.7e\+308\).*method "
                                          r"'cdt' squares differences"):
        anonymize(df, quasi_identifiers=["a", "b"], sensitive="s", method="cdt", k=3,
                  random_state=0)


def test_epsilon_release_refuses_bounds_wider_than_the_float_range():
    df = pd.DataFrame({"a": np.linspace(-1.0, 1.0, 30) * 1.7e308, "b": np.arange(30.0)})
    with pytest.raises(SchemaError, match=r"bounds of 'a' \(from -1\.7e\+308 to 1\.7e\+308\) "
                                          r"span more than the largest float"):
        anonymize(df, quasi_identifiers=["a", "b"], k=3, epsilon=1.0,
                  bounds={"a": (-1.7e308, 1.7e308), "b": (0, 30)})


# datetime64 quasi-identifiers are microaggregated as dates in memory (issue 18, item 5:
# tests/pipeline/test_dates.py); periods and durations are still refused by their type
@pytest.mark.parametrize(("column", "hint"), [
    (pd.period_range("2020-01", periods=12, freq="M"), r"dtype period\[M\].*\.dt\.year"),
    (pd.to_timedelta(np.arange(12), unit="D"), r"dtype timedelta64.*total_seconds"),
])
def test_dates_and_durations_are_refused_by_type_not_by_hierarchy(column, hint):
    # the issue: "not in its hierarchy (flat)", a hierarchy the library built itself
    df = pd.DataFrame({"d": column, "x": np.arange(12.0)})
    with pytest.raises(SchemaError, match=r"'d' holds dates or durations \(" + hint) as error:
        anonymize(df, quasi_identifiers=["d", "x"], k=3, random_state=0)
    assert "hierarchy" not in str(error.value)


def test_complex_quasi_identifier_is_refused_not_truncated():
    df = pd.DataFrame({"c": np.arange(12) + 1j * np.arange(12), "x": np.arange(12.0)})
    with pytest.raises(SchemaError, match=r"'c' is complex-valued \(dtype complex128\) and "
                                          r"its imaginary part would be lost"):
        anonymize(df, quasi_identifiers=["c", "x"], k=3, random_state=0)


def test_cdt_median_message_names_the_method_not_categorical_columns():
    df = pd.DataFrame({"x": np.arange(12.0), "y": np.arange(12.0) ** 2,
                       "s": list("abcd") * 3})
    with pytest.raises(ValueError, match=r"Method 'cdt' generalizes.*mean, interval. "
                                         r"Got 'median'") as error:
        anonymize(df, quasi_identifiers=["x", "y"], sensitive="s", method="cdt",
                  aggregation="median", k=3, random_state=0)
    assert "categorical" not in str(error.value)


def test_unreachable_l_names_the_sensitive_column():
    df = pd.DataFrame({"x": np.arange(12.0), "s": list("abcd") * 3})
    with pytest.raises(SchemaError, match=r"distinct 5-diverse: sensitive column 's' reaches "
                                          r"only l = 4 .*4 distinct values\); ask for l <= 4"):
        anonymize(df, quasi_identifiers="x", sensitive="s", l=5, k=3, random_state=0)
    with pytest.raises(ValueError, match=r"sensitive column 'disease' reaches only l = 4"):
        enforce_l_diversity(np.zeros(12, dtype=np.intp), [df["s"].to_numpy()], l=5,
                            X=df[["x"]].to_numpy(), names=["disease"])


def test_cli_says_summary_json_is_the_output_not_the_input(tmp_path):
    pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20.0) ** 2}).to_csv(
        tmp_path / "in.csv", index=False)
    out = str(tmp_path / "out.csv")
    runner = CliRunner()
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "x,y", "-k", "3",
                                 "-o", out, "--summary-json", out])
    assert result.exit_code != 0
    assert "is also the '--output' path" in result.output
    assert "input file" not in result.output
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "x,y", "-k", "3",
                                 "-o", out, "--summary-json", str(tmp_path / "s.json"),
                                 "--report", str(tmp_path / "s.json")])
    assert "'--report' path" in result.output and "also the '--summary-json' path" \
        in result.output


# -- item 8: unusable releases, mdav-ls time budget ------------------------------------------


def test_cdt_with_groups_far_larger_than_k_warns_and_names_mdav():
    # the issue: cdt on 4,000 numeric rows made classes of 1,609 records without a word
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(50, 10, 200), "y": rng.lognormal(10, 1, 200),
                       "s": rng.integers(0, 20, 200)})
    with pytest.warns(LowUtilityWarning, match=r"groups average 100 records, 33 times k=3 "
                                               r".*method 'mdav' forms groups of k to 2k - 1"):
        release = anonymize(df, quasi_identifiers=["x", "y"], sensitive="s", method="cdt",
                            k=3, random_state=0)
    assert release.metrics["group_size_mean"] > LARGE_GROUPS * 3
    assert any("keeps little information" in w for w in release.warnings)


def test_an_ordinary_mdav_release_has_no_low_utility_warning():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowUtilityWarning)
        release = anonymize(df, quasi_identifiers=["x", "y"], k=3, random_state=0)
    assert release.warnings == ()


def test_low_utility_thresholds():
    ten_k = np.repeat(np.arange(4), 30)  # mean size 30 = 10 k for k = 3: not yet
    assert low_utility_message(ten_k, 3, 0.5, loss_name="NCP", method="cdt",
                               alternative="mdav") is None
    assert "more than 10 times k" in low_utility_message(
        np.repeat(np.arange(4), 31), 3, 0.5, loss_name="NCP", method="cdt", alternative="mdav")
    total = low_utility_message(np.repeat(np.arange(20), 3), 3, 0.9,
                                loss_name="information loss", method="mdav", alternative=None)
    assert "information loss is 90.0%" in total and "A smaller k keeps more" in total
    one = low_utility_message(np.zeros(5, dtype=np.intp), 3, 1.0, loss_name="NCP",
                              method="mdav", alternative=None)
    assert "the 5 records fit in one group only" in one


def test_default_time_budget_scales_with_n_and_is_capped():
    assert default_time_limit(4_580) == 55.8  # the file: 521 s with 200 rounds
    assert default_time_limit(100) < default_time_limit(1_000) < default_time_limit(10_000)
    assert default_time_limit(10**7) == 300.0


def test_mdav_ls_default_budget_is_applied_and_reported():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60)})
    release = anonymize(df, quasi_identifiers=["x", "y"], k=3, method="mdav-ls",
                        method_params={"rounds": 2}, random_state=0)
    budget = release.params["time_budget"]
    assert budget["seconds"] == default_time_limit(60) == 10.6
    assert budget["default"] is True  # reached only if compiling the kernels took 10 s:
    assert budget["reached"] is (budget["spent"] >= budget["seconds"])
    assert release.params["method_params"]["time_limit"] == 10.6
    assert release.summary()["params"]["time_budget"]["seconds"] == 10.6


def test_mdav_ls_reports_a_spent_budget(monkeypatch):
    monkeypatch.setattr(local_search, "TIME_BUDGET", (0.001, 0.0, 0.001))
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=120), "y": rng.normal(size=120)})
    release = anonymize(df, quasi_identifiers=["x", "y"], k=3, method="mdav-ls",
                        random_state=0)
    assert release.params["time_budget"]["reached"] is True
    assert release.params["time_budget"]["seconds"] == 0.001
    assert any("stopped at its default time budget of 0.001 s for 120 records" in w
               for w in release.warnings)
    assert np.bincount(release.labels).min() >= 3


def test_colgen_says_its_phases_can_depend_on_the_machine_before_its_budget_is_spent():
    """colgen's phases stop at shares of its budget: two runs with one random_state can differ
    (Census, 1,080 records, --refine 20: 12 s spent, different files), so the release says so
    whether or not the budget was reached, and never advises a time_limit=None it refuses."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60)})
    release = anonymize(df, quasi_identifiers=["x", "y"], k=3, method="colgen",
                        method_params={"time_limit": 30.0}, random_state=0)
    budget = release.params["time_budget"]
    assert budget["phased"] is True and budget["seconds"] == 30.0
    assert budget["reached"] is (budget["spent"] >= 30.0)
    note = [w for w in release.warnings if "stops its phases at shares" in w]
    assert len(note) == 1
    assert "time budget of 30 s (60 records" in note[0]
    assert "same random_state can differ" in note[0] and "time_limit=None" not in note[0]
    plain = anonymize(df, quasi_identifiers=["x", "y"], k=3, method="mdav-ls",
                      method_params={"rounds": 2}, random_state=0)
    assert plain.params["time_budget"]["phased"] is False
    assert not any("stops its phases" in w for w in plain.warnings)


def test_refine_seconds_overrides_the_default_budget(tmp_path):
    rng = np.random.default_rng(0)
    pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40)}).to_csv(
        tmp_path / "in.csv", index=False)
    result = CliRunner().invoke(app, [
        "anonymize", str(tmp_path / "in.csv"), "-q", "x,y", "-k", "3", "--refine", "0.5",
        "-o", str(tmp_path / "out.csv"), "--summary-json", str(tmp_path / "s.json"),
        "--random-state", "0"])
    assert result.exit_code == 0, result.output
    budget = json.loads((tmp_path / "s.json").read_text())["params"]["time_budget"]
    assert budget["seconds"] == 0.5 and budget["default"] is False
    assert "time budget" in result.output


def test_quality_mode_time_limit_values():
    X = np.random.default_rng(0).normal(size=(30, 2))
    assert np.bincount(quality_mode(X, 3, rounds=1, time_limit="auto", random_state=0)).min() >= 3
    with pytest.raises(ValueError, match=r"'time_limit' parameter of mdav-ls must be None, "
                                         r"'auto' or a number of seconds > 0. Got 'soon'"):
        quality_mode(X, 3, time_limit="soon")


# -- item 9: init-schema ---------------------------------------------------------------------


def test_init_schema_unique_measurements_and_constants(tmp_path):
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({
        "record": np.arange(1, n + 1),  # consecutive integers: a record number
        "expenditure": rng.permutation(np.arange(n)) * 37 + 1_000,  # unique integers
        "income": rng.lognormal(10, 1, n),  # unique floats
        "wave": [3.0] * n,  # constant
        "sampling_weight": [250.0] * n,  # constant, but a weight: a self-weighting sample
        "region": rng.choice(["n", "s"], n),
    })
    text = propose_schema(df)
    (tmp_path / "draft.toml").write_text(text)
    schema = load_schema(tmp_path / "draft.toml")
    assert schema.columns["expenditure"].role == "quasi-identifier"
    assert schema.columns["expenditure"].type == "numeric"
    assert schema.columns["income"].role == "quasi-identifier"
    assert schema.columns["wave"].role == "other"
    assert schema.columns["sampling_weight"].role == "weight"  # issue 19: its survey role
    assert schema.columns["record"].role == "identifier"
    assert "[columns.wave]  # constant: it tells no records apart" in text
    assert "[columns.expenditure]  # numeric, unique on each of the 40 rows: a measurement" \
        in text


# -- unlikely input: no traceback, and a message that names what is wrong --------------------


def _cli(*args: object, cwd: object = None) -> subprocess.CompletedProcess[str]:
    """The microagg command line, in a process of its own."""
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def test_schema_nested_too_deep_names_the_file(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")  # was: RecursionError
    with pytest.raises(SchemaError, match=r"deep\.toml' nests arrays or tables too deeply"):
        load_schema(deep)


def test_latin1_schema_names_the_file_the_byte_and_utf8(tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes('[columns.âge]\nrole = "quasi-identifier"\n'.encode("latin-1"))
    pd.DataFrame({"âge": np.arange(6.0)}).to_csv(tmp_path / "in.csv", index=False)
    done = _cli("anonymize", tmp_path / "in.csv", "--schema", latin, "-k", "3",
                "-o", tmp_path / "out.csv")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "latin.toml' is not UTF-8 text: byte 9 (0xe2)" in done.stderr
    assert "save it as UTF-8" in done.stderr


def test_bad_date_format_names_the_column_and_the_schema(tmp_path):
    schema = tmp_path / "s.toml"
    schema.write_text('[columns.d]\nrole = "quasi-identifier"\ntype = "date"\n'
                      'format = "%Q-%m"\n')
    with pytest.raises(SchemaError, match=r"s\.toml' has 1 problem.*\[columns\.d\]: format "
                                          r"'%Q-%m' is not a strftime format \('Q' is a bad"):
        load_schema(schema)
    df = pd.DataFrame({"d": ["2020-01"] * 6, "x": np.arange(6.0)})
    with pytest.raises(ValueError, match=r"dates\['d'\]\['format'\] '%Q-%m' is not a strftime"):
        anonymize(df, quasi_identifiers=["d", "x"], dates={"d": {"format": "%Q-%m"}}, k=3)


@pytest.mark.parametrize("first", ["1500-01-01", "3000-06-30"])
def test_dates_outside_the_nanosecond_range_are_microaggregated(first):
    # the issue: OutOfBoundsDatetime (pandas' nanoseconds hold 1677-09-21..2262-04-11)
    year = first[:4]
    dates = [first] + [f"{year}-01-{day:02d}" for day in range(2, 13)]
    df = pd.DataFrame({"d": dates, "x": np.arange(12.0)})
    release = anonymize(df, quasi_identifiers=["d", "x"], dates="d", k=3, random_state=0)
    published = pd.to_datetime(release.data["d"], format="%Y-%m-%d")
    assert (published.dt.year == int(year)).all() and release.k >= 3
    stamps = pd.DataFrame({"d": np.array(dates, dtype="datetime64[s]"), "x": np.arange(12.0)})
    as_datetimes = anonymize(stamps, quasi_identifiers=["d", "x"], k=3, random_state=0)
    assert (as_datetimes.data["d"].dt.year == int(year)).all()


def test_mixed_time_zones_name_the_column_and_the_rows():
    df = pd.DataFrame({"d": ["2020-01-01T10:00+01:00", "2020-01-01T10:00+02:00"] * 6,
                       "x": np.arange(12.0)})
    with pytest.raises(SchemaError, match=r"'d' is declared a date .* in 2 different time "
                                          r"zones, e.g. row 1 '2020-01-01T10:00\+01:00' and "
                                          r"row 2 .*write them all in one zone") as error:
        anonymize(df, quasi_identifiers=["d", "x"], dates="d", k=3)
    assert "utc=True" not in str(error.value)  # was pandas' advice, for its own call


def test_text_dates_in_one_time_zone_count_their_wall_time():
    df = pd.DataFrame({"d": [f"2020-01-{day:02d}T10:00+01:00" for day in range(1, 13)],
                       "x": np.arange(12.0)})  # was: TypeError, tz-naive and tz-aware
    release = anonymize(df, quasi_identifiers=["d", "x"], dates="d", k=3, random_state=0)
    assert release.data["d"].str.match(r"2020-01-\d\d$").all()


def test_file_engine_names_a_column_too_large_to_standardize(tmp_path):
    # the issue: "The 'X' parameter of fit_block_tree contains NaN or infinite values"
    pd.DataFrame({"b": np.arange(40.0), "a": np.linspace(-1.0, 1.0, 40) * 1e308}).to_csv(
        tmp_path / "huge.csv", index=False)
    done = _cli("anonymize", tmp_path / "huge.csv", "-q", "b,a", "-k", "3", "--engine", "file",
                "-o", tmp_path / "out.csv")
    assert done.returncode == 2, done.stderr
    assert "quasi-identifier(s) 'a' (largest magnitude 1e+308): the squares" in done.stderr
    assert "fit_block_tree" not in done.stderr and "RuntimeWarning" not in done.stderr
    assert not (tmp_path / "out.csv").exists()


def test_all_missing_sensitive_column_says_no_l_can_be_met():
    df = pd.DataFrame({"x": np.arange(12.0), "s": [None] * 12})
    with pytest.raises(SchemaError, match=r"sensitive column 's' has no observed value \(all "
                                          r"12 are missing.*no l >= 1 can be met") as error:
        anonymize(df, quasi_identifiers="x", sensitive="s", l=2, k=3, random_state=0)
    assert "l <= 0" not in str(error.value)  # was: "ask for l <= 0", though l >= 1


def test_sql_url_errors_name_the_url_not_a_parameter(tmp_path):
    database = tmp_path / "d.sqlite"
    with sqlite3.connect(database) as connection:
        pd.DataFrame({"x": np.arange(6.0)}).to_sql("people", connection, index=False)
    url = f"sqlite:///{database}"
    done = _cli("anonymize", url, "-q", "x", "-k", "3", "-o", tmp_path / "out.csv")
    assert done.returncode == 2 and "'path'" not in done.stderr
    assert f"The database URL '{url}' must give exactly one of table= and query=" \
        in done.stderr
    with pytest.raises(ValueError, match=r"in the database URL 'postgresql://me:\*\*\*@host/db"
                                         r"\?table=1x'") as error:
        read_table("postgresql://me:secret@host/db?table=1x")
    assert "secret" not in str(error.value)


@pytest.mark.parametrize(("given", "expected"), [
    (".", "The path '.' is a directory; give a file in it, ending in one of .csv"),
    ("-", "The path '-' stands for standard input or output, which microagg does not use"),
])
def test_a_directory_or_stdin_as_input_is_named_for_what_it_is(tmp_path, given, expected):
    # the issue: "unsupported extension '(none)'"
    done = _cli("anonymize", given, "-q", "x", "-k", "3", "-o", tmp_path / "out.csv",
                cwd=tmp_path)
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert "(none)" not in done.stderr


def test_a_directory_or_stdout_as_output_is_named_for_what_it_is(tmp_path):
    with pytest.raises(ValueError, match=r"'--summary-json' path '.*' is a directory; give a "
                                         r"file in it, ending in one of \.json"):
        check_output_path(tmp_path, extensions=(".json",), parameter="--summary-json")
    with pytest.raises(ValueError, match=r"'--output' path '-' stands for standard input or "
                                         r"output.*give a file path instead, e.g. data\.csv"):
        check_output_path("-", parameter="--output")


def test_cli_names_match_a_header_in_nfd_and_a_header_with_spaces(tmp_path):
    # the issue: "Unknown column 'ége' ... Available: 'ége'", and ' age ' could not be named
    nfd = unicodedata.normalize("NFD", "ége")
    rng = np.random.default_rng(0)
    pd.DataFrame({nfd: rng.normal(size=12), " age ": rng.normal(size=12),
                  "other": ["x"] * 12}).to_csv(tmp_path / "in.csv", index=False)
    typed = unicodedata.normalize("NFC", "ége")
    assert typed != nfd
    done = _cli("anonymize", tmp_path / "in.csv", "-q", f"{typed}, age ", "-k", "3",
                "-o", tmp_path / "out.csv", "--random-state", "0")
    assert done.returncode == 0, done.stderr
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == [nfd, " age ", "other"]  # the file's own spelling
    assert out.groupby([nfd, " age "]).size().min() >= 3  # both masked
    done = _cli("check", tmp_path / "out.csv", "-q", f'{typed},"  age "')
    assert done.returncode == 0, done.stderr


def test_split_names_keeps_quoted_spaces_and_match_columns_prefers_the_exact_name():
    assert split_names(['a, b', '" age "']) == ["a", "b", " age "]
    assert match_columns(["age", " age "], ["age", " age "]) == ["age", " age "]
    assert match_columns(["age"], [" age ", "age "]) == ["age"]  # two candidates: none
    assert match_columns(["zzz"], ["a"]) == ["zzz"]  # left for the library to report

"""Registry entries as data: bad inputs generated from every declared constraint, the traits
that replace name checks, the aggregators' warnings and verifiers, and the scaling rule."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from microagg._base.constraints import Constraint, Interval, Options, describe, invalid_values
from microagg._base.scaling import apply_scaler, fit_scaler
from microagg.aggregate.aggregators import AGGREGATORS, NOISY_AGGREGATORS, aggregate, is_noisy
from microagg.aggregate.registry import check_noise_within_groups
from microagg.exceptions import InternalError, PrivacyViolationError
from microagg.partition import PARTITIONERS

X = np.random.default_rng(0).standard_normal((30, 2))
VALUES = np.array([[1.0, 10.0], [2.0, 20.0], [6.0, 60.0], [10.0, 5.0], [30.0, 5.0],
                   [31.0, 6.0]])
LABELS = np.array([0, 0, 0, 1, 1, 1])
NORMALIZING = {"multidsort-ps", "meansort-ps", "multidsort-ps-nn", "meansort-ps-nn",
               "top-down", "bottom-up"}


def _has_type(constraints: tuple[Constraint, ...], value: Any) -> bool:
    return any(value is None if c is None else c.has_type(value) for c in constraints)


def _cases(registry: Any) -> list[Any]:
    return [pytest.param(name, param, bad, id=f"{name}-{param}-{bad!r}")
            for name, entry in sorted(registry.items())
            for param, rules in sorted(entry.constraints.items())
            for bad in invalid_values(rules)]


def _expected(rules: tuple[Constraint, ...], bad: Any) -> type[Exception]:
    return ValueError if _has_type(rules, bad) else TypeError


# --- the vocabulary --------------------------------------------------------------------------

@pytest.mark.parametrize(("rules", "text"), [
    ((Interval(int, 2, None, closed="left"),), "an int >= 2"),
    ((Interval(float, 0, 1, closed="both"),), "a float in [0, 1]"),
    ((Interval(float, 0, 1, closed="neither"),), "a float in (0, 1)"),
    ((Interval(float, None, 5, closed="right"),), "a float <= 5"),
    ((None, Interval(int, 2, None, closed="left")), "None or an int >= 2"),
    ((Options(("sse", "nearest")),), "one of sse, nearest"),
])
def test_constraint_words(rules, text):
    assert describe(rules) == text


def test_type_error_before_value_error():
    from microagg._base.constraints import validate_params

    rules = {"gamma": (Interval(float, 0, 1, closed="both"),)}
    with pytest.raises(ValueError, match=r"^The 'gamma' parameter of vmdav must be a float in "
                                         r"\[0, 1\]\. Got 2 instead\.$"):
        validate_params({"gamma": 2}, rules, caller="vmdav")
    with pytest.raises(TypeError, match=r"must be a float in \[0, 1\]\. Got '2' of type str"):
        validate_params({"gamma": "2"}, rules, caller="vmdav")
    with pytest.raises(ValueError, match="Got nan instead"):
        validate_params({"gamma": float("nan")}, rules, caller="vmdav")


def test_interval_bounds_are_respected():
    assert Interval(int, 2, None, closed="left").accepts(2)
    assert not Interval(int, 2, None, closed="neither").accepts(2)
    assert not Interval(int, 2, None, closed="left").accepts(True)
    assert Interval(float, 0, 1, closed="both").accepts(np.float32(1.0))
    assert not Interval(float, 0, 1, closed="right").accepts(0)
    with pytest.raises(ValueError, match="kind"):
        Interval(str, 0, 1)


# --- partitioners ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PARTITIONERS))
def test_every_partitioner_parameter_has_constraints_and_valid_defaults(name):
    entry = PARTITIONERS[name]
    assert set(entry.constraints) == set(entry.params)
    assert entry.check_params(entry.params) == dict(entry.params)


@pytest.mark.parametrize(("name", "param", "bad"), _cases(PARTITIONERS))
def test_partitioner_refuses_generated_bad_values(name, param, bad):
    entry = PARTITIONERS[name]
    rules = entry.constraints[param]
    message = rf"^The '{param}' parameter of {re.escape(name)} must be "
    with pytest.raises(_expected(rules, bad), match=message):
        entry.check_params({param: bad})
    with pytest.raises(_expected(rules, bad), match=message):  # before any work is done
        entry(X, 3, **{param: bad})


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
def test_registry_defaults_are_the_function_s_own(name):
    # the registry's params are what a release runs and records, the signature what a
    # Python caller gets: a default changed in one place only would make them differ
    import inspect

    entry = PARTITIONERS[name]
    signature = inspect.signature(entry.function).parameters
    assert {param: signature[param].default for param in entry.params} == dict(entry.params)


SLOW_DEFAULTS = {"mdav-scale", "colgen"}
"""Half a minute each on 2 cores (their first call compiles kernels); both run with their
defaults in tests/partition/test_contract.py, and here with the exhaustive tests."""


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.exhaustive) if n in SLOW_DEFAULTS else n
    for n in sorted(set(PARTITIONERS) - {"mdav-ls"})])
def test_partitioner_runs_with_its_defaults_given_explicitly(name):
    entry = PARTITIONERS[name]
    labels = entry(X, 3, random_state=0, **entry.params)
    assert np.bincount(labels).min() >= 3


def test_partitioner_traits_replace_name_checks():
    generalizing = {n for n, p in PARTITIONERS.items() if p.generalizes}
    assert generalizing == {"cdt"}
    assert {n: p.default_aggregation for n, p in PARTITIONERS.items()
            if p.default_aggregation != "mean"} == {"cdt": "interval"}
    assert {n for n, p in PARTITIONERS.items() if p.publishes_value_sets} == {"cdt"}
    assert {n for n, p in PARTITIONERS.items() if p.needs_sensitive} == {"cdt"}


# --- aggregators -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(AGGREGATORS))
def test_every_aggregator_parameter_has_constraints_and_valid_defaults(name):
    entry = AGGREGATORS[name]
    assert set(entry.constraints) == set(entry.params)
    assert entry.check_params(None) == dict(entry.params)
    masked = aggregate(VALUES, LABELS, method=name, random_state=0, **entry.params)
    assert masked.shape == VALUES.shape
    entry.verify(VALUES, masked, LABELS, ("a", "b"))  # every entry keeps its own promise


@pytest.mark.parametrize(("name", "param", "bad"), _cases(AGGREGATORS))
def test_aggregator_refuses_generated_bad_values(name, param, bad):
    entry = AGGREGATORS[name]
    rules = entry.constraints[param]
    message = rf"^The '{param}' parameter of {re.escape(name)} must be "
    with pytest.raises(_expected(rules, bad), match=message):
        entry.check_params({param: bad})
    with pytest.raises(_expected(rules, bad), match=message):
        aggregate(VALUES, LABELS, method=name, **{param: bad})


def test_aggregator_entries_are_callable_like_the_functions():
    np.testing.assert_array_equal(AGGREGATORS["mean"](VALUES, LABELS),
                                  aggregate(VALUES, LABELS, method="mean"))
    with pytest.raises(TypeError, match=r"Unknown parameter\(s\) sigma for aggregation 'rho'"):
        AGGREGATORS["rho"](VALUES, LABELS, sigma=1.0)


def test_noisy_trait():
    assert NOISY_AGGREGATORS == {"rho", "random-k", "synthetic", "fuzzy-random"}
    assert {n for n, a in AGGREGATORS.items() if a.may_be_noisy} == NOISY_AGGREGATORS
    assert not AGGREGATORS["rho"].noisy({"rho": 0.0}) and AGGREGATORS["rho"].noisy()
    assert AGGREGATORS["rho"].noisy({"rho": 0.1}) and not AGGREGATORS["mean"].noisy()
    assert is_noisy("nope", {}) is False  # unknown names are not noisy (as before)


# The texts release.py wrote inline (commit 48259c3), pinned word for word.
NOISE_TEXT = ("Aggregation 'random-k' gives every record its own noisy values: the published "
              "quasi-identifiers are not k-anonymous (the noise is drawn over groups of at "
              "least 5), and bounded data-dependent noise is not differential privacy.")
SYNTHETIC_TEXT = ("Aggregation 'synthetic' replaces every group of at least 2 records by "
                  "synthetic records with the group's exact mean and covariance (hybrid data): "
                  "the published quasi-identifiers are not k-anonymous and this is not "
                  "differential privacy.")
PAIRS_TEXT = (" 2 groups have 2 records: a pair with a given mean and covariance is the "
              "original pair, so they are published unchanged (possibly swapped); use k >= 3.")
FUZZY_TEXT = ("Aggregation 'fuzzy-random' gives each record the mean of a group drawn by its "
              "fuzzy memberships, not always its own: the published quasi-identifiers are not "
              "4-anonymous (a mean may be drawn by fewer than 4 records; see "
              "checks['k_anonymity']) and this is not differential privacy.")


def test_warnings_owed_are_todays_texts():
    assert AGGREGATORS["random-k"].warning(5) == NOISE_TEXT
    assert AGGREGATORS["rho"].warning(5) == NOISE_TEXT.replace("'random-k'", "'rho'")
    assert AGGREGATORS["rho"].warning(5, params={"rho": 0.0}) is None
    assert AGGREGATORS["mean"].warning(5) is None
    assert AGGREGATORS["synthetic"].warning(2, sizes=[3, 4]) == SYNTHETIC_TEXT
    assert AGGREGATORS["synthetic"].warning(2, sizes=np.array([2, 3, 2])) == (
        SYNTHETIC_TEXT + PAIRS_TEXT)
    assert AGGREGATORS["fuzzy-random"].warning(4) == FUZZY_TEXT


def test_verifiers_catch_broken_outputs():
    bad = VALUES.copy()
    bad[0, 1] = 1000.0  # outside group 0's range in column 'b'
    with pytest.raises(PrivacyViolationError, match=r"^1 published values of 'b' lie outside"):
        AGGREGATORS["rho"].verify(VALUES, bad, LABELS, ("a", "b"))
    with pytest.raises(PrivacyViolationError, match=r"values of '1' lie outside"):
        check_noise_within_groups(VALUES, bad, LABELS)
    with pytest.raises(InternalError, match="not a group mean"):
        AGGREGATORS["fuzzy-random"].verify(VALUES, bad, LABELS, ("a", "b"))
    with pytest.raises(InternalError):
        AGGREGATORS["synthetic"].verify(VALUES, bad, LABELS, ("a", "b"))
    AGGREGATORS["mean"].verify(VALUES, bad, LABELS, ("a", "b"))  # deterministic: no verifier


def test_verify_works_near_the_float_limit():
    huge = VALUES * 1e306
    masked = AGGREGATORS["random-k"](huge, LABELS, random_state=0)
    AGGREGATORS["random-k"].verify(huge, masked, LABELS, ("a", "b"))


# --- scaling: the Request owns it (issue 17, item 6) -----------------------------------------

def test_normalizing_partitioners_declare_it():
    assert {n for n, p in PARTITIONERS.items() if p.normalization} == NORMALIZING
    for name, entry in PARTITIONERS.items():  # an entry with a normalize switch declares it
        assert ("normalize" in entry.params) == (entry.normalization is not None), name
        if entry.normalization is not None:
            assert entry.params["normalize"] == entry.normalization


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
def test_params_for_scaling(name):
    entry = PARTITIONERS[name]
    assert entry.params_for_scaling({}, None) == {}
    if entry.normalization is None:
        assert entry.params_for_scaling({}, "minmax") == {}
        return
    for scaling in ("standard", "minmax", "none"):
        assert entry.params_for_scaling({}, scaling) == {"normalize": "none"}
        assert entry.params_for_scaling({"normalize": "none"}, scaling) == {"normalize": "none"}
    with pytest.raises(ValueError, match=rf"^Method '{re.escape(name)}' applies its own "
                                         r"normalization \(normalize='minmax'\) and "
                                         r"scaling='standard' was given too"):
        entry.params_for_scaling({"normalize": "minmax"}, "standard")
    assert entry.params_for_scaling({"normalize": "minmax"}, None) == {"normalize": "minmax"}


@pytest.mark.parametrize("name", sorted(NORMALIZING))
def test_explicit_scaling_is_the_one_used(name):
    # a uniform and a heavy-tailed column: standard and min-max scaling weigh them differently
    rng = np.random.default_rng(0)
    values = np.column_stack([rng.uniform(size=60), rng.lognormal(sigma=2.0, size=60)])
    entry = PARTITIONERS[name]
    runs = {}
    for scaling in ("standard", "minmax"):
        scaled = apply_scaler(values, fit_scaler(values, scaling))
        params = entry.params_for_scaling({}, scaling)
        runs[scaling] = entry(scaled, 3, random_state=0, **params)
        # the same as running the method on the caller's scaled data, unnormalized
        np.testing.assert_array_equal(
            runs[scaling], entry(scaled, 3, random_state=0, normalize="none"))
    # without an explicit scaling the method's own min-max normalization is kept
    default = entry(apply_scaler(values, fit_scaler(values, "standard")), 3, random_state=0,
                    **entry.params_for_scaling({}, None))
    np.testing.assert_array_equal(default, entry(values, 3, random_state=0))
    assert not np.array_equal(runs["standard"], runs["minmax"])


def _unknown_names() -> list[tuple[str, Any]]:
    """Every place that looks a name up, each given the unknown name 'x'."""
    from microagg._pipeline.rules import check_diversity
    from microagg.aggregate.aggregators import get_aggregator
    from microagg.aggregate.generalize import generalize
    from microagg.engines import get_engine
    from microagg.models import enforce_l_diversity, l_diversity
    from microagg.models._t_closeness import earth_movers_distance
    from microagg.partition import get_partitioner
    from microagg.partition.attribute_groups import resolve_attribute_groups
    from microagg.partition.blocking import check_blocking

    return [
        ("method", lambda: get_partitioner("x")),
        ("aggregation", lambda: get_aggregator("x")),
        ("engine", lambda: get_engine("x")),
        ("blocking", lambda: check_blocking("x", 10)),
        ("scaling", lambda: fit_scaler(VALUES, "x")),
        ("diversity", lambda: check_diversity("x")),
        ("diversity", lambda: l_diversity([0, 0], ["a", "b"], diversity="x")),
        ("diversity", lambda: enforce_l_diversity([0, 0], [["a", "b"]], l=2, diversity="x")),
        ("distance", lambda: earth_movers_distance([0.5, 0.5], [0.5, 0.5], distance="x")),
        ("numeric_mode", lambda: generalize([[1.0]], None, [], [0], numeric_mode="x")),
        ("attribute grouping", lambda: resolve_attribute_groups("x", ["a"], VALUES[:, :1])),
    ]


@pytest.mark.parametrize(("name", "call"), _unknown_names(),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_unknown_names())])
def test_every_unknown_name_has_the_one_message(name: str, call: Any) -> None:
    with pytest.raises(ValueError, match=rf"^Unknown {name} 'x'\. Valid: [^.]+\.$"):
        call()


def test_check_option_returns_the_name_or_lists_the_valid_ones() -> None:
    from microagg._base.constraints import check_option

    assert check_option("vp", ("kd", "pca", "vp"), parameter="blocking") == "vp"
    with pytest.raises(ValueError) as refused:
        check_option("ordered", ("equal",), parameter="distance", where="without a hierarchy")
    assert str(refused.value) == "Unknown distance 'ordered' without a hierarchy. Valid: equal."


@pytest.mark.parametrize(("value", "low", "high", "error"), [
    (1, 2, None, ValueError), (7, 2, 6, ValueError), (2.5, 2, None, TypeError),
    (True, 0, None, TypeError), ("3", 2, None, TypeError)])
def test_check_int_says_what_validate_params_says(value: Any, low: int, high: int | None,
                                                  error: type) -> None:
    from microagg._base.constraints import check_int, validate_params

    rule = (Interval(int, low, high, closed="both"),)
    with pytest.raises(error) as by_hand:
        check_int(value, parameter="k", caller="mdav", low=low, high=high)
    with pytest.raises(error) as declared:
        validate_params({"k": value}, {"k": rule}, caller="mdav")
    assert str(by_hand.value) == str(declared.value)


def test_check_int_returns_a_python_int() -> None:
    from microagg._base.constraints import check_int

    value = check_int(np.int64(4), parameter="k", caller="mdav", low=2, high=4)
    assert value == 4 and type(value) is int

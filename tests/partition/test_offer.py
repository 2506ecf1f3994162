"""Which methods apply to a table's roles and types (``microagg.partition._offer``): the
property is that a method is offered iff a release with it succeeds, checked by running the
releases on small tables of each kind (numeric keys; numeric and categorical keys, with a
hierarchy; with or without a sensitive column; a true/false key)."""

from __future__ import annotations

import pathlib
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.partition import PARTITIONERS
from microagg.partition._offer import categorical_keys, method_refusal, methods_that_apply

N = 24
"""Records of the small tables (k = 3: 8 groups at most; every method runs in well under a
second once its kernels are compiled)."""

QUICK = ("mdav", "mage", "cdt", "semantic-mdav", "univariate-optimal")
"""The methods of the default run: a numeric one, three mixed ones (one that needs a
sensitive column) and one more numeric; the exhaustive run takes the whole registry."""


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame({
        "age": rng.integers(18, 80, N), "income": rng.normal(3000, 400, N).round(1),
        "sex": rng.choice(["f", "m"], N), "region": rng.choice(["North", "South", "East"], N),
        "employed": rng.choice([True, False], N), "disease": rng.choice(list("abcd"), N)})


def _kinds(folder: pathlib.Path) -> dict[str, dict[str, Any]]:
    """Each kind of table: its quasi-identifiers, sensitive columns and hierarchies."""
    hierarchy = folder / "region.csv"
    hierarchy.write_text("North;North-South;*\nSouth;North-South;*\nEast;East;*\n",
                         encoding="utf-8")
    return {
        "numeric": {"quasi_identifiers": ["age", "income"]},
        "numeric, sensitive": {"quasi_identifiers": ["age", "income"],
                               "sensitive": ["disease"]},
        "mixed, hierarchy": {"quasi_identifiers": ["age", "sex", "region"],
                             "hierarchies": {"region": str(hierarchy)}},
        "mixed, hierarchy, sensitive": {"quasi_identifiers": ["age", "sex", "region"],
                                        "sensitive": ["disease"],
                                        "hierarchies": {"region": str(hierarchy)}},
        "true/false key": {"quasi_identifiers": ["age", "employed"]},
    }


def _schema(kind: dict[str, Any]) -> dict[str, dict[str, Any]]:
    schema: dict[str, dict[str, Any]] = {
        c: {"role": "quasi-identifier"} for c in kind["quasi_identifiers"]}
    schema.update({c: {"role": "sensitive"} for c in kind.get("sensitive", ())})
    for column, path in kind.get("hierarchies", {}).items():
        schema[column]["hierarchy"] = path
    return schema


def _release_succeeds(method: str, kind: dict[str, Any]) -> bool:
    df = _table()[[*kind["quasi_identifiers"], *kind.get("sensitive", ())]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            microagg.anonymize(df, k=3, method=method, random_state=0, **kind)
    except (ValueError, TypeError) as error:  # SchemaError is a ValueError
        print(f"{method}: {error}")
        return False
    return True


def _check_offer_matches_the_release(methods: tuple[str, ...], folder: pathlib.Path) -> None:
    df = _table()
    dtypes = dict(df.dtypes)
    for name, kind in _kinds(folder).items():
        offered, refused = methods_that_apply(_schema(kind), dtypes)
        assert set(offered) | set(refused) == set(PARTITIONERS)
        for method in methods:
            assert (method in offered) == _release_succeeds(method, kind), (name, method,
                                                                            refused.get(method))


def test_a_method_is_offered_iff_its_release_succeeds(tmp_path: pathlib.Path) -> None:
    _check_offer_matches_the_release(QUICK, tmp_path)


@pytest.mark.exhaustive
def test_every_method_is_offered_iff_its_release_succeeds(tmp_path: pathlib.Path) -> None:
    _check_offer_matches_the_release(tuple(PARTITIONERS), tmp_path)


def test_the_reasons_are_in_plain_words() -> None:
    numeric = {"age": {"role": "quasi-identifier"}, "income": {"role": "quasi-identifier"}}
    dtypes = {"age": np.dtype("int64"), "income": np.dtype("float64"),
              "sex": np.dtype(object), "region": np.dtype(object)}
    offered, refused = methods_that_apply(numeric, dtypes)
    assert refused == {"cdt": "needs a sensitive column (it groups records of dissimilar "
                              "sensitive values)"}
    survey = {**numeric, "sex": {"role": "quasi-identifier"},
              "region": {"role": "quasi-identifier"}}
    offered, refused = methods_that_apply(survey, dtypes)
    # the mixed methods of the registry, written out by hand (cdt needs a sensitive column)
    assert offered == ["mdav-categorical", "mage", "semantic-mdav"]
    assert refused["mdav"] == "needs numeric quasi-identifiers: sex and region are categories"
    assert refused["cdt"].startswith("needs a sensitive column")


def test_a_missing_extra_is_named_with_its_install_command(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import microagg.partition._partitioner as registry

    monkeypatch.setattr(registry, "extra_installed", lambda extra: False)
    assert method_refusal(PARTITIONERS["cdt"], categorical=[], sensitive=["disease"]) == (
        "needs the optional extra cdt: pip install 'microagg[cdt]'")
    assert method_refusal(PARTITIONERS["mdav"], categorical=[], sensitive=[]) is None


@pytest.mark.parametrize(("entry", "dtype", "category"), [
    ({}, np.dtype("int64"), False), ({}, np.dtype("bool"), True),
    ({}, np.dtype("datetime64[ns]"), False), ({}, np.dtype(object), True),
    ({"type": "categorical"}, np.dtype("int64"), True),
    ({"type": "ordinal"}, np.dtype("int64"), True),
    ({"type": "date"}, np.dtype(object), False),
    ({"hierarchy": "age.csv"}, np.dtype("int64"), True)])
def test_categorical_keys_as_the_release_reads_them(entry: dict[str, str], dtype: np.dtype,
                                                    category: bool) -> None:
    schema = {"x": {"role": "quasi-identifier", **entry}, "y": {"role": "sensitive"}}
    assert categorical_keys(schema, {"x": dtype, "y": np.dtype(object)}) == (
        ["x"] if category else [])

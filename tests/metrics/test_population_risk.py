"""k-map, prosecutor / journalist / marketer risk (El Emam's definitions) and riskyCells-style
counts, on hand-worked tables and against brute force."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from microagg.metrics.population_risk import (
    population_frequencies,
    population_risk,
    risky_cells,
)

# A population of 12 and a sample of 5 of its rows (hand-worked below).
POPULATION = pd.DataFrame({
    "sex": ["f", "f", "f", "f", "m", "m", "m", "m", "m", "m", "f", "m"],
    "age": ["20", "20", "20", "30", "20", "20", "30", "30", "30", "30", "40", "40"],
})
SAMPLE = POPULATION.iloc[[0, 1, 3, 6, 10]].reset_index(drop=True)


def test_population_table_counts_and_the_four_risks_by_hand() -> None:
    # sample: (f,20) x2, (f,30), (m,30), (f,40): fk = 2, 2, 1, 1, 1
    # population: (f,20) 3, (f,30) 1, (m,30) 4, (f,40) 1
    Fk = population_frequencies(SAMPLE, POPULATION, ["sex", "age"])
    assert Fk.tolist() == [3, 3, 1, 4, 1]
    s = population_risk([2, 2, 1, 1, 1], Fk, ks=(2, 3), estimated=False).summary()
    assert s["k_map"] == 1.0  # (f,30) and (f,40) are unique in the population
    assert s["prosecutor_max"] == 1.0
    assert s["prosecutor_mean"] == pytest.approx((0.5 + 0.5 + 1 + 1 + 1) / 5)  # = u / n
    assert s["journalist_max"] == 1.0
    assert s["marketer"] == pytest.approx((1 / 3 + 1 / 3 + 1 + 1 / 4 + 1) / 5)
    assert s["k_map_violations"] == {"2": 2, "3": 2}
    assert s["estimated"] is False


def test_population_frequencies_is_a_brute_force_count() -> None:
    rng = np.random.default_rng(7)
    pop = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.choice(["x", "y", None], 200)})
    sample = pop.sample(40, random_state=3)
    Fk = population_frequencies(sample, pop, ["a", "b"])
    rows = list(zip(pop["a"], pop["b"], strict=True))
    expected = [sum(r == (a, b) for r in rows)
                for a, b in zip(sample["a"], sample["b"], strict=True)]
    assert Fk.tolist() == expected


def test_a_sample_outside_the_population_is_refused() -> None:
    stranger = pd.DataFrame({"sex": ["x"], "age": ["20"]})
    with pytest.raises(ValueError, match=r"row 0 has keys \['x', '20'\]"):
        population_frequencies(stranger, POPULATION, ["sex", "age"])
    with pytest.raises(KeyError, match="population has no column 'zip'"):
        population_frequencies(SAMPLE.assign(zip=1), POPULATION, ["zip"])


def test_estimated_class_sizes_below_the_sample_are_raised_to_it() -> None:
    # weights below 1 can give Fk < fk; a population class is never smaller than the sample's
    r = population_risk([2, 2, 1], [1.2, 1.2, 0.5])
    assert r.Fk.tolist() == [2.0, 2.0, 1.0]
    assert r.summary()["journalist_max"] == 1.0


def test_journalist_risk_is_at_most_the_prosecutor_risk() -> None:
    rng = np.random.default_rng(11)
    fk = rng.integers(1, 6, 500)
    Fk = fk * rng.uniform(1, 50, 500)
    s = population_risk(fk, Fk).summary()
    assert s["journalist_max"] <= s["prosecutor_max"]
    assert s["marketer"] <= s["prosecutor_mean"]


# ---------------------------------------------------------------- riskyCells


def test_risky_cells_on_a_hand_worked_table() -> None:
    df = pd.DataFrame({
        "region": ["n", "n", "n", "n", "s", "s", "s", "e"],
        "sex": ["f", "f", "m", "m", "f", "f", "m", "f"],
        "job": ["a", "b", "a", "a", "a", "b", "b", None],
    })
    cells = risky_cells(df, ["region", "sex", "job"], threshold=2, max_size=3)
    by = {tuple(c["keys"]): (c["n_cells"], c["n_risky"], c["records"]) for c in cells}
    # region: n 4, s 3, e 1 -> one cell below 2 (e)
    assert by[("region",)] == (3, 1, 1)
    assert by[("sex",)] == (2, 0, 0)  # f 5, m 3
    # job (e's missing left out): a 4, b 3
    assert by[("job",)] == (2, 0, 0)
    # region x sex: nf 2, nm 2, sf 2, sm 1, ef 1 -> 2 cells
    assert by[("region", "sex")] == (5, 2, 2)
    # region x job: na 3, nb 1, sa 1, sb 2 -> 2 cells
    assert by[("region", "job")] == (4, 2, 2)
    # sex x job: fa 2, fb 2, ma 2, mb 1 -> 1 cell
    assert by[("sex", "job")] == (4, 1, 1)
    # all three: nfa, nfb, sfa, smb unique; nma 2; sfb 1 -> 5 cells of 1
    assert by[("region", "sex", "job")] == (6, 5, 5)
    assert [tuple(c["keys"]) for c in cells][:3] == [("region",), ("sex",), ("job",)]


def test_risky_cells_is_a_brute_force_count() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({k: rng.integers(0, 4, 120) for k in "abcd"})
    for cell in risky_cells(df, list("abcd"), threshold=3, max_size=2):
        counts = Counter(zip(*(df[k] for k in cell["keys"]), strict=True))
        assert cell["n_cells"] == len(counts)
        assert cell["n_risky"] == sum(1 for v in counts.values() if v < 3)
        assert cell["records"] == sum(v for v in counts.values() if v < 3)
    assert len(risky_cells(df, list("abcd"), max_size=2)) == 4 + len(
        list(itertools.combinations("abcd", 2)))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"threshold": 1}, "threshold must be a whole number >= 2; got 1"),
    ({"max_size": 4}, r"max_size must be in \[1, 3\]"),
    ({"max_size": 0}, r"max_size must be in \[1, 3\]"),
])
def test_risky_cells_refuses_bad_parameters(kwargs: dict[str, int], match: str) -> None:
    df = pd.DataFrame({"a": [1], "b": [2], "c": [3]})
    with pytest.raises(ValueError, match=match):
        risky_cells(df, ["a", "b", "c"], **kwargs)

"""A synthetic household survey, made for microagg (``survey.csv``; Apache-2.0, no real person).

The file a data steward meets first: string person and household ids, a name, age, sex,
region, postcode, household size, a skewed income with item non-response, a date of birth,
ordinal education, occupation, a diagnosis (the confidential column), and a sampling weight
shared by every member of a household. Every value is drawn from the generator below with a
fixed seed, so the bundled file can be rebuilt byte for byte::

    python -m microagg.datasets._survey src/microagg/datasets/data/survey.csv
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

__all__ = ["REFERENCE_DATE", "make_survey"]

REFERENCE_DATE = pd.Timestamp("2026-01-01")
"""The survey's reference date: ages are completed years on this day."""

_REGIONS = {  # region: (share of households, first postcode digit)
    "North": (0.18, "1"), "South": (0.16, "2"), "East": (0.14, "3"), "West": (0.15, "4"),
    "Capital": (0.22, "5"), "Coast": (0.09, "6"), "Highlands": (0.06, "7"),
}
_FIRST = ("Anna", "Ben", "Clara", "David", "Emma", "Felix", "Greta", "Hugo", "Ida", "Jonas",
          "Karin", "Leon", "Mia", "Noah", "Olga", "Paul", "Rosa", "Simon", "Tara", "Ulrich",
          "Vera", "Walter", "Xenia", "Yusuf", "Zoe")
_LAST = ("Berger", "Novak", "Schmidt", "Horvat", "Rossi", "Jansen", "Dubois", "Kowalski",
         "Nielsen", "Silva", "Meyer", "Costa", "Varga", "Lindqvist", "Moreau", "Fischer",
         "Petrov", "Walsh", "Keller", "Ortega")
EDUCATION = ("none", "primary", "secondary", "tertiary")
_OCCUPATIONS = ("clerk", "teacher", "nurse", "engineer", "farmer", "driver", "sales",
                "craft", "manager", "cleaner", "student", "retired", "not working")
_DIAGNOSES = ("none", "asthma", "diabetes", "hypertension", "depression", "cancer",
              "heart disease", "HIV")
_DIAGNOSIS_SHARES = (0.52, 0.1, 0.09, 0.14, 0.08, 0.03, 0.03, 0.01)


def _households(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """One row per person: household id, size, region, postcode and weight."""
    rows: list[tuple[int, int]] = []
    household = 0
    while len(rows) < n:
        size = int(min(1 + rng.poisson(1.4), 7))
        rows += [(household, size)] * size
        household += 1
    ids, sizes = np.array(rows[:n]).T
    n_households = int(ids[-1]) + 1
    names = list(_REGIONS)
    shares = np.array([s for s, _ in _REGIONS.values()])
    region = rng.choice(len(names), size=n_households, p=shares / shares.sum())
    postcode = np.array([f"{_REGIONS[names[r]][1]}{rng.integers(0, 1000):03d}"
                         for r in region])
    weight = np.round(rng.gamma(4.0, 250.0, size=n_households), 2)
    return pd.DataFrame({"household_id": [f"H{h:05d}" for h in ids], "household_size": sizes,
                         "region": [names[r] for r in region[ids]], "postcode": postcode[ids],
                         "weight": weight[ids]})


def _ages(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.clip(np.round(rng.gamma(4.5, 9.5, size=n)), 0, 99).astype(np.int64)


def _education(age: np.ndarray, rng: np.random.Generator) -> list[str]:
    level = rng.choice(4, size=len(age), p=(0.04, 0.22, 0.49, 0.25))
    level = np.where(age < 12, 0, np.where(age < 16, np.minimum(level, 1), level))
    return [EDUCATION[i] for i in level]


def _occupation(age: np.ndarray, rng: np.random.Generator) -> list[str]:
    jobs = rng.choice(len(_OCCUPATIONS) - 3, size=len(age))
    out = np.array([_OCCUPATIONS[j] for j in jobs], dtype=object)
    out[rng.random(len(age)) < 0.12] = "not working"
    out[age < 19] = "student"
    out[age >= 66] = "retired"
    return list(out)


def _income(age: np.ndarray, education: list[str], rng: np.random.Generator) -> np.ndarray:
    """Yearly income: log-normal, rising with education, none below 16; 8 % not answered."""
    rank = np.array([EDUCATION.index(e) for e in education])
    income = np.exp(rng.normal(9.6 + 0.25 * rank, 0.75))
    income = np.where(age < 16, 0.0, np.round(income, -1))
    income[rng.random(len(age)) < 0.08] = np.nan
    return income


def make_survey(n: int = 5000, *, random_state: int = 18) -> pd.DataFrame:
    """The synthetic survey of ``n`` persons (see the module docstring).

    Examples
    --------
    >>> survey = make_survey(200)
    >>> survey.shape
    (200, 14)
    >>> bool(survey["income"].isna().any())
    True
    """
    rng = np.random.default_rng(random_state)
    people = _households(n, rng)
    age = _ages(n, rng)
    born = REFERENCE_DATE - pd.to_timedelta(age * 365.25 + rng.uniform(1, 364, n), unit="D")
    education = _education(age, rng)
    first = rng.choice(len(_FIRST), size=n)
    last = rng.choice(len(_LAST), size=n)
    return pd.DataFrame({
        "person_id": [f"P{i:06d}" for i in rng.permutation(n) + 100_000],
        "name": [f"{_FIRST[a]} {_LAST[b]}" for a, b in zip(first, last, strict=True)],
        "age": age,
        "sex": rng.choice(["female", "male"], size=n),
        "region": people["region"],
        "postcode": people["postcode"],
        "household_size": people["household_size"],
        "income": _income(age, education, rng),
        "date_of_birth": born.strftime("%Y-%m-%d"),
        "education": education,
        "occupation": _occupation(age, rng),
        "diagnosis": rng.choice(_DIAGNOSES, size=n, p=_DIAGNOSIS_SHARES),
        "weight": people["weight"],
        "household_id": people["household_id"],
    })


if __name__ == "__main__":  # pragma: no cover - rebuilds the bundled file
    make_survey().to_csv(sys.argv[1], index=False, lineterminator="\n")

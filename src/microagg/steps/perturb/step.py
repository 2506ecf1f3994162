"""The perturbative steps as steps of a plan (:data:`microagg.steps.STEPS`' ``pram``,
``noise``, ``rank_swap`` and ``shuffle``): each ``apply_*_step`` runs its core on the working
table with the request's roles and records the core's details; each ``verify_*_step`` runs
its core's verifier on the published table; each ``check_*_step`` refuses, before any step
runs, a column of the wrong type.

References: Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, J. Off. Stat. 14(4) (PRAM);
Brand 2002, LNCS 2316 (noise); Moore 1996, US Census Bureau (rank swapping); Muralidhar &
Sarathy 2006, Management Science 52(5) (shuffling); sdcMicro's ``pram``, ``addNoise`` and
``rankSwap`` (Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .._state import PlanState, StepRoles
from . import noise, pram, shuffle, swap, verify
from .options import Noise, Pram, RankSwap, Shuffle

__all__ = ["apply_noise_step", "apply_pram_step", "apply_rank_swap_step",
           "apply_shuffle_step", "check_numeric_step", "check_pram_step",
           "verify_noise_step", "verify_pram_step", "verify_rank_swap_step",
           "verify_shuffle_step"]


def _roles_of(roles: StepRoles | None, step: str) -> dict[str, str | None]:
    """The cores' keyword roles (:meth:`StepRoles.keywords`; none without roles)."""
    if roles is None:
        return {"households": None, "weights": None, "strata": None}
    return roles.keywords(step)


def _run(core: Callable[..., tuple[pd.DataFrame, Mapping[str, Any]]], state: PlanState,
         options: Any, rng: np.random.Generator) -> PlanState:
    """``core`` on the working table, its details recorded."""
    table, details = core(state.table, options, rng, **_roles_of(state.roles, options.name))
    return state.after_step(options, table, details=details)


def apply_pram_step(state: PlanState, options: Pram, rng: np.random.Generator) -> PlanState:
    """PRAM (:func:`~.pram.apply_pram`), its applied matrices in the record's details."""
    return _run(pram.apply_pram, state, options, rng)


def apply_noise_step(state: PlanState, options: Noise, rng: np.random.Generator
                     ) -> PlanState:
    """Noise addition (:func:`~.noise.apply_noise`)."""
    return _run(noise.apply_noise, state, options, rng)


def apply_rank_swap_step(state: PlanState, options: RankSwap, rng: np.random.Generator
                         ) -> PlanState:
    """Rank swapping (:func:`~.swap.apply_rank_swap`), within strata."""
    return _run(swap.apply_rank_swap, state, options, rng)


def apply_shuffle_step(state: PlanState, options: Shuffle, rng: np.random.Generator
                       ) -> PlanState:
    """Data shuffling (:func:`~.shuffle.apply_shuffle`)."""
    return _run(shuffle.apply_shuffle, state, options, rng)


def verify_pram_step(options: Pram, original: pd.DataFrame, published: pd.DataFrame,
                     roles: StepRoles, *, details: Mapping[str, Any] | None = None
                     ) -> Mapping[str, Any]:
    """:func:`~.verify.verify_pram` with the matrices the step applied (its details)."""
    return verify.verify_pram(options, original, published, details=details,
                              strata=roles.keywords(options.name)["strata"])


def verify_noise_step(options: Noise, original: pd.DataFrame, published: pd.DataFrame,
                      roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~.noise.verify_noise` on the published table."""
    return noise.verify_noise(options, original, published,
                              strata=roles.keywords(options.name)["strata"])


def verify_rank_swap_step(options: RankSwap, original: pd.DataFrame, published: pd.DataFrame,
                          roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~.swap.verify_rank_swap` on the published table."""
    return swap.verify_rank_swap(options, original, published,
                                 **_roles_of(roles, options.name))


def verify_shuffle_step(options: Shuffle, original: pd.DataFrame, published: pd.DataFrame,
                        roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~.shuffle.verify_shuffle` on the published table."""
    return shuffle.verify_shuffle(options, original, published,
                                  **_roles_of(roles, options.name))


def _numeric(table: pd.DataFrame, column: str) -> bool:
    dtype = table[column].dtype
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not isinstance(dtype, pd.CategoricalDtype))


def _absent(table: pd.DataFrame, columns: Sequence[str], where: str, option: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise SchemaError(f"{where}: the {option!r} option names {missing}, which are not "
                          f"columns of the table; the columns are {list(table.columns)}.")


def check_pram_step(options: Pram, table: pd.DataFrame, position: int, plan: Any) -> None:
    """PRAM moves categories: every column it names is categorical (text or category)."""
    where = f"Step {position} of the plan (pram)"
    _absent(table, options.variables, where, "variables")
    numeric = [f"{c!r} (dtype {table[c].dtype})" for c in options.variables
               if _numeric(table, c)]
    if numeric:
        raise SchemaError(f"{where} perturbs categorical columns only; "
                          f"{', '.join(numeric)} are numeric: recode them to categories "
                          "first, or use noise or rank_swap for a numeric column.")


def check_numeric_step(options: Noise | RankSwap | Shuffle, table: pd.DataFrame,
                       position: int, plan: Any) -> None:
    """Noise, rank swapping and shuffling change numbers: every column they name (and a
    shuffle's ``given``) is numeric."""
    where = f"Step {position} of the plan ({options.name})"
    given: tuple[str, ...] = getattr(options, "given", ())
    for option, columns in (("variables", options.variables), ("given", given)):
        _absent(table, columns, where, option)
        other = [f"{c!r} (dtype {table[c].dtype})" for c in columns if not _numeric(table, c)]
        if other:
            raise SchemaError(f"{where} needs numeric columns in {option!r}; "
                              f"{', '.join(other)} are not: use pram for a categorical "
                              "column.")

"""A test-only step that recodes a categorical column (values merged into others), with a
verifier that every published value of it is held by at least ``min_count`` records: the
machinery of :mod:`microagg.steps` proven without the real steps' code."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.steps import Step, _registered
from microagg.steps._options import StepOptions, as_int, as_mapping
from microagg.steps._state import PlanState, StepRoles


@dataclass(frozen=True)
class Merge(StepOptions):
    """Values of one categorical column merged into others."""

    name: ClassVar[str] = "merge"
    column: str
    """The column recoded."""
    into: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Each value merged, and the value it becomes (a JSON object)."""
    min_count: int = 1
    """The fewest records every published value must have."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "into", as_mapping(self.into, step=self.name, option="into"))
        object.__setattr__(self, "min_count", as_int(self.min_count, step=self.name,
                                                     option="min_count", low=1))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)


def apply(state: PlanState, options: Merge, rng: np.random.Generator) -> PlanState:
    table = state.table.copy()
    column = table[options.column]
    merged = column.isin(list(options.into))
    if isinstance(column.dtype, pd.CategoricalDtype):
        new = [v for v in options.into.values() if v not in column.cat.categories]
        column = column.cat.add_categories(list(dict.fromkeys(new)))
        column = column.where(~merged, column.map(dict(options.into)).astype(column.dtype))
        table[options.column] = column.cat.remove_unused_categories()
    else:
        table[options.column] = column.where(~merged, column.map(dict(options.into)))
    return state.after_step(options, table,
                            details={"values recoded": {options.column: int(merged.sum())}})


def verify(options: Merge, original: pd.DataFrame, published: pd.DataFrame,
           roles: StepRoles) -> Mapping[str, Any]:
    counts = published[options.column].value_counts()
    smallest = int(counts[counts > 0].min())
    return {"model": f"every published value of {options.column!r} held by at least "
                     f"{options.min_count} records",
            "holds": smallest >= options.min_count, "required": options.min_count,
            "achieved": smallest}


MERGE = Step(name="merge", options=Merge, summary="values of a column merged",
             reference="test only", promises="every published value held by min_count rows",
             target="tests.steps.toy_step:apply", verifier="tests.steps.toy_step:verify")


@contextlib.contextmanager
def registered() -> Iterator[Step]:
    """The toy step in :data:`microagg.steps.STEPS` while the block runs."""
    with _registered(MERGE) as step:
        yield step

"""What the engines that read files share: their paths checked, their Request built from the
input's first rows, their release's parameters and constant-column warning."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import __version__
from .._formats import format_of
from .._pipeline.notes import warn_user
from .._pipeline.request import Request
from ..exceptions import ConstantColumnWarning
from ._chunks import first_rows

__all__ = ["constant_columns", "engine_params", "file_paths", "file_request"]


def file_paths(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str]
               ) -> tuple[pathlib.Path, pathlib.Path]:
    """The input (must exist) and the output (never the input), both of a known format."""
    source = pathlib.Path(input_path).expanduser()
    target = pathlib.Path(output_path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(f"Input file {str(source)!r} does not exist.")
    if target.exists() and target.resolve() == source.resolve():
        raise ValueError(f"The output {str(target)!r} is the input; microagg never "
                         "overwrites its input.")
    format_of(source, parameter="input")
    format_of(target, parameter="output")
    return source, target


def file_request(source: pathlib.Path, *, engine: str, sep: str | None = None,
                 **options: Any) -> Request:
    """The Request for an engine that reads ``source`` itself, built from its first rows
    (:meth:`Request.build` with ``engine``; the rows are counted as the engine reads)."""
    return Request.build(first_rows(source, sep=sep), engine=engine, **options)


def engine_params(request: Request, **extra: Any) -> Mapping[str, Any]:
    """``Release.params`` of a release by an engine that reads files: the Request's options
    (group means on z-scores, block by block), the columns published on purpose (``keep``)
    and the survey roles as the in-memory engine records them, then ``extra``."""
    return MappingProxyType({
        "method": request.partitioner.name, "k": request.k,
        "quasi_identifiers": request.quasi_identifiers, "sensitive": request.sensitive,
        "identifiers": request.identifiers, "aggregation": "mean", "scaling": "standard",
        "method_params": MappingProxyType(dict(request.method_params)),
        "blocking": request.blocking, "block_size": int(request.block_size),
        "engine": request.engine, "keep": request.keep, "weight": request.weight,
        "household": request.household, "strata": request.strata, **extra, "microagg_version": __version__,
    })


def constant_columns(request: Request, varying: NDArray[np.bool_], notes: list[str]) -> None:
    """Warn about constant quasi-identifiers (excluded from the distances and the loss) and
    keep the warning in ``notes``."""
    constant = [c for c, v in zip(request.quasi_identifiers, varying, strict=True) if not v]
    if constant:
        warn_user(notes, f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: "
                         "excluded from the distances and the information loss.",
                  ConstantColumnWarning)

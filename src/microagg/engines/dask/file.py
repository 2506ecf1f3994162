"""``microagg anonymize --engine dask``: a CSV or Parquet file released on a Dask cluster
(:mod:`.engine`) and written as one output file in the input's row order, atomically."""

from __future__ import annotations

import logging
import os
import pathlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from ..._base.validation import RandomState
from ..._pipeline.request import Request
from ..._pipeline.result import Release
from ..._pipeline.verify import k_check, smallest_class
from ...exceptions import InternalError
from ...io._atomic import atomic_write
from ...io._formats import format_of, sniff_separator
from ...io.tables import check_csv_header
from .._chunks import chunk_writer, output_separator, read_back
from .._reads_files import file_paths, file_request, plan_options
from .engine import (
    by_row_position,
    check_reserved,
    connect,
    dask_release_fields,
    local_client,
    require_dask,
)

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    from distributed import Client

    from ...steps import Plan

__all__ = ["anonymize_dask_file", "run_dask_file"]


def anonymize_dask_file(input_path: str | os.PathLike[str],  # noqa: PLR0913 - the public face: one keyword per option
                        output_path: str | os.PathLike[str], *,
                        quasi_identifiers: Sequence[str] | None = None, k: int | None = None,
                        method: str | None = None, sensitive: str | Sequence[str] = (),
                        identifiers: Sequence[str] = (), keep: str | Sequence[str] = (),
                        blocking: str = "kd", block_size: int | None = None,
                        random_state: RandomState = None, sep: str | None = None,
                        scheduler: str | None = None, blocksize: str = "64MB",
                        method_params: Mapping[str, Any] | None = None,
                        refine: float | None = None, plan: Plan | None = None) -> Release:
    """Read a CSV or Parquet file with Dask, release it with :func:`~.engine.anonymize_dask` on a
    cluster (``scheduler`` address, or a local cluster of one worker per CPU), and write one
    output file in the input's row order, atomically.

    The written file is read back before it is renamed onto the output: the smallest number
    of rows sharing their published quasi-identifiers
    (:func:`~microagg._pipeline.verify.smallest_class`) must be at least ``k``, and the row
    count must match.

    The options are those of :func:`~microagg.engines.file.anonymize_file` (``sensitive``,
    ``keep`` and ``plan``: a plan of one step, as there) and of :func:`~.engine.anonymize_dask`
    (``scheduler``, Dask's ``blocksize`` of the CSV partitions); the options of
    :func:`microagg.anonymize` it lacks are those the Dask engine does not run (worker
    processes are the cluster's: no ``n_jobs``).

    Returns
    -------
    Release
        ``engine="dask"``, the table in :attr:`~Release.output` (``data`` is ``None``).
    """
    options = plan_options(plan, engine="dask", caller="anonymize_dask_file",
                           quasi_identifiers=quasi_identifiers, k=k, method=method,
                           method_params=method_params)
    source, target = file_paths(input_path, output_path)
    request = file_request(source, engine="dask", sep=sep, sensitive=sensitive,
                           identifiers=identifiers, keep=keep, blocking=blocking,
                           block_size=block_size, random_state=random_state, refine=refine,
                           **options)
    return run_dask_file(request, source, target, sep=sep, scheduler=scheduler,
                         blocksize=blocksize)


def _read(source: pathlib.Path, sep: str | None, blocksize: str) -> dd.DataFrame:
    import dask.dataframe as dd

    fmt, compression = format_of(source, parameter="input")
    if fmt == "parquet":
        return dd.read_parquet(str(source))
    separator = sep or sniff_separator(source, compression)
    check_csv_header(source, sep=separator)  # dask, like pandas, renames a repeated name
    return dd.read_csv(str(source), sep=separator, blocksize=None if compression else blocksize,
                       compression=compression)


def run_dask_file(request: Request, source: pathlib.Path, target: pathlib.Path, *,
                  sep: str | None = None, on_stage: Callable[[str], None] | None = None,
                  scheduler: str | None = None, blocksize: str = "64MB",
                  sample_size: int = 200_000) -> Release:
    """Run ``request`` (built with ``engine="dask"``) from ``source`` to ``target`` on a
    cluster. Validation is assumed."""
    require_dask()
    ddf = _read(source, sep, blocksize)
    check_reserved(ddf.columns)
    # the shuffle plugin logs every shuffle it starts at WARNING; nothing for a user to do
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    client = connect(scheduler) if scheduler else local_client(n_workers=os.cpu_count() or 1)
    try:
        indexed, n = by_row_position(ddf, client, name="_row")
        fields = dask_release_fields(request, indexed, sample_size=sample_size,
                                     client=client, on_stage=on_stage)
        (on_stage or (lambda name: None))("writing")
        t = time.perf_counter()
        checks = _write(request, fields["data"], client, target, sep, n=n)
        seconds = time.perf_counter() - t
    finally:
        cluster = None if scheduler else client.cluster
        client.close()
        if cluster is not None:
            cluster.close()
    return Release.of(**{**fields, "data": None, "output": target,
                         "checks": {**fields["checks"], **checks},
                         "timings": {**fields["timings"], "write_and_verify": seconds,
                                     "total": time.perf_counter() - request.started}})


def _write(request: Request, published: dd.DataFrame, client: Client, target: pathlib.Path,
           sep: str | None, *, n: int) -> dict[str, Any]:
    """Write the published partitions in the input's order to a temporary file, read it back
    and count its classes, then rename it onto ``target``; returns the file's k check."""
    ordered = published.reset_index().set_index("_row", sorted=False).persist()
    out_sep = output_separator(target, sep)
    write = chunk_writer(target, out_sep)
    checks: dict[str, Any] = {}

    def chunks() -> Iterator[pd.DataFrame]:
        for i in range(ordered.npartitions):
            part = client.compute(ordered.get_partition(i)).result()
            yield part.sort_index().reset_index(drop=True)

    def write_and_verify(handle: IO[bytes]) -> None:
        write(handle, chunks())
        handle.flush()
        rows, smallest = smallest_class(read_back(pathlib.Path(handle.name), 500_000, out_sep),
                                        request.quasi_identifiers)
        if rows != n:
            raise InternalError(f"The written file has {rows} rows, not {n}. Nothing was "
                                "released.")
        checks["k_anonymity"] = k_check(request.k, smallest)

    atomic_write(target, write_and_verify)
    return checks

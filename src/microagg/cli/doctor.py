"""``microagg doctor``: versions, numba's threading layer, the compiled-kernel cache, and the
work folders that killed runs left in the temporary folder."""

from __future__ import annotations

import importlib
import platform
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from microagg.cli._common import app, package_version, stdout

# every module that defines kernels: importing them registers their cache folders (the
# partitioners' modules load with their registry entries' functions, see below)
_KERNEL_MODULES = ("microagg.partition", "microagg.aggregate.aggregators", "microagg.partition.fuzzy",
                   "microagg.metrics.clustering")


def _load_kernel_modules() -> None:
    """Import every module that defines kernels: :data:`_KERNEL_MODULES` and the module of
    every registered partitioner (the registry loads them on first use)."""
    from microagg.partition import PARTITIONERS

    for module in _KERNEL_MODULES:
        importlib.import_module(module)
    for entry in PARTITIONERS.values():
        _ = entry.function, entry.refine_across


def _package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"microagg": package_version(), "python": platform.python_version()}
    for name in ("numba", "llvmlite", "numpy", "pandas", "scikit-learn"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def kernel_cache_report() -> dict[str, Any]:
    """What ``microagg doctor`` shows: the cache settings and, per folder that holds
    microagg's kernels, the number of files, their size and whether they are current."""
    from microagg._runtime.jit import KERNELS
    from microagg._runtime.numba_cache import cache_settings, kernel_stamp

    _load_kernel_modules()
    settings = cache_settings()
    stamp = kernel_stamp()
    folders = []
    for folder in sorted({str(k._cache.cache_path) for k in KERNELS
                          if getattr(getattr(k, "_cache", None), "cache_path", None)}):
        path = Path(folder)
        files = [f for f in path.glob("*.nb[ic]")] if path.is_dir() else []
        marker = path / "microagg-kernels.sha256"
        state = ("empty" if not files else "current" if marker.is_file()
                 and marker.read_text() == stamp else "stale (deleted at the next run)")
        folders.append({"folder": folder, "files": len(files),
                        "bytes": sum(f.stat().st_size for f in files), "state": state})
    return {"mode": settings.mode, "reason": settings.reason, "root": settings.folder,
            "kernels": len(KERNELS), "folders": folders}


WARM_UP_ROWS = 1_000
"""Rows of the bundled survey the warm-up's mixed release and SUDA2 run on: the kernels
compiled depend on the data's types, not on its size."""


def _default_release() -> None:
    """The default release (MDAV, group means, the checks and metrics) on Census at k=5,
    as ``make demo``."""
    from microagg import anonymize, load_dataset

    data = load_dataset("census")
    qi = list(data.quasi_identifiers)
    anonymize(data.data, quasi_identifiers=qi, k=5, method="mdav", random_state=0,
              sensitive=[c for c in data.sensitive if c not in qi],
              identifiers=[c for c in data.identifiers if c not in qi])


def _tutorial_release() -> None:
    """A release of numeric and categorical quasi-identifiers with its default method
    (MAGE), missing incomes and l-diversity, as the tutorial's releases on its survey."""
    from microagg import anonymize, load_dataset

    data = load_dataset("survey")
    qi, sensitive = list(data.quasi_identifiers), list(data.sensitive)
    table = data.data.loc[:WARM_UP_ROWS - 1, [*qi, *sensitive]]
    anonymize(table, quasi_identifiers=qi, sensitive=sensitive, k=5, l=2, random_state=0)


def _tutorial_risk() -> None:
    """SUDA2's special uniques, as the tutorial's ``microagg risk``."""
    from microagg import load_dataset
    from microagg.metrics.suda import suda2

    data = load_dataset("survey")
    suda2(data.data.loc[:WARM_UP_ROWS - 1], ["age", "sex", "region", "education"])


WARM_UPS = (_default_release, _tutorial_release, _tutorial_risk)
"""What ``microagg doctor --warm-up`` (``make install``) runs, so that the kernels of the
default release and of docs/tutorial.md's commands are compiled and cached ahead."""


def warm_up_kernels() -> tuple[int, float]:
    """Run each of :data:`WARM_UPS` once on small bundled tables so that their kernels are
    compiled and cached; returns the kernels compiled now and the seconds that took (0 when
    all were cached)."""
    import warnings

    from microagg._runtime.jit import watch_compilation

    with watch_compilation() as log, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for step in WARM_UPS:
            step()
    return log.kernels, log.seconds


def leftovers_report() -> list[str]:
    """What ``microagg doctor`` says of the work folders that killed runs left in the system
    temporary folder (unmasked data): how many, their size and paths, all removed as this
    command started (:func:`~microagg.io._leftovers.remove_leftovers_at_start`); or none."""
    import tempfile

    from microagg.io._leftovers import remove_leftovers_at_start

    found = remove_leftovers_at_start()
    where = tempfile.gettempdir()
    if not found:
        return [f"none in {where}"]
    size = sum(f.bytes for f in found) / 2**20
    return [f"{len(found)} work folder(s) of killed runs in {where} ({size:.1f} MiB, "
            f"{sum(f.files for f in found)} files of unmasked data), removed:",
            *(f"  {f.path} ({f.files} files, {f.bytes / 2**20:.1f} MiB)" for f in found)]


def _threading() -> tuple[str, int]:
    import numba

    threads = numba.get_num_threads()  # starts the layer
    try:
        layer: str = numba.threading_layer()
    except ValueError:
        layer = "none"
    return layer, threads


@app.command()
def doctor(
    clear_cache: Annotated[
        bool,
        typer.Option("--clear-cache",
                     help="Delete microagg's compiled kernels (they are compiled again, once, "
                          "at the next run)."),
    ] = False,
    warm_up: Annotated[
        bool,
        typer.Option("--warm-up",
                     help="Compile the kernels of the default release (MDAV, group means, "
                          "the checks and metrics) and of the tutorial's commands (MAGE for "
                          "numeric and categorical data, SUDA2) now, so that a first run of "
                          "them does not (`make install` runs it)."),
    ] = False,
) -> None:
    """Show versions, numba's threading layer, where compiled kernels are cached, and the work
    folders killed runs left (removed)."""
    console = stdout()
    for i, line in enumerate(leftovers_report()):
        console.print(f"{'leftovers' if i == 0 else '':<13}{line}", soft_wrap=True)
    if warm_up:
        kernels, seconds = warm_up_kernels()
        console.print(f"{'warm-up':<13}" + (f"compiled {kernels} kernels in {seconds:.1f} s"
                                             if kernels else "every kernel already cached"))
    for name, value in _package_versions().items():
        console.print(f"{name:<13}{value}")
    layer, threads = _threading()
    console.print(f"{'threads':<13}{threads} ({layer} threading layer; NUMBA_NUM_THREADS sets it)")
    report = kernel_cache_report()
    console.print(f"{'kernel cache':<13}{report['mode']}: {report['reason']}"
                  + (f" ({report['root']})" if report["root"] else ""), soft_wrap=True)
    table = Table(title=f"{report['kernels']} kernels cached in", title_justify="left")
    for column in ("folder", "files", "MiB", "state"):
        table.add_column(column)
    for row in report["folders"]:
        table.add_row(row["folder"], str(row["files"]), f"{row['bytes'] / 2**20:.1f}",
                      row["state"])
    console.print(table)
    if clear_cache:
        from microagg._runtime.numba_cache import clear_cache as clear

        removed = clear([row["folder"] for row in report["folders"]])
        console.print(f"Removed {removed} cached files.")

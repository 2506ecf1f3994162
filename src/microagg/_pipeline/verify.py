"""The one verifier: every promise of a release re-derived from what is published.

A release is returned or written only after these checks pass; a shortfall is a bug in
microagg and raises :class:`~microagg.exceptions.PrivacyViolationError` (or
:class:`~microagg.exceptions.InternalError` for an invalid partition). The same functions
serve the engines that see the published rows in chunks (:class:`GroupVerifier` for the file
engine, the Dask partitions and the stream; :func:`smallest_class` for a file read back),
``microagg check`` and ``microagg report`` (:func:`published_classes`, :func:`class_sizes`
and the level functions of :mod:`microagg.models`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._base.validation import check_labels
from ..exceptions import InternalError, PrivacyViolationError
from ..io._nested import distinct_codes
from ..models import SensitiveDistribution, check_l_diversity, check_t_closeness
from ..partition.mixed import MixedData

__all__ = ["GroupVerifier", "checked_partition", "class_sizes", "closeness_checks",
           "diversity_checks", "group_k_check", "k_check", "published_classes", "row_classes",
           "smallest_class"]


def checked_partition(partitioner: Any, data: Any, k: int, rng: np.random.Generator,
                      params: Mapping[str, Any]) -> NDArray[np.intp]:
    """Run a partitioner and verify its labels; an invalid partition is a bug, not bad input."""
    labels = partitioner(data, k, random_state=rng, **params)
    n = data.n_samples if isinstance(data, MixedData) else np.asarray(data).shape[0]
    try:
        return check_labels(labels, n_samples=n, k=k)
    except (TypeError, ValueError) as error:
        raise InternalError(
            f"Method {partitioner.name!r} returned an invalid partition ({error}). Nothing "
            "was released. This is a bug in microagg."
        ) from error


def published_classes(published: pd.DataFrame, qi: tuple[str, ...] | list[str]
                      ) -> NDArray[np.intp]:
    """Equivalence class of each published row: rows with identical quasi-identifiers share
    one, numbered by first appearance.

    Missing values count as a value of their own (a published ``NaN`` is what an intruder
    sees). Vectorized: each column is factorized, the codes combined into one key per row.

    Examples
    --------
    >>> published_classes(pd.DataFrame({"a": [2, 1, 2], "b": ["x", "x", "x"]}), ["a", "b"])
    array([0, 1, 0])
    """
    codes = np.zeros(len(published), dtype=np.int64)
    for col in qi:
        values, distinct = distinct_codes(published[col])  # lists and structs by content
        # combine as mixed-radix digits, re-factorizing whenever the key could overflow
        codes = codes * (distinct + 1) + values
        if distinct and codes.max(initial=0) > 2**40:
            codes = pd.factorize(codes)[0].astype(np.int64)
    return pd.factorize(codes)[0].astype(np.intp)


def class_sizes(classes: NDArray[np.intp]) -> NDArray[np.int64]:
    """Rows in each class; the smallest is the achieved k-anonymity."""
    return np.bincount(classes).astype(np.int64)


def smallest_class(chunks: Iterable[pd.DataFrame], qi: tuple[str, ...] | list[str]
                   ) -> tuple[int, int]:
    """``(rows, smallest class)`` of a table read back in chunks: classes of identical
    published quasi-identifiers, counted on 64-bit row hashes (a collision could only merge
    two classes, never split one). Memory: one hash per row.

    Examples
    --------
    >>> smallest_class([pd.DataFrame({"a": [1.0, 1.0]}), pd.DataFrame({"a": [2.0, 1.0]})], ["a"])
    (4, 1)
    """
    hashes = [pd.util.hash_pandas_object(chunk.loc[:, list(qi)], index=False).to_numpy()
              for chunk in chunks]
    flat = np.concatenate(hashes) if hashes else np.empty(0, dtype=np.uint64)
    if not flat.size:
        return 0, 0
    return int(flat.size), int(np.unique(flat, return_counts=True)[1].min())


def k_check(k_required: int | None, achieved: int) -> Mapping[str, Any]:
    """``checks["k_anonymity"]``: ``k_required`` ``None`` when k is reported, not promised."""
    if k_required is not None and achieved < k_required:
        raise PrivacyViolationError(
            f"The published quasi-identifiers are only {achieved}-anonymous, below the "
            f"required k={k_required}. Nothing was released. This is a bug in microagg.")
    return MappingProxyType({
        "required": k_required,
        "achieved": achieved,
        "model": "k-anonymity: smallest number of published records sharing the same "
                 "quasi-identifier values, counted on the published data"
                 + ("" if k_required is not None else
                    " (reported, not promised: a noisy aggregation gives each record its own "
                    "values)"),
    })


def group_k_check(k: int, group_min: int, model: str) -> Mapping[str, Any]:
    """``checks["group_k"]``: the smallest group, which must hold at least ``k`` records."""
    if group_min < k:  # pragma: no cover - check_labels / dp guarantee it
        raise PrivacyViolationError(f"A group has {group_min} < k={k} records. Nothing was "
                                    "released. This is a bug in microagg.")
    return MappingProxyType({"required": k, "achieved": group_min, "model": model})


def diversity_checks(classes: NDArray[np.intp], published: pd.DataFrame,
                     sens: tuple[str, ...], l: float | None, diversity: str, c: float
                     ) -> dict[str, Any]:
    """l-diversity re-derived from the published classes (raises below the required l)."""
    if l is None or not sens:
        return {}
    achieved = {col: check_l_diversity(classes, published[col].to_numpy(), l,
                                       diversity=diversity, c=c) for col in sens}
    return {"l_diversity": MappingProxyType({
        "required": l,
        "achieved": min(achieved.values()),
        "by_column": MappingProxyType(achieved),
        "diversity": diversity,
        **({"c": c} if diversity == "recursive" else {}),
        "model": f"{diversity} l-diversity of every sensitive column in every class of "
                 "identical published quasi-identifiers",
    })}


def closeness_checks(classes: NDArray[np.intp],
                     closeness: Mapping[str, SensitiveDistribution], t: float | None
                     ) -> dict[str, Any]:
    """t-closeness re-derived from the published classes (raises above the required t)."""
    if t is None or not closeness:
        return {}
    achieved = {c: check_t_closeness(classes, d, t) for c, d in closeness.items()}
    return {"t_closeness": MappingProxyType({
        "required": t,
        "achieved": max(achieved.values()),
        "by_column": MappingProxyType(achieved),
        "distance": MappingProxyType({c: d.distance for c, d in closeness.items()}),
        "model": "largest Earth Mover's Distance between a published class's sensitive "
                 "distribution and the whole table's",
    })}


class GroupVerifier:
    """Published rows checked group by group as they stream past (file, Dask, stream).

    Every row of a group must show the same values (a group publishes one representative),
    every group must hold at least ``k`` rows, and exactly ``n_rows`` rows must be seen.
    Memory: one row of values per group.

    Examples
    --------
    >>> check = GroupVerifier(k=2, n_groups=3, n_features=1)
    >>> values = np.array([[1.0], [1.0], [5.0], [5.0], [5.0], [1.0], [1.0]])
    >>> check.add(np.array([0, 0, 1, 1, 1, 2, 2]), values)
    >>> check.finish(n_rows=7), check.smallest_class()  # groups 0 and 2 form one class
    (2, 3)
    """

    def __init__(self, *, k: int, n_groups: int, n_features: int) -> None:
        self.k = k
        self._reference = np.full((n_groups, n_features), np.nan)
        self._seen = np.zeros(n_groups, dtype=bool)
        self._counts = np.zeros(n_groups, dtype=np.int64)
        self._rows = 0

    def add(self, labels: NDArray[np.integer], values: NDArray[np.float64]) -> None:
        """Check the next published rows (``values``, shape (m, p)) of groups ``labels``."""
        lab = np.asarray(labels, dtype=np.intp)
        first_time = ~self._seen[lab]
        self._reference[lab[first_time]] = values[first_time]
        self._seen[lab] = True
        differs = ~np.all((self._reference[lab] == values)
                          | (np.isnan(self._reference[lab]) & np.isnan(values)), axis=1)
        if differs.any():
            bad = self._rows + int(np.flatnonzero(differs)[0])
            raise PrivacyViolationError(
                f"Published row {bad} differs from the other rows of its group. Nothing was "
                "released. This is a bug in microagg.")
        self._counts += np.bincount(lab, minlength=self._counts.size)
        self._rows += lab.size

    def finish(self, *, n_rows: int) -> int:
        """The smallest group (a lower bound of the achieved k-anonymity: identical values in
        two groups only make a class larger), after checking the row count and k."""
        if self._rows != n_rows:
            raise PrivacyViolationError(f"The published table has {self._rows} rows, not "
                                        f"{n_rows}. Nothing was released.")
        used = self._counts[self._counts > 0]
        achieved = int(used.min())
        if achieved < self.k:
            raise PrivacyViolationError(f"A published group has {achieved} < k={self.k} rows. "
                                        "Nothing was released. This is a bug in microagg.")
        return achieved

    def group_classes(self) -> NDArray[np.intp]:
        """The class of each group (:func:`row_classes` of the rows the groups publish; -1
        for a group without rows)."""
        used = np.flatnonzero(self._counts > 0)
        classes = np.full(self._counts.size, -1, dtype=np.intp)
        if used.size:
            classes[used] = row_classes(self._reference, used)
        return classes

    def smallest_class(self) -> int:
        """The exact k-anonymity of the rows seen: classes of identical published values are
        unions of groups (those that publish the same representative).

        Memory: a few integers per group (:func:`smallest_class_of`), not a sorted copy of
        every group's row (``np.unique(axis=0)`` took about 7 GB over 20 million groups)."""
        used = np.flatnonzero(self._counts > 0)
        if used.size == 0:
            return 0
        return smallest_class_of(self._reference, used, self._counts[used])


_COMPARE_ROWS = 1_000_000  # rows compared at a time when keys are checked


def _row_keys(rows: NDArray[np.float64], index: NDArray[np.intp]) -> NDArray[np.uint64]:
    """A 64-bit key of each row ``rows[index]`` mixed from its bytes, column by column."""
    keys = np.full(index.size, 0xCBF29CE484222325, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(rows.shape[1]):
            keys ^= np.ascontiguousarray(rows[index, j]).view(np.uint64)
            keys *= np.uint64(0x100000001B3)
            keys ^= keys >> np.uint64(29)
    return keys


def smallest_class_of(rows: NDArray[np.float64], index: NDArray[np.intp],
                      counts: NDArray[np.int64]) -> int:
    """The smallest total of ``counts`` over the classes of byte-identical rows
    ``rows[index]`` (each row stands for ``counts`` published rows; :func:`row_classes`).

    >>> rows = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [-0.0, 0.0], [0.0, 0.0]])
    >>> smallest_class_of(rows, np.arange(5), np.array([2, 5, 3, 4, 7]))
    4
    """
    return int(np.bincount(row_classes(rows, index), weights=counts).min())


def row_classes(rows: NDArray[np.float64], index: NDArray[np.intp]) -> NDArray[np.intp]:
    """The class of each row ``rows[index]``: byte-identical rows share one (numbered 0, 1,
    ... in no particular order).

    Rows are sorted by a 64-bit key of their bytes; rows next to each other with the same
    key are then compared byte for byte, and should two different rows share a key the
    classes are found exactly by ``np.unique`` instead, so a key collision can never merge
    two classes (which would overstate k). Identical bytes, not equal values, make a class:
    ``0.0`` and ``-0.0`` are printed differently, and so stay apart.

    >>> classes = row_classes(np.array([[1.0], [3.0], [1.0], [-0.0], [0.0]]), np.arange(5))
    >>> bool(classes[0] == classes[2]), len(set(classes.tolist()))
    (True, 4)
    """
    keys = _row_keys(rows, index)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    repeats = np.flatnonzero(keys[1:] == keys[:-1]) + 1  # sorted positions equal to the last
    del keys
    for a in range(0, repeats.size, _COMPARE_ROWS):
        at = repeats[a:a + _COMPARE_ROWS]
        here = rows[index[order[at]]].view(np.uint64)
        before = rows[index[order[at - 1]]].view(np.uint64)
        if not np.array_equal(here, before):  # two different rows share a key
            _, inverse = np.unique(rows[index].view(np.uint64), axis=0, return_inverse=True)
            return np.asarray(inverse, dtype=np.intp).ravel()
    starts = np.ones(index.size, dtype=bool)
    starts[repeats] = False
    classes = np.empty(index.size, dtype=np.intp)
    classes[order] = np.cumsum(starts) - 1
    return classes

"""Partitioners: every way of cutting records into groups of at least k, by name.

Each partitioner has the signature ``f(X, k, *, random_state=None, **params) -> labels``:
``X`` is a scaled, finite (n_samples, n_features) array; ``labels`` an intp array of group
numbers 0..g-1, every group with at least ``k`` records. :data:`PARTITIONERS` maps a short
name to its :class:`Partitioner` entry; the CLI, the benchmarks and the common test suite
enumerate it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._constraints import (
    Anything,
    Constraint,
    InstanceOf,
    Interval,
    Options,
    unknown_option,
    validate_params,
)
from .._validation import RandomState
from ..documents.mdav import spherical_partition
from ..fuzzy import fuzzy_partition
from ..semantic.mdav import semantic_mdav
from ..series.mdav import series_mdav
from .categorical import mdav_categorical
from .cdt import cdt
from .colgen import CONSTRAINTS as _COLGEN_CONSTRAINTS
from .colgen import colgen, resolve_colgen_time
from .density import dba, mdav2
from .extremes import kward, md, tfrp
from .local_search import quality_mode, resolve_time_limit
from .mdav import cbfs, mdav, mdav1, vmdav
from .mixed import MixedData, mage
from .scale import CONSTRAINTS as _SCALE_CONSTRAINTS
from .scale import QUALITY_PARAMS as _SCALE_QUALITY
from .scale import mdav_scale, refine_groups
from .sorting import meansort_ps, mhm, multidsort_ps
from .top_down import bottom_up, top_down
from .univariate import optimal_univariate, projected_optimal_univariate

__all__ = [
    "ALIASES",
    "PARTITIONERS",
    "MixedData",
    "Partitioner",
    "bottom_up",
    "cbfs",
    "cdt",
    "colgen",
    "dba",
    "get_partitioner",
    "kward",
    "mage",
    "md",
    "mdav",
    "mdav1",
    "mdav2",
    "mdav_categorical",
    "mdav_scale",
    "meansort_ps",
    "mhm",
    "multidsort_ps",
    "optimal_univariate",
    "partition",
    "projected_optimal_univariate",
    "quality_mode",
    "series_mdav",
    "spherical_partition",
    "tfrp",
    "top_down",
    "vmdav",
]


@dataclass(frozen=True)
class Partitioner:
    """A registered partitioner: the function and what a user needs to know about it."""

    name: str
    """Its name in :data:`PARTITIONERS` (``--method``)."""
    function: Callable[..., NDArray[np.intp]]
    """``f(X, k, *, random_state=None, **params) -> labels``."""
    summary: str
    """One line on what it does (``microagg methods``)."""
    reference: str
    """The paper it follows, or where it comes from."""
    fixed_size: bool
    """Every group has k records except one of k..2k-1 (checked by the common tests)."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Extra keyword parameters and their defaults."""
    randomized: bool = False
    """Whether ``random_state`` changes the result."""
    mixed: bool = False
    """Whether it also takes :class:`~microagg.partition.mixed.MixedData` (categorical
    quasi-identifiers with hierarchies)."""
    needs_sensitive: bool = False
    """Whether it groups on the sensitive attributes too (``sensitive=`` parameter)."""
    phased_budget: bool = False
    """Whether its phases stop at shares of its ``time_limit`` (colgen), so that a run can
    depend on the machine's speed before the whole budget is spent; the release then always
    says so (:func:`~microagg._advice.time_budget`)."""
    resolve: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None
    """Turns defaults that depend on the number of records into values (mdav-ls's
    ``time_limit="auto"`` into seconds), so that a release records what was used."""
    constraints: Mapping[str, tuple[Constraint, ...]] = field(default_factory=dict)
    """The allowed forms of each parameter in ``params`` (see :mod:`microagg._constraints`);
    :meth:`check_params` turns them into the one message format."""
    generalizes: bool = False
    """Whether it publishes generalized values (ranges, value sets) rather than numbers to
    mask: like categorical data it refuses epsilon, bounds, the noisy aggregations, scaling."""
    default_aggregation: str = "mean"
    """The aggregation of a release that names none (``"interval"`` for cdt's ranges)."""
    publishes_value_sets: bool = False
    """Whether categories without a hierarchy are published as the set of the group's values
    (cdt, seed 004 Table 9) instead of their hierarchy's common ancestor."""
    block_size: int = 10_000
    """Default largest block when it runs block by block (the blocked, file and Dask
    engines): 10,000 for the quadratic methods; larger for a near-linear one, whose larger
    blocks lose less at their borders for little more time per record."""
    block_values: int | None = None
    """For a method whose memory per block grows with the block's width: the default block
    holds at most this many values (records x quasi-identifiers), so wider data get blocks
    of fewer records (:meth:`default_block_size`); ``None``: :attr:`block_size` whatever
    the width."""
    refine_across: Callable[..., NDArray[np.intp]] | None = None
    """A local search that improves a partition found block by block across the block
    borders, called as ``refine_across(X, labels, k, random_state=..., **params)``: the
    blocked, file and Dask engines run it on second blocks after the first pass
    (:mod:`microagg.partition.regroup`); ``None``: the blocks are final."""
    quality_params: Mapping[str, Any] = field(default_factory=dict)
    """What the quality mode (``refine=SECONDS``) sets besides the ``time_limit`` when it runs
    this method with a budget of its own (mdav-scale: more refinement of its lists, sweeps
    until its tolerance stops them); parameters the caller gives win."""
    normalization: str | None = None
    """Its own rescaling of ``X`` (``"minmax"``), done through its ``normalize`` parameter;
    ``None``: it uses ``X`` as given. See :meth:`params_for_scaling`."""

    def default_block_size(self, n_columns: int) -> int:
        """The largest block when none is asked for: :attr:`block_size` records, fewer for
        data wider than :attr:`block_values` allows.

        >>> get_partitioner("mdav-scale").default_block_size(10)
        2500000
        >>> get_partitioner("mdav-scale").default_block_size(50)
        500000
        """
        if self.block_values is None:
            return self.block_size
        return min(self.block_size, self.block_values // max(1, int(n_columns)))

    def resolved_params(self, n_samples: int, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with the size-dependent defaults made concrete for ``n_samples``."""
        given = dict(params)
        return given if self.resolve is None else self.resolve(n_samples, given)

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` as a dict after checking them: an unknown name raises TypeError listing
        the allowed ones; then each value against :attr:`constraints` (TypeError for the
        wrong type before ValueError for the wrong value). Defaults are not filled in.

        Examples
        --------
        >>> PARTITIONERS["vmdav"].check_params({"gamma": -1.0})
        Traceback (most recent call last):
        ...
        ValueError: The 'gamma' parameter of vmdav must be a float >= 0. Got -1.0 instead.
        """
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            allowed = ", ".join(sorted(self.params)) or "none"
            raise TypeError(
                f"Unknown parameter(s) {', '.join(unknown)} for method {self.name!r}. "
                f"Its parameters: {allowed}."
            )
        return validate_params(params, self.constraints, caller=self.name)

    def params_for_scaling(self, params: Mapping[str, Any], scaling: str | None
                           ) -> dict[str, Any]:
        """The parameters to run with when the caller scales ``X`` with an explicit ``scaling``.

        The Request owns scaling: a partitioner with its own :attr:`normalization` has it
        switched off (``normalize="none"``) when ``scaling`` is given, so that the caller's
        scaling is the one used. ``scaling=None`` (not given) keeps the partitioner's own,
        as in its paper. Giving both ``scaling`` and a ``normalize`` other than ``"none"``
        is refused with a ValueError: one of the two would be ignored.

        Examples
        --------
        >>> PARTITIONERS["top-down"].params_for_scaling({"c": 2}, "standard")
        {'c': 2, 'normalize': 'none'}
        >>> PARTITIONERS["top-down"].params_for_scaling({"c": 2}, None)
        {'c': 2}
        >>> PARTITIONERS["mdav"].params_for_scaling({}, "minmax")
        {}
        """
        given = dict(params)
        if scaling is None or self.normalization is None:
            return given
        own = given.get("normalize", "none")
        if own != "none":
            raise ValueError(
                f"Method {self.name!r} applies its own normalization (normalize={own!r}) and "
                f"scaling={scaling!r} was given too: one of them would be ignored. Drop "
                f"normalize to use scaling={scaling!r} (the method's own normalization is "
                f"then switched off), or drop scaling to keep normalize={own!r}.")
        return {**given, "normalize": "none"}

    def __call__(self, X: ArrayLike | MixedData, k: int, *, random_state: RandomState = None,
                 **params: Any) -> NDArray[np.intp]:
        return self.function(X, k, random_state=random_state, **self.check_params(params))


_NORMALIZE: tuple[Constraint, ...] = (Options(("minmax", "none")),)
_SORTING: Mapping[str, tuple[Constraint, ...]] = {
    "grow": (Options(("sse", "nearest")),), "normalize": _NORMALIZE}
_SEEDS: Mapping[str, tuple[Constraint, ...]] = {
    "c": (Interval(int, 1, None, closed="left"),), "normalize": _NORMALIZE}


_ENTRIES = (
    Partitioner(
        "mdav", mdav,
        "Maximum distance to average vector: two fixed-size groups per step (3k threshold).",
        "Domingo-Ferrer & Torra, Data Min. Knowl. Disc. 11 (2005)", fixed_size=True),
    Partitioner(
        "mdav1", mdav1,
        "MDAV-1: MDAV with a 2k threshold; last group around the farthest record, rest to nearest.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "md", md,
        "Maximum distance: groups around the two records farthest apart.",
        "Domingo-Ferrer & Mateo-Sanz, IEEE TKDE 14(1) (2002)", fixed_size=False),
    Partitioner(
        "cbfs", cbfs,
        "Centroid-based fixed size: one group per step around the record farthest from the centroid.",
        "Laszlo & Mukherjee, IEEE TKDE 17(7) (2005)", fixed_size=False),
    Partitioner(
        "vmdav", vmdav,
        "Variable-size MDAV: groups of k grown up to 2k-1 while the next record is close (gamma).",
        "Solanas, Martínez-Ballesté & Domingo-Ferrer, COMPSTAT (2006)", fixed_size=False,
        params={"gamma": 0.2}, constraints={"gamma": (Interval(float, 0, None, closed="left"),)}),
    Partitioner(
        "multidsort-ps", multidsort_ps,
        "MultiDSort order + pairwise-systematic groups grown by least SSE increase (seed 003).",
        "Seed 003, Algorithms 1-2", fixed_size=True,
        params={"grow": "sse", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "meansort-ps", meansort_ps,
        "Meansort order + pairwise-systematic groups grown by least SSE increase (seed 003).",
        "Seed 003, Eq. 5 and Algorithm 2", fixed_size=True,
        params={"grow": "sse", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "multidsort-ps-nn", partial(multidsort_ps, grow="nearest"),
        "MultiDSort + pairwise-systematic with the seed's k-1 nearest records.",
        "Seed 003, Algorithms 1-2 (nearest-neighbour reading)", fixed_size=True,
        params={"grow": "nearest", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "meansort-ps-nn", partial(meansort_ps, grow="nearest"),
        "Meansort + pairwise-systematic with the seed's k-1 nearest records.",
        "Seed 003, Eq. 5 and Algorithm 2 (nearest-neighbour reading)", fixed_size=True,
        params={"grow": "nearest", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "tfrp1", partial(tfrp, stage=1),
        "TFRP-1: groups seeded alternately farthest from two fixed reference points.",
        "Chang, Li & Huang, J. Syst. Softw. 80 (2007)", fixed_size=False),
    Partitioner(
        "tfrp2", tfrp,
        "TFRP-2: TFRP-1 then dissolution of groups whose records fit better elsewhere.",
        "Chang, Li & Huang, J. Syst. Softw. 80 (2007)", fixed_size=False),
    Partitioner(
        "dba1", partial(dba, stage=1),
        "DBA-1: groups around the unassigned record of highest k-density.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "dba2", dba,
        "DBA-2: DBA-1, then dissolve groups in reverse order and split big ones with MDAV-1.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "mdav2", mdav2,
        "MDAV-2: MDAV-1 followed by DBA's second stage.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "kward", kward,
        "k-Ward: two extreme seed groups, then Ward merging of clusters below k, recursively.",
        "Domingo-Ferrer & Mateo-Sanz, IEEE TKDE 14(1) (2002)", fixed_size=False),
    Partitioner(
        "top-down", top_down,
        "c-means++ subsets, then recursive splits around the farthest pair into groups of k..2k-1.",
        "Seed 000, Algorithms 1-3", fixed_size=False,
        params={"c": 1, "normalize": "minmax"}, randomized=True, constraints=_SEEDS,
        normalization="minmax"),
    Partitioner(
        "bottom-up", bottom_up,
        "Seed 000's comparator: random seeds each grow a group of their k-1 nearest records.",
        "Seed 000, section 4.2, after Song et al., IEEE Access 7 (2019)", fixed_size=False,
        params={"c": 1, "normalize": "minmax"}, randomized=True, constraints=_SEEDS,
        normalization="minmax"),
    Partitioner(
        "mdav-categorical", mdav_categorical,
        "MDAV for ordinal, nominal and numeric data: medians and modes as prototypes, rank "
        "and 0/1 (or hierarchy) distances.",
        "Torra, PSD 2004; Domingo-Ferrer & Torra, Data Min. Knowl. Disc. 11 (2005)",
        fixed_size=True, mixed=True),
    Partitioner(
        "fuzzy", fuzzy_partition,
        "Fuzzy c-means, hard-assigned; c and m adjusted until every cluster has >= k records "
        "(strategy='repair': one run, small clusters dissolved).",
        "Domingo-Ferrer & Torra, JACIII 7(2) (2003); seed 001, section 2.4",
        fixed_size=False, params={"m": None, "strategy": "adjust"}, randomized=True,
        constraints={"m": (None, Interval(float, 1, None, closed="neither")),
                     "strategy": (Options(("adjust", "repair")),)}),
    Partitioner(
        "mage", mage,
        "MAGE: mixed-distance cluster partition, then CKA merging into classes of >= k "
        "(numeric + categorical with hierarchies).",
        "Seed 002; Han, Yu, Yu, Lu & Liu, Knowl.-Based Syst. 55 (2014)", fixed_size=False,
        params={"c": None, "max_iter": 100}, randomized=True, mixed=True,
        constraints={"c": (None, Interval(int, 1, None, closed="left")),
                     "max_iter": (Interval(int, 1, None, closed="left"),)}),
    Partitioner(
        "cdt", cdt,
        "CDT: k-medoids clusters of dissimilar sensitive tuples (min silhouette), then of "
        "similar quasi-identifiers (max silhouette); groups under k merged.",
        "Seed 004; Subramanian, Fayaz, Johnson & Thirumaaran, IJETER 8(9) (2020)",
        fixed_size=False,
        params={"sensitive": None, "sensitive_clusters": None, "max_clusters": 30},
        randomized=True, mixed=True, needs_sensitive=True,
        constraints={"sensitive": (Anything(),),
                     "sensitive_clusters": (None, Interval(int, 1, None, closed="left")),
                     "max_clusters": (None, Interval(int, 2, None, closed="left"))},
        generalizes=True, default_aggregation="interval", publishes_value_sets=True),
    Partitioner(
        "univariate-optimal", projected_optimal_univariate,
        "Optimal univariate microaggregation (exact on one column, O(n k)); several columns "
        "are projected on their first principal axis first.",
        "Hansen & Mukherjee, IEEE TKDE 15(4) (2003); seed 001, sections 2.1 and 2.6",
        fixed_size=False, params={"projection": "pca", "max_size": None},
        constraints={"projection": (Options(("pca", "sum")),),
                     "max_size": (None, Interval(int, 2, None, closed="left"))}),
    Partitioner(
        "mdav-ls", quality_mode,
        "Quality mode: best of MDAV/MDAV-2/TFRP-2/CBFS, then iterated local search (moves, "
        "swaps, kicks, optimal re-segmentation).",
        "This package; Hansen & Mukherjee, IEEE TKDE 15(4) (2003) for the re-segmentation",
        fixed_size=False, params={"start": "auto", "rounds": 200, "time_limit": "auto"},
        randomized=True, resolve=resolve_time_limit,
        constraints={"start": (InstanceOf(str),),
                     "rounds": (Interval(int, 0, None, closed="left"),),
                     "time_limit": (None, Options(("auto",)),
                                    Interval(float, 0, None, closed="neither"))}),
    Partitioner(
        "colgen", colgen,
        "Quality mode by linear programming: mdav-ls, then parts of whole groups re-solved by "
        "column generation and an integer master, then local search across the parts.",
        "Aloise, Hansen, Rocha & Santi, J. Global Optim. 60(2) (2014); Castro, Gentile & "
        "Spagnolo-Arrizabalaga, Comput. Oper. Res. (2022)",
        fixed_size=False, params={"part_size": 400, "time_limit": "auto"},
        randomized=True, resolve=resolve_colgen_time, constraints=_COLGEN_CONSTRAINTS,
        phased_budget=True),
    Partitioner(
        "mdav-scale", mdav_scale,
        "For large files: groups built from each record's nearest neighbours, then improved by "
        "moving and swapping records between nearby groups; MDAV's loss or lower, far faster.",
        "Laszlo & Mukherjee, IEEE TKDE 17(7) (2005) for CBFS; this package for the neighbour "
        "lists and the local search", fixed_size=False,
        params={"neighbours": 12, "sweeps": 2, "tol": 1e-3, "rounds": 1, "time_limit": None},
        randomized=True, refine_across=refine_groups,
        # 10^7 x 10 out of core, quality mode: blocks of 2.5M records (4 blocks) give an IL
        # 0.971 times exact MDAV's in 448 s and 3.0 GiB, blocks of 500,000 0.998, 343 s and
        # 1.3 GiB (benchmarks/results/scale-2026.md); fewer records per block in wider data
        block_size=2_500_000, block_values=25_000_000,
        constraints=_SCALE_CONSTRAINTS, quality_params=_SCALE_QUALITY),
    *(
        Partitioner(
            f"mhm-{ordering}", partial(mhm, ordering=ordering),
            f"{label} ordering, then the optimal cut of the order into groups of k..2k-1 "
            "(Hansen-Mukherjee shortest path).",
            "Domingo-Ferrer, Martínez-Ballesté, Mateo-Sanz & Sebé, VLDB J. 15 (2006)",
            fixed_size=False, params={"ordering": ordering},
            constraints={"ordering": (Options(("cbfs", "md", "mdav", "npn")),)})
        for ordering, label in (("npn", "Nearest-point-next"), ("mdav", "MDAV group"),
                                ("md", "MD group"), ("cbfs", "CBFS group"))
    ),
    Partitioner(
        "series-mdav", series_mdav,
        "Time series (one column per time point): MDAV under the Euclidean distance, or "
        "under DTW computed on demand (Sakoe-Chiba band); see microagg series.",
        "Nin & Torra, RSCTC 2006, LNCS 4259; Nin & Torra, Inf. Sci. 179 (2009)",
        fixed_size=True, params={"distance": "euclidean", "band": None},
        constraints={"distance": (Options(("euclidean", "dtw")),),
                     "band": (None, Interval(int, 0, None, closed="left"))}),
    Partitioner(
        "semantic-mdav", semantic_mdav,
        "Semantic MDAV: categories compared in a taxonomy (hierarchy or WordNet) by a "
        "semantic distance, semantic centroids; see microagg semantic.",
        "Martinez, Sanchez & Valls, Computers & Security 31 (2012); Sanchez, Batet, Isern & "
        "Valls, Expert Syst. Appl. 39 (2012)", fixed_size=True, mixed=True,
        params={"ontology": "hierarchy", "distance": "feature"},
        constraints={"ontology": (Options(("hierarchy", "wordnet")),),
                     "distance": (Options(("feature", "wu-palmer", "ic")),)}),
    Partitioner(
        "spherical-mdav", spherical_partition,
        "Spherical MDAV: records grouped by the direction of their vector (cosine), groups "
        "of k; for documents (sparse TF-IDF) see microagg documents.",
        "Abril, Navarro-Arribas & Torra, Computers & Security 49 (2015)", fixed_size=True),
)

PARTITIONERS: Mapping[str, Partitioner] = MappingProxyType({p.name: p for p in _ENTRIES})
"""Registered partitioners by name (read-only)."""

ALIASES: Mapping[str, str] = MappingProxyType({
    "mdav-generic": "mdav",
    "mhm": "mhm-npn",  # Solanas (2008) calls the 3k-threshold MDAV "MDAV-generic"
    "k-ward": "kward",
    "mdav-1": "mdav1",
    "mdav-2": "mdav2",
    "tfrp-1": "tfrp1",
    "tfrp-2": "tfrp2",
    "dba-1": "dba1",
    "dba-2": "dba2",
    "v-mdav": "vmdav",
})
"""Other names users know the methods by."""


def get_partitioner(method: str) -> Partitioner:
    """Look a partitioner up by name or alias; an unknown name lists the valid ones.

    Parameters
    ----------
    method : str
        A name of :data:`PARTITIONERS` or one of :data:`ALIASES` (``"mdav-generic"``).
    """
    key = ALIASES.get(method, method)
    try:
        return PARTITIONERS[key]
    except KeyError:
        raise unknown_option("method", method, sorted(PARTITIONERS)) from None


def partition(X: ArrayLike, k: int, *, method: str = "mdav", random_state: RandomState = None,
              **params: Any) -> NDArray[np.intp]:
    """Partition the rows of ``X`` into groups of at least ``k`` with the named method.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    method : str, default="mdav"
        A key of :data:`PARTITIONERS` (or of :data:`ALIASES`).
    random_state : None, int or numpy.random.Generator, default=None
        Seed for randomized methods.
    **params
        Method parameters (see ``PARTITIONERS[method].params``).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
    """
    return get_partitioner(method)(X, k, random_state=random_state, **params)

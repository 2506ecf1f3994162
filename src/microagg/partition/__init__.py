"""Partitioners: every way of cutting records into groups of at least k, by name.

Each partitioner has the signature ``f(X, k, *, random_state=None, **params) -> labels``:
``X`` is a scaled, finite (n_samples, n_features) array; ``labels`` an intp array of group
numbers 0..g-1, every group with at least ``k`` records. :data:`PARTITIONERS` maps a short
name to its :class:`Partitioner` entry; the CLI, the benchmarks and the common test suite
enumerate it.

Importing this package imports no partitioner: each entry names its function as
``"module:function"``, imported on the first read of :attr:`Partitioner.function`, and the
partitioners' names below load on first access (PEP 562), so that the registry loads no
numba kernel, no scipy and no domain package (documents, fuzzy, semantic, series).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Anything, Constraint, InstanceOf, Interval, Options, unknown_option
from .._base.validation import RandomState
from .._runtime.lazy import LazyMapping, Target, lazy_names
from ._partitioner import Partitioner

if TYPE_CHECKING:  # what the lazy names are, for type checkers; loaded on access below
    from ..documents.mdav import spherical_partition
    from ..series.mdav import series_mdav
    from .categorical import mdav_categorical
    from .cdt import cdt
    from .colgen import colgen
    from .density import dba, mdav2
    from .extremes import kward, md, tfrp
    from .local_search import quality_mode
    from .mdav import cbfs, mdav, mdav1, vmdav
    from .mixed import MixedData, mage
    from .scale import mdav_scale
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

_WHERE = {
    "MixedData": ".mixed", "bottom_up": ".top_down", "cbfs": ".mdav", "cdt": ".cdt",
    "colgen": ".colgen", "dba": ".density", "kward": ".extremes", "mage": ".mixed",
    "md": ".extremes", "mdav": ".mdav", "mdav1": ".mdav", "mdav2": ".density",
    "mdav_categorical": ".categorical", "mdav_scale": ".scale", "meansort_ps": ".sorting",
    "mhm": ".sorting", "multidsort_ps": ".sorting", "optimal_univariate": ".univariate",
    "projected_optimal_univariate": ".univariate", "quality_mode": ".local_search",
    "series_mdav": "..series.mdav", "spherical_partition": "..documents.mdav",
    "tfrp": ".extremes", "top_down": ".top_down", "vmdav": ".mdav",
}
"""Where each partitioner of :data:`__all__` lives: imported on first access (PEP 562), so
that importing this package imports no family and no domain package."""

__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__, globals())


class _Package(ModuleType):
    """This package, whose lazy names stay the partitioners' once their modules are loaded."""

    def __setattr__(self, name: str, value: Any) -> None:
        # importing a submodule binds it to its name in the package: for mdav, cdt, colgen
        # and top_down that name is the partitioner's, loaded on access instead
        if not (name in _WHERE and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

_HERE = "microagg.partition"

_NORMALIZE: tuple[Constraint, ...] = (Options(("minmax", "none")),)
_SORTING: Mapping[str, tuple[Constraint, ...]] = {
    "grow": (Options(("sse", "nearest")),), "normalize": _NORMALIZE}
_SEEDS: Mapping[str, tuple[Constraint, ...]] = {
    "c": (Interval(int, 1, None, closed="left"),), "normalize": _NORMALIZE}


_KABIR = "Kabir, Mahmood, Mustafa & Wang, IEEE Trans. Cloud Comput. 8(2) (2020)"
"""The sorting framework's paper (MultiDSort, Meansort, pairwise-systematic groups)."""
_YANG = "Yang, Random Aggregation: Differential Privacy in k-Anonymity (2020 or later)"
"""The top-down k-partition's paper (no year printed; it cites work of 2020)."""
_TORRA = ("Torra, Navarro-Arribas & Stokes, An Overview of the Use of Clustering for Data "
          "Privacy (2016)")
_ANANDHI = "Anandhi & Saravanan, MLAIJ 3(2) (2016)"

_ENTRIES = (
    Partitioner(
        "mdav", f"{_HERE}.mdav:mdav",
        "Maximum distance to average vector: two fixed-size groups per step (3k threshold).",
        "Domingo-Ferrer & Torra, Data Min. Knowl. Disc. 11 (2005)", fixed_size=True),
    Partitioner(
        "mdav1", f"{_HERE}.mdav:mdav1",
        "MDAV-1: MDAV with a 2k threshold; last group around the farthest record, rest to nearest.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "md", f"{_HERE}.extremes:md",
        "Maximum distance: groups around the two records farthest apart.",
        "Domingo-Ferrer & Mateo-Sanz, IEEE TKDE 14(1) (2002)", fixed_size=False),
    Partitioner(
        "cbfs", f"{_HERE}.mdav:cbfs",
        "Centroid-based fixed size: one group per step around the record farthest from the centroid.",
        "Laszlo & Mukherjee, IEEE TKDE 17(7) (2005)", fixed_size=False),
    Partitioner(
        "vmdav", f"{_HERE}.mdav:vmdav",
        "Variable-size MDAV: groups of k grown up to 2k-1 while the next record is close (gamma).",
        "Solanas, Martínez-Ballesté & Domingo-Ferrer, COMPSTAT (2006)", fixed_size=False,
        params={"gamma": 0.2}, constraints={"gamma": (Interval(float, 0, None, closed="left"),)}),
    Partitioner(
        "multidsort-ps", f"{_HERE}.sorting:multidsort_ps",
        "MultiDSort order + pairwise-systematic groups grown by least SSE increase (Kabir et al. 2020).",
        f"{_KABIR}, Algorithms 1-2", fixed_size=True,
        params={"grow": "sse", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "meansort-ps", f"{_HERE}.sorting:meansort_ps",
        "Meansort order + pairwise-systematic groups grown by least SSE increase (Kabir et al. 2020).",
        f"{_KABIR}, Eq. 5 and Algorithm 2", fixed_size=True,
        params={"grow": "sse", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "multidsort-ps-nn", Target(f"{_HERE}.sorting:multidsort_ps", {"grow": "nearest"}),
        "MultiDSort + pairwise-systematic with the seed record's k-1 nearest records.",
        f"{_KABIR}, Algorithms 1-2 (nearest-neighbour reading)", fixed_size=True,
        params={"grow": "nearest", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "meansort-ps-nn", Target(f"{_HERE}.sorting:meansort_ps", {"grow": "nearest"}),
        "Meansort + pairwise-systematic with the seed record's k-1 nearest records.",
        f"{_KABIR}, Eq. 5 and Algorithm 2 (nearest-neighbour reading)", fixed_size=True,
        params={"grow": "nearest", "normalize": "minmax"}, constraints=_SORTING,
        normalization="minmax"),
    Partitioner(
        "tfrp1", Target(f"{_HERE}.extremes:tfrp", {"stage": 1}),
        "TFRP-1: groups seeded alternately farthest from two fixed reference points.",
        "Chang, Li & Huang, J. Syst. Softw. 80 (2007)", fixed_size=False),
    Partitioner(
        "tfrp2", f"{_HERE}.extremes:tfrp",
        "TFRP-2: TFRP-1 then dissolution of groups whose records fit better elsewhere.",
        "Chang, Li & Huang, J. Syst. Softw. 80 (2007)", fixed_size=False),
    Partitioner(
        "dba1", Target(f"{_HERE}.density:dba", {"stage": 1}),
        "DBA-1: groups around the unassigned record of highest k-density.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "dba2", f"{_HERE}.density:dba",
        "DBA-2: DBA-1, then dissolve groups in reverse order and split big ones with MDAV-1.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "mdav2", f"{_HERE}.density:mdav2",
        "MDAV-2: MDAV-1 followed by DBA's second stage.",
        "Lin, Wen, Hsieh & Chang, Expert Syst. Appl. 37 (2010)", fixed_size=False),
    Partitioner(
        "kward", f"{_HERE}.extremes:kward",
        "k-Ward: two extreme seed groups, then Ward merging of clusters below k, recursively.",
        "Domingo-Ferrer & Mateo-Sanz, IEEE TKDE 14(1) (2002)", fixed_size=False),
    Partitioner(
        "top-down", f"{_HERE}.top_down:top_down",
        "c-means++ subsets, then recursive splits around the farthest pair into groups of k..2k-1.",
        f"{_YANG}, Algorithms 1-3", fixed_size=False,
        params={"c": 1, "normalize": "minmax"}, randomized=True, constraints=_SEEDS,
        normalization="minmax"),
    Partitioner(
        "bottom-up", f"{_HERE}.top_down:bottom_up",
        "Yang's comparator: random seeds each grow a group of their k-1 nearest records.",
        f"{_YANG}, section 4.2, after Song, Ma, Tian & Al-Rodhaan, IEEE Access 7 (2019)",
        fixed_size=False,
        params={"c": 1, "normalize": "minmax"}, randomized=True, constraints=_SEEDS,
        normalization="minmax"),
    Partitioner(
        "mdav-categorical", f"{_HERE}.categorical:mdav_categorical",
        "MDAV for ordinal, nominal and numeric data: medians and modes as prototypes, rank "
        "and 0/1 (or hierarchy) distances.",
        "Torra, PSD 2004; Domingo-Ferrer & Torra, Data Min. Knowl. Disc. 11 (2005)",
        fixed_size=True, mixed=True),
    Partitioner(
        "fuzzy", "microagg.partition.fuzzy:fuzzy_partition",
        "Fuzzy c-means, hard-assigned; c and m adjusted until every cluster has >= k records "
        "(strategy='repair': one run, small clusters dissolved).",
        f"Domingo-Ferrer & Torra, JACIII 7(2) (2003); {_TORRA}, section 2.4",
        fixed_size=False, params={"m": None, "strategy": "adjust"}, randomized=True,
        constraints={"m": (None, Interval(float, 1, None, closed="neither")),
                     "strategy": (Options(("adjust", "repair")),)}),
    Partitioner(
        "mage", f"{_HERE}.mixed:mage",
        "MAGE: mixed-distance cluster partition, then CKA merging into classes of >= k "
        "(numeric + categorical with hierarchies).",
        f"Han, Yu, Yu, Lu & Liu, Knowl.-Based Syst. 55 (2014); {_ANANDHI}", fixed_size=False,
        params={"c": None, "max_iter": 100}, randomized=True, mixed=True,
        constraints={"c": (None, Interval(int, 1, None, closed="left")),
                     "max_iter": (Interval(int, 1, None, closed="left"),)}),
    Partitioner(
        "cdt", f"{_HERE}.cdt:cdt",
        "CDT: k-medoids clusters of dissimilar sensitive tuples (min silhouette), then of "
        "similar quasi-identifiers (max silhouette); groups under k merged.",
        "Subramanian, Fayaz, Johnson & Thirumaaran, IJETER 8(9) (2020)",
        fixed_size=False,
        params={"sensitive": None, "sensitive_clusters": None, "max_clusters": 30},
        randomized=True, mixed=True, needs_sensitive=True,
        constraints={"sensitive": (Anything(),),
                     "sensitive_clusters": (None, Interval(int, 1, None, closed="left")),
                     "max_clusters": (None, Interval(int, 2, None, closed="left"))},
        generalizes=True, default_aggregation="interval", publishes_value_sets=True, extra="cdt"),
    Partitioner(
        "univariate-optimal", f"{_HERE}.univariate:projected_optimal_univariate",
        "Optimal univariate microaggregation (exact on one column, O(n k)); several columns "
        "are projected on their first principal axis first.",
        f"Hansen & Mukherjee, IEEE TKDE 15(4) (2003); {_TORRA}, sections 2.1 and 2.6",
        fixed_size=False, params={"projection": "pca", "max_size": None},
        constraints={"projection": (Options(("pca", "sum")),),
                     "max_size": (None, Interval(int, 2, None, closed="left"))}),
    Partitioner(
        "mdav-ls", f"{_HERE}.local_search:quality_mode",
        "Quality mode: best of MDAV/MDAV-2/TFRP-2/CBFS, then iterated local search (moves, "
        "swaps, kicks, optimal re-segmentation).",
        "This package; Hansen & Mukherjee, IEEE TKDE 15(4) (2003) for the re-segmentation",
        fixed_size=False, params={"start": "auto", "rounds": 200, "time_limit": "auto"},
        randomized=True, resolve=f"{_HERE}.local_search:resolve_time_limit",
        constraints={"start": (InstanceOf(str),),
                     "rounds": (Interval(int, 0, None, closed="left"),),
                     "time_limit": (None, Options(("auto",)),
                                    Interval(float, 0, None, closed="neither"))}),
    Partitioner(
        "colgen", f"{_HERE}.colgen:colgen",
        "Quality mode by linear programming: mdav-ls, then parts of whole groups re-solved by "
        "column generation and an integer master, then local search across the parts.",
        "Aloise, Hansen, Rocha & Santi, J. Global Optim. 60(2) (2014); Castro, Gentile & "
        "Spagnolo-Arrizabalaga, Comput. Oper. Res. (2022)",
        fixed_size=False, params={"part_size": 400, "time_limit": "auto"},
        randomized=True, resolve=f"{_HERE}.colgen:resolve_colgen_time",
        constraints=LazyMapping(f"{_HERE}.colgen:CONSTRAINTS"),
        phased_budget=True),
    Partitioner(
        "mdav-scale", f"{_HERE}.scale:mdav_scale",
        "For large files: groups built from each record's nearest neighbours, then improved by "
        "moving and swapping records between nearby groups; MDAV's loss or lower, far faster.",
        "Laszlo & Mukherjee, IEEE TKDE 17(7) (2005) for CBFS; this package for the neighbour "
        "lists and the local search", fixed_size=False,
        params={"neighbours": 12, "sweeps": 2, "tol": 1e-3, "rounds": 1, "time_limit": None},
        randomized=True, refine_across=f"{_HERE}.scale:refine_groups",
        # 10^7 x 10 out of core, quality mode: blocks of 2.5M records (4 blocks) give an IL
        # 0.971 times exact MDAV's in 448 s and 3.0 GiB, blocks of 500,000 0.998, 343 s and
        # 1.3 GiB (benchmarks/results/scale-2026.md); fewer records per block in wider data
        block_size=2_500_000, block_values=25_000_000,
        constraints=LazyMapping(f"{_HERE}.scale:CONSTRAINTS"),
        quality_params=LazyMapping(f"{_HERE}.scale:QUALITY_PARAMS")),
    *(
        Partitioner(
            f"mhm-{ordering}", Target(f"{_HERE}.sorting:mhm", {"ordering": ordering}),
            f"{label} ordering, then the optimal cut of the order into groups of k..2k-1 "
            "(Hansen-Mukherjee shortest path).",
            "Domingo-Ferrer, Martínez-Ballesté, Mateo-Sanz & Sebé, VLDB J. 15 (2006)",
            fixed_size=False, params={"ordering": ordering},
            constraints={"ordering": (Options(("cbfs", "md", "mdav", "npn")),)})
        for ordering, label in (("npn", "Nearest-point-next"), ("mdav", "MDAV group"),
                                ("md", "MD group"), ("cbfs", "CBFS group"))
    ),
    Partitioner(
        "series-mdav", "microagg.series.mdav:series_mdav",
        "Time series (one column per time point): MDAV under the Euclidean distance, or "
        "under DTW computed on demand (Sakoe-Chiba band); see microagg series.",
        "Nin & Torra, RSCTC 2006, LNCS 4259; Nin & Torra, Inf. Sci. 179 (2009)",
        fixed_size=True, params={"distance": "euclidean", "band": None},
        constraints={"distance": (Options(("euclidean", "dtw")),),
                     "band": (None, Interval(int, 0, None, closed="left"))}),
    Partitioner(
        "semantic-mdav", "microagg.semantic.mdav:semantic_mdav",
        "Semantic MDAV: categories compared in a taxonomy (hierarchy or WordNet) by a "
        "semantic distance, semantic centroids; see microagg semantic.",
        "Martinez, Sanchez & Valls, Computers & Security 31 (2012); Sanchez, Batet, Isern & "
        "Valls, Expert Syst. Appl. 39 (2012)", fixed_size=True, mixed=True,
        params={"ontology": "hierarchy", "distance": "feature"},
        constraints={"ontology": (Options(("hierarchy", "wordnet")),),
                     "distance": (Options(("feature", "wu-palmer", "ic")),)}),
    Partitioner(
        "spherical-mdav", "microagg.documents.mdav:spherical_partition",
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

"""The registry entry of a partitioner: its function, named by ``"module:function"`` and
imported on first use, and what a user needs to know about it.

Importing this module imports no partitioner: :mod:`microagg.partition` builds its registry
from these entries without loading a family, a domain package or their dependencies.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Constraint, unknown_option, validate_params
from .._base.validation import RandomState
from .._runtime.lazy import LoadedOnRead

if TYPE_CHECKING:
    from .mixed import MixedData

__all__ = ["EXTRA_MODULES", "Partitioner", "extra_installed"]

EXTRA_MODULES: Mapping[str, str] = MappingProxyType({
    "cdt": "kmedoids", "graph": "networkx", "series": "tslearn", "semantic": "nltk",
    "dask": "distributed", "parquet": "pyarrow", "sql": "sqlalchemy"})
"""The module each optional extra of ``pyproject.toml`` installs, by the extra's name (``pip
install 'microagg[cdt]'`` installs ``kmedoids``)."""


def extra_installed(extra: str) -> bool:
    """Whether the module of the optional ``extra`` can be imported (it is not imported).

    >>> extra_installed("nope")
    Traceback (most recent call last):
    ...
    ValueError: Unknown extra 'nope'. Valid: cdt, dask, graph, parquet, semantic, series, sql.
    """
    try:
        module = EXTRA_MODULES[extra]
    except KeyError:
        raise unknown_option("extra", extra, sorted(EXTRA_MODULES)) from None
    return importlib.util.find_spec(module) is not None


@dataclass(frozen=True)
class Partitioner:
    """A registered partitioner: the function and what a user needs to know about it.

    The functions (:attr:`function`, :attr:`resolve`, :attr:`refine_across`) are given as
    the function, as ``"module:function"`` or as a :class:`Target`; a target is imported on
    the first read of the attribute, so that the registry loads no partitioner.
    """

    name: str
    """Its name in :data:`PARTITIONERS` (``--method``)."""
    function: LoadedOnRead[Callable[..., NDArray[np.intp]]] = LoadedOnRead(required=True)  # noqa: RUF009 - a descriptor, not a shared value
    """The partitioner, ``f(X, k, *, random_state=None, **params) -> labels``."""
    # the type checker takes the descriptor for a default; the class has none (its __get__
    # raises AttributeError on the class), so the three fields below stay positional
    summary: str  # type: ignore[misc]
    """One line on what it does (``microagg methods``)."""
    reference: str  # type: ignore[misc]
    """The paper it follows, or where it comes from."""
    fixed_size: bool  # type: ignore[misc]
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
    says so (:func:`~microagg._pipeline.advice.time_budget`)."""
    resolve: LoadedOnRead[Callable[[int, dict[str, Any]], dict[str, Any]] | None] = (
        LoadedOnRead(required=False))  # noqa: RUF009 - a descriptor, not a shared value
    """Turns defaults that depend on the number of records into values (mdav-ls's
    ``time_limit="auto"`` into seconds), so that a release records what was used."""
    constraints: Mapping[str, tuple[Constraint, ...]] = field(default_factory=dict)
    """The allowed forms of each parameter in ``params`` (see :mod:`microagg._base.constraints`);
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
    refine_across: LoadedOnRead[Callable[..., NDArray[np.intp]] | None] = (
        LoadedOnRead(required=False))  # noqa: RUF009 - a descriptor, not a shared value
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

    extra: str | None = None
    """The optional extra of ``pyproject.toml`` it needs (``"cdt"``: ``pip install
    'microagg[cdt]'``), ``None``: none; :attr:`installed` says whether it is there."""

    @property
    def target(self) -> str | None:
        """The ``"module:function"`` of :attr:`function` as registered (``None`` when it was
        given as a function object).

        >>> from microagg.partition import get_partitioner
        >>> get_partitioner("mdav").target
        'microagg.partition.mdav:mdav'
        """
        return Partitioner.__dict__["function"].target(self)

    @property
    def installed(self) -> bool:
        """Whether the :attr:`extra` it needs is installed (always, when it needs none)."""
        return self.extra is None or extra_installed(self.extra)

    def default_block_size(self, n_columns: int) -> int:
        """The largest block when none is asked for: :attr:`block_size` records, fewer for
        data wider than :attr:`block_values` allows.

        >>> from microagg.partition import get_partitioner
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
        >>> from microagg.partition import PARTITIONERS
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
        >>> from microagg.partition import PARTITIONERS
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

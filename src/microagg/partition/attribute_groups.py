"""Attribute groups: which quasi-identifiers are microaggregated together (seed 001, 2.3).

Microaggregating every attribute on its own (individual ranking / per-variable
microaggregation) or small groups of attributes separately loses less information than one
multivariate partition, but the published records are no longer k-anonymous: combinations
of group representatives can be unique (seed 001, Table 3). Correlated attributes are best
kept together (Nin, Herranz & Torra 2008).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._base.constraints import unknown_option
from .._base.validation import check_matrix

__all__ = ["GROUPINGS", "correlation_groups", "resolve_attribute_groups"]

GROUPINGS = ("individual", "correlation")
"""Named ways to form attribute groups (besides listing them)."""


def correlation_groups(X: ArrayLike, n_groups: int) -> list[list[int]]:
    """Group columns so that strongly correlated ones stay together.

    Average-linkage hierarchical clustering of the columns with the dissimilarity
    ``1 - |Pearson correlation|`` (constant columns count as uncorrelated with everything),
    cut into ``n_groups`` groups. Groups are listed by their first column; the columns of a
    group in increasing order.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_groups : int
        ``1 <= n_groups <= n_features``.

    Returns
    -------
    list of list of int

    References
    ----------
    Nin, J., Herranz, J., Torra, V. "How to group attributes in multivariate
    microaggregation." Int. J. Uncertain. Fuzziness Knowl.-Based Syst. 16(1), 121-138 (2008).

    Examples
    --------
    >>> x = [0.0, 1.0, 2.0, 3.0, 4.0]
    >>> correlation_groups([[a, 2 * a, (a - 2) ** 2, -(a - 2) ** 2] for a in x], 2)
    [[0, 1], [2, 3]]
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    A = check_matrix(X, caller="correlation_groups")
    p = A.shape[1]
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) \
            or not 1 <= n_groups <= p:
        raise ValueError(f"The 'n_groups' parameter must be an int in 1..{p} (the number of "
                         f"columns). Got {n_groups!r}.")
    if p == 1 or n_groups == p:
        return [[j] for j in range(p)]
    centred = A - A.mean(axis=0)
    norms = np.sqrt((centred**2).sum(axis=0))
    safe = np.where(norms > 0, norms, 1.0)
    corr = (centred.T @ centred) / np.outer(safe, safe)
    corr[norms == 0, :] = 0.0
    corr[:, norms == 0] = 0.0
    dissimilarity = np.clip(1.0 - np.abs(corr), 0.0, 2.0)
    np.fill_diagonal(dissimilarity, 0.0)
    tree = linkage(squareform(dissimilarity, checks=False), method="average")
    cut = fcluster(tree, t=int(n_groups), criterion="maxclust")
    groups: dict[int, list[int]] = {}
    for j, g in enumerate(cut):
        groups.setdefault(int(g), []).append(j)
    return sorted(groups.values(), key=lambda g: g[0])


def resolve_attribute_groups(spec: str | Sequence[Sequence[str]], columns: Sequence[str],
                             X: ArrayLike, *, n_groups: int | None = None
                             ) -> tuple[tuple[str, ...], ...]:
    """The attribute groups a release uses, as tuples of column names.

    Parameters
    ----------
    spec : {"individual", "correlation"} or sequence of sequences of str
        ``"individual"``: one group per column; ``"correlation"``: :func:`correlation_groups`
        with ``n_groups`` groups (default: about three columns per group); or the groups
        themselves, which must cover every column exactly once.
    columns : sequence of str
        The quasi-identifiers, in the order of the columns of ``X``.
    X : array-like of shape (n_samples, len(columns))
        Their (scaled) values, for the correlations.
    n_groups : int, default=None
        Number of groups for ``"correlation"``.
    """
    names = [str(c) for c in columns]
    if isinstance(spec, str):
        if spec not in GROUPINGS:
            raise unknown_option("attribute grouping", spec,
                                 [*GROUPINGS, "a list of groups of columns"])
        if n_groups is not None and spec != "correlation":
            raise ValueError("n_attribute_groups applies to attribute_groups='correlation' "
                             "only.")
        if spec == "individual":
            return tuple((c,) for c in names)
        count = n_groups if n_groups is not None else max(1, -(-len(names) // 3))
        return tuple(tuple(names[j] for j in g) for g in correlation_groups(X, count))
    if n_groups is not None:
        raise ValueError("n_attribute_groups applies to attribute_groups='correlation' only.")
    groups = [tuple(str(c) for c in ([g] if isinstance(g, str) else g)) for g in spec]
    _check_listed_groups(spec, groups, names)
    return tuple(groups)


def _check_listed_groups(spec: Sequence[Sequence[str]], groups: list[tuple[str, ...]],
                         names: list[str]) -> None:
    """Every quasi-identifier in exactly one group; one ValueError lists every problem."""
    listed = [c for g in groups for c in g]
    unknown = sorted(set(listed) - set(names))
    twice = sorted({c for c in listed if listed.count(c) > 1})
    missing = [c for c in names if c not in listed]
    problems = []
    if any(not g for g in groups) or not groups:
        problems.append("a group is empty")
    if unknown:
        problems.append(f"{', '.join(map(repr, unknown))} are not quasi-identifiers")
    if twice:
        problems.append(f"{', '.join(map(repr, twice))} appear in more than one group")
    if missing:
        problems.append(f"{', '.join(map(repr, missing))} are in no group")
    if problems:
        raise ValueError(f"Invalid attribute groups {spec!r}: {'; '.join(problems)}. Every "
                         f"quasi-identifier ({', '.join(map(repr, names))}) must be in "
                         "exactly one group.")

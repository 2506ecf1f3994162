"""Disclosure-risk measures: distance-based record linkage (DLD), the intersection attack on
attribute-group microaggregation (seed 001), the homogeneity check and the query-answering
measure of seed 002."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial import cKDTree

from .._base.validation import check_matrix
from ..hierarchy import HierarchyTables

__all__ = ["dld_risk", "homogeneity", "intersection_attack", "query_answering"]


def dld_risk(original: ArrayLike, masked: ArrayLike, labels: ArrayLike | None = None, *,
             attributes: Sequence[int] | None = None, sample: int | None = None,
             random_state: int = 0) -> float:
    """Distance-based record linkage risk: the share of correctly linked records (DLD, Eq. 4
    of seed 000).

    An intruder links each masked record to its nearest original record (squared Euclidean
    distance on the arrays as given: scale both with the ORIGINAL's scaling first). A masked
    record counts 1 if its own original is the unique nearest, ``1/t`` if it is one of ``t``
    originals at exactly the nearest distance, 0 otherwise; the result is the mean over
    records, in [0, 1]. Masked records that are identical (a microaggregated group) are
    linked once: with a k-d tree, O(n log n); when the records share vectors (groups of two
    or more) a scan over the group centroids first settles every group whose nearest own
    record is alone near it, and only the rest go to the tree (same scores, about three times
    less CPU on 10,000 groups of 5 in 10 columns).

    The linkage runs on the same attributes on both sides: the masked columns against the
    original data restricted to those columns. ``attributes`` restricts both further, to the
    columns an intruder actually knows (the variant used when the external file holds only
    some of the quasi-identifiers).

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_columns)
        Row ``i`` of ``masked`` is the release of row ``i`` of ``original``.
    labels : ignored
        Accepted for the common metric signature.
    attributes : sequence of int, default=None
        Column positions known to the intruder; ``None`` means all columns.
    sample : int, default=None
        Score only this many records drawn at random (``random_state``), still linking
        against every original: an unbiased estimate of the same mean for large files
        (standard error at most ``0.5 / sqrt(sample)``). ``None``: every record.
    random_state : int, default=0
        Seed of the sample.

    References
    ----------
    Domingo-Ferrer, J., Mateo-Sanz, J. M., Torra, V. "Comparing SDC methods for microdata on
    the basis of information loss and disclosure risk." ETK-NTTS (2001); the DLD of seed 000.

    Examples
    --------
    >>> dld_risk([[0.0], [1.0], [10.0]], [[0.0], [1.0], [10.0]])
    1.0
    >>> dld_risk([[0.0], [1.0], [10.0], [11.0]], [[0.5], [0.5], [10.5], [10.5]])
    0.5
    >>> dld_risk([[0.0, 5.0], [1.0, 5.0]], [[0.1, 5.0], [0.9, 5.0]], attributes=[1])
    0.5
    """
    A = check_matrix(original, caller="dld_risk", name="original")
    B = check_matrix(masked, caller="dld_risk", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    if attributes is not None:
        cols = np.asarray(attributes)
        if cols.ndim != 1 or cols.size == 0 or not np.issubdtype(cols.dtype, np.integer) \
                or cols.min() < 0 or cols.max() >= A.shape[1] or np.unique(cols).size != cols.size:
            raise ValueError(
                f"The 'attributes' parameter of dld_risk must list distinct column positions "
                f"in 0..{A.shape[1] - 1}. Got {list(attributes)!r} instead."
            )
        A = np.ascontiguousarray(A[:, cols])
        B = np.ascontiguousarray(B[:, cols])
    if A.shape[0] == 1:
        return 1.0
    if sample is not None and sample < A.shape[0]:
        if isinstance(sample, bool) or not isinstance(sample, (int, np.integer)) or sample < 1:
            raise ValueError(f"The 'sample' parameter of dld_risk must be an int >= 1. "
                             f"Got {sample!r}.")
        scored = np.sort(np.random.default_rng(random_state).choice(
            A.shape[0], size=int(sample), replace=False))
        return _sampled_dld(A, B, scored)
    return _full_dld(A, B)


SCAN_WORK = 4e9
"""Largest ``G * G * p`` (``G`` distinct published vectors in ``p`` columns) for which
:func:`dld_risk` proves the common case with the centroid scan of
:func:`~microagg.metrics._dld_kernel.crowded_vectors` instead of the k-d tree: 10,000 groups
in 10 columns are 1e9 (about 0.3 s on one core, against about 1 s for the tree)."""


def _full_dld(A: np.ndarray, B: np.ndarray, *, scan: bool | None = None) -> float:
    """DLD of every record. Records published as the same vector are linked once. With
    ``scan`` (default: when records share vectors, two per vector or more, and the scan
    costs at most :data:`SCAN_WORK`) the vectors whose nearest own record is alone within
    reach score it 1 at once and only the others go to the k-d tree; the tree alone gives
    the same scores (both score exactly the rule of :func:`dld_risk`)."""
    rows = np.ascontiguousarray(B).view(np.dtype((np.void, B.dtype.itemsize * B.shape[1])))
    _, first, inverse = np.unique(rows.ravel(), return_index=True, return_inverse=True)
    unique, inverse = B[first], inverse.ravel()
    score = np.zeros(A.shape[0])
    if scan is None:
        scan = 2 * unique.shape[0] <= A.shape[0] \
            and float(unique.shape[0]) ** 2 * A.shape[1] <= SCAN_WORK
    tree_rows = _scan_clear(A, unique, inverse, score) if scan else np.arange(unique.shape[0])
    if tree_rows.size:
        _tree_scores(A, unique, inverse, tree_rows, score)
    return float(score.mean())


def _scan_clear(A: np.ndarray, unique: np.ndarray, inverse: np.ndarray,
                score: np.ndarray) -> np.ndarray:
    """Score the vectors whose nearest own record is the only original within reach of it
    (1 for that record) and return the others, left to :func:`_tree_scores`.

    The reach, the own nearest distance times ``1 + 2e-9`` plus ``2e-12``, is beyond the
    tie radius the tree uses (``1 + 1e-9``, ``1e-12``) by far more than any rounding of
    the distances: every other original is then farther than the tie radius, which is the
    tree's "one nearest original" case. Records whose squared distance to their vector
    overflows leave every vector to the tree."""
    import numba

    from ._dld_kernel import crowded_vectors

    with np.errstate(over="ignore"):
        own = ((A - unique[inverse]) ** 2).sum(axis=1)
    if not np.isfinite(own).all():  # distances beyond the float range: the tree decides
        return np.arange(unique.shape[0])
    members = np.lexsort((own, inverse))  # by vector, nearest own record first
    starts = np.zeros(unique.shape[0] + 1, dtype=np.intp)
    np.cumsum(np.bincount(inverse, minlength=unique.shape[0]), out=starts[1:])
    nearest = members[starts[:-1]]
    reach = np.sqrt(own[nearest]) * (1.0 + 2e-9) + 2e-12
    crowded = crowded_vectors(np.ascontiguousarray(A[members]), np.ascontiguousarray(unique),
                              starts, reach, np.sqrt(own[members]), numba.get_num_threads())
    score[nearest[~crowded]] = 1.0
    return np.flatnonzero(crowded)


def _tree_scores(A: np.ndarray, unique: np.ndarray, inverse: np.ndarray, rows: np.ndarray,
                 score: np.ndarray) -> None:
    """Score the records published as the vectors ``unique[rows]``: a k-d tree finds each
    vector's two nearest originals; a vector with one nearest scores it 1 if it is its own,
    and a vector with ties scores ``1/t`` each of its own among the ``t`` exactly nearest."""
    tree = cKDTree(A)
    queries = unique[rows]
    dist, index = tree.query(queries, k=2, workers=-1)
    # every original within the nearest distance (plus rounding room), then exact ties only
    radius = dist[:, 0] * (1.0 + 1e-9) + 1e-12
    clear = dist[:, 1] > radius  # one nearest original: the common case, vectorized
    first = index[clear, 0]
    own = inverse[first] == rows[clear]
    score[first[own]] = 1.0
    tied_rows = np.flatnonzero(~clear)
    candidates = tree.query_ball_point(queries[tied_rows], r=radius[tied_rows]) \
        if tied_rows.size else []
    for u, cand in zip(tied_rows, candidates, strict=True):
        cand = np.asarray(cand, dtype=np.intp)
        d = ((A[cand] - queries[u]) ** 2).sum(axis=1)
        tied = cand[d == d.min()]
        # only the originals released as this very vector score; the others keep the score
        # their own masked vector gives them
        own_tied = tied[inverse[tied] == rows[u]]
        score[own_tied] = 1.0 / tied.size


def _sampled_dld(A: np.ndarray, B: np.ndarray, scored: np.ndarray) -> float:
    """DLD scores of the records ``scored`` only: record i scores 1/t when it is one of the
    t originals at exactly the nearest distance from its own masked vector."""
    tree = cKDTree(A)
    queries = B[scored]
    dist, index = tree.query(queries, k=2, workers=-1)
    radius = dist[:, 0] * (1.0 + 1e-9) + 1e-12
    clear = dist[:, 1] > radius
    total = float(np.sum(index[clear, 0] == scored[clear]))
    tied_rows = np.flatnonzero(~clear)
    if tied_rows.size:
        for i, cand in zip(tied_rows, tree.query_ball_point(queries[tied_rows],
                                                            r=radius[tied_rows]), strict=True):
            cand = np.asarray(cand, dtype=np.intp)
            d = ((A[cand] - queries[i]) ** 2).sum(axis=1)
            tied = cand[d == d.min()]
            if np.any(tied == scored[i]):
                total += 1.0 / tied.size
    return total / scored.size


def intersection_attack(original: ArrayLike, masked: ArrayLike,
                        attribute_groups: Sequence[Sequence[int]] | None = None,
                        *, known: Sequence[int] | None = None) -> dict[str, float]:
    """The intersection attack on microaggregation done by groups of attributes (seed 001,
    section 2.3): link a record attribute group by attribute group, then intersect.

    For each attribute group the intruder takes the published value (vector) of that group
    nearest to the record's original values and the set of published records carrying it;
    the candidates are the intersection of these sets over the groups. With all attributes
    in one group (plain multivariate microaggregation) this is nearest-centroid linkage and
    the candidate set is a whole group of at least k; with one group per attribute (the
    per-variable microaggregation of seed 001, Table 3) the sets intersect to few records,
    often to one.

    Parameters
    ----------
    original : array-like of shape (n_samples, n_columns)
        What the intruder knows of every respondent (scaled like ``masked``).
    masked : array-like of shape (n_samples, n_columns)
        The release; row ``i`` is the release of row ``i`` of ``original``.
    attribute_groups : sequence of sequences of int, default=None
        Column positions microaggregated together; ``None`` means one group per column
        (the strongest form of the attack when the groups are not published).
    known : sequence of int, default=None
        Columns the intruder knows; groups are matched on their known columns only and
        groups with none are skipped. ``None`` means all.

    Returns
    -------
    dict
        ``reidentified``: share of records whose candidate set is exactly the record itself;
        ``expected_reidentification``: mean over records of ``1/|candidates|`` when the
        record is among its candidates, else 0 (the success rate of an intruder who picks
        a candidate at random); ``contains_target``: share of records among their own
        candidates; ``mean_candidates``: mean size of the candidate sets (0 = empty
        intersection, the attack fails).

    Notes
    -----
    An exact tie between two published values (a record halfway between two groups) is
    broken towards one of them, as a nearest-neighbour search does.

    References
    ----------
    Torra, V. and Miyamoto, S. "Evaluating fuzzy clustering algorithms for microdata
    protection." PSD 2004, LNCS 3050; Nin, J., Herranz, J., Torra, V. "On the disclosure
    risk of multivariate microaggregation." Data Knowl. Eng. 67 (2008). Seed 001, section 2.3.

    Examples
    --------
    Two columns microaggregated one by one: the first record is alone in its (low, high)
    combination and is re-identified.

    >>> orig = [[0.0, 9.0], [1.0, 0.0], [8.0, 1.0], [9.0, 8.0]]
    >>> mask = [[0.5, 8.5], [0.5, 0.5], [8.5, 0.5], [8.5, 8.5]]
    >>> intersection_attack(orig, mask)["reidentified"]
    1.0
    >>> intersection_attack(orig, mask)["mean_candidates"]
    1.0
    """
    A = check_matrix(original, caller="intersection_attack", name="original")
    B = check_matrix(masked, caller="intersection_attack", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    p = A.shape[1]
    groups = [[j] for j in range(p)] if attribute_groups is None else \
        [list(g) for g in attribute_groups]
    seen = [j for g in groups for j in g]
    if not groups or any(not g for g in groups) or len(seen) != len(set(seen)) \
            or any(not isinstance(j, (int, np.integer)) or not 0 <= j < p for j in seen):
        raise ValueError(f"The 'attribute_groups' parameter must list non-empty, disjoint "
                         f"groups of column positions in 0..{p - 1}. Got {attribute_groups!r}.")
    knows = set(range(p)) if known is None else {int(j) for j in known}
    if not knows or not knows <= set(range(p)):
        raise ValueError(f"The 'known' parameter must list column positions in 0..{p - 1}. "
                         f"Got {known!r}.")
    published_codes = []
    query_codes = []
    for g in groups:
        cols = [j for j in g if j in knows]
        if not cols:
            continue
        unique, inverse = np.unique(B[:, cols], axis=0, return_inverse=True)
        _, nearest = cKDTree(unique).query(A[:, cols], k=1)
        published_codes.append(inverse.ravel())
        query_codes.append(np.asarray(nearest, dtype=np.intp))
    pub = np.column_stack(published_codes)
    qry = np.column_stack(query_codes)
    keys, counts = np.unique(pub, axis=0, return_counts=True)
    # size of each record's candidate set: how many published records carry its query key
    both = np.vstack([keys, qry])
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    size_of_code = np.zeros(inverse.max() + 1, dtype=np.int64)
    size_of_code[inverse[:keys.shape[0]]] = counts
    size = size_of_code[inverse[keys.shape[0]:]]
    hit = np.all(pub == qry, axis=1)
    return {
        "reidentified": float(np.mean(hit & (size == 1))),
        "expected_reidentification": float(np.mean(np.where(hit, 1.0 / np.maximum(size, 1),
                                                            0.0))),
        "contains_target": float(np.mean(hit)),
        "mean_candidates": float(np.mean(size)),
    }


def homogeneity(classes: ArrayLike, sensitive: ArrayLike) -> dict[str, float | int]:
    """Homogeneity attack check: equivalence classes whose records all share one sensitive
    value (an intruder who places someone in the class learns the value).

    Returns ``{"homogeneous_classes", "classes", "homogeneous_records",
    "homogeneous_share"}`` (the records in such classes, and their share of all records).
    Missing sensitive values are not a value: a class is homogeneous when its known values
    are all one value (a class with no known value discloses none).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : array-like of shape (n_samples,)
        Sensitive value of each record (``None`` or ``NaN``: missing).

    Examples
    --------
    >>> homogeneity([0, 0, 1, 1, 1], ["a", "a", "a", "b", "b"])
    {'homogeneous_classes': 1, 'classes': 2, 'homogeneous_records': 2, 'homogeneous_share': 0.4}
    >>> homogeneity([0, 0, 1, 1], ["a", None, None, None])["homogeneous_classes"]
    1
    """
    import pandas as pd  # pd.isna: None, NaN and NaT alike; loaded when used

    cls = np.unique(np.asarray(classes).ravel(), return_inverse=True)[1].ravel()
    raw = np.asarray(sensitive, dtype=object).ravel()
    known = ~pd.isna(raw)
    values = np.unique(raw.astype(str), return_inverse=True)[1].ravel()
    if cls.shape != values.shape:
        raise ValueError(f"classes has {cls.size} entries but sensitive has {values.size}.")
    n_classes = int(cls.max()) + 1 if cls.size else 0
    lo = np.full(n_classes, np.iinfo(np.int64).max)
    hi = np.full(n_classes, -1)
    np.minimum.at(lo, cls[known], values[known])
    np.maximum.at(hi, cls[known], values[known])
    homogeneous = lo == hi
    records = int(homogeneous[cls].sum())
    return {"homogeneous_classes": int(homogeneous.sum()), "classes": n_classes,
            "homogeneous_records": records,
            "homogeneous_share": records / cls.size if cls.size else 0.0}


def query_answering(original_numeric: ArrayLike, low: ArrayLike, high: ArrayLike,  # noqa: PLR0913 - public metric: six input arrays, keyword-only options
                    original_codes: ArrayLike, nodes: ArrayLike,
                    tables: Sequence[HierarchyTables], *, n_queries: int = 1000,
                    max_attributes: int = 3, k: int | None = None,
                    random_state: int = 0) -> dict[str, float | int]:
    """Query-answering privacy measure (seed 002, section E): run the same random queries on
    the original and the anonymized table and compare how many records each returns.

    A query picks 1..``max_attributes`` quasi-identifiers at random; a numeric one gets a
    range between two values drawn from the column, a categorical one an equality with a
    value drawn from the column. An original record matches when its values satisfy every
    predicate; an anonymized record matches when it *may* (its interval meets the range,
    its generalized node covers the value), which is what an intruder can count. More
    anonymized matches than original ones means the query isolates people less well.

    The queries depend only on ``random_state`` and the original data, so two releases of
    the same table are compared on the same queries.

    Parameters
    ----------
    original_numeric : array-like of shape (n_samples, r)
        The original numeric quasi-identifiers.
    low, high : array-like of shape (n_samples, r)
        The published interval of each record in each numeric quasi-identifier.
    original_codes : array-like of shape (n_samples, s)
        The original leaf code of each record in each categorical quasi-identifier.
    nodes : array-like of shape (n_samples, s)
        The published (generalized) hierarchy node of each record.
    tables : sequence of HierarchyTables
        The ``s`` hierarchies.
    n_queries : int, default=1000
        How many random queries to run.
    max_attributes : int, default=3
        The most quasi-identifiers one query constrains.
    k : int or None, default=None
        The release's k: also count the queries whose original answer is below k.
    random_state : int, default=0
        The seed of the queries.

    Returns
    -------
    dict
        ``queries``; ``mean_original`` and ``mean_anonymized`` answer sizes;
        ``share_more`` / ``share_equal`` / ``share_fewer`` (anonymized vs original);
        with ``k``: ``small_queries`` (original answer 1..k-1, the ones that single people
        out) and ``small_still_small`` (of those, the share whose anonymized answer is also
        below k).
    """
    num = np.asarray(original_numeric, dtype=np.float64)
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    cod = np.asarray(original_codes, dtype=np.intp)
    nod = np.asarray(nodes, dtype=np.intp)
    n = max(num.shape[0], cod.shape[0])
    num = num.reshape(n, -1)
    lo, hi = lo.reshape(n, -1), hi.reshape(n, -1)
    cod, nod = cod.reshape(n, -1), nod.reshape(n, -1)
    r, s = num.shape[1], cod.shape[1]
    rng = np.random.default_rng(random_state)
    # draw every query first (attributes, then one range / value per chosen attribute)
    chosen = np.zeros((n_queries, r + s), dtype=bool)
    for q in range(n_queries):
        size = int(rng.integers(1, min(max_attributes, r + s) + 1))
        chosen[q, rng.choice(r + s, size=size, replace=False)] = True
    pick = rng.integers(n, size=(n_queries, r + s, 2))
    orig = np.empty(n_queries, dtype=np.int64)
    anon = np.empty(n_queries, dtype=np.int64)
    block = max(1, min(n_queries, 4_000_000 // max(n, 1)))  # bounded memory: block x n
    for start in range(0, n_queries, block):
        qs = np.arange(start, min(n_queries, start + block))
        o = np.ones((qs.size, n), dtype=bool)
        a = np.ones((qs.size, n), dtype=bool)
        for attr in range(r + s):
            use = chosen[qs, attr]
            if not use.any():
                continue
            sel = qs[use]
            if attr < r:
                x = num[pick[sel, attr, 0], attr]
                y = num[pick[sel, attr, 1], attr]
                x, y = np.minimum(x, y)[:, None], np.maximum(x, y)[:, None]
                o[use] &= (num[None, :, attr] >= x) & (num[None, :, attr] <= y)
                a[use] &= (hi[None, :, attr] >= x) & (lo[None, :, attr] <= y)
            else:
                j = attr - r
                t = tables[j]
                leaf = cod[pick[sel, attr, 0], j][:, None]
                o[use] &= cod[None, :, j] == leaf
                level = t.node_level[nod[:, j]][None, :]
                a[use] &= t.ancestor[level, leaf] == nod[None, :, j]
        orig[qs] = o.sum(axis=1)
        anon[qs] = a.sum(axis=1)
    out: dict[str, float | int] = {
        "queries": int(n_queries),
        "mean_original": float(orig.mean()),
        "mean_anonymized": float(anon.mean()),
        "share_more": float((anon > orig).mean()),
        "share_equal": float((anon == orig).mean()),
        "share_fewer": float((anon < orig).mean()),
    }
    if k is not None:
        small = (orig >= 1) & (orig < k)
        out["small_queries"] = int(small.sum())
        out["small_still_small"] = float((anon[small] < k).mean()) if small.any() else 0.0
    return out

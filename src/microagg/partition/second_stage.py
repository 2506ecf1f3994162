"""Second stages that improve a partition: decomposition of groups (TFRP-2, DBA-2, MDAV-2)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["decompose_groups", "split_large_groups"]


def decompose_groups(X: NDArray[np.float64], labels: NDArray[np.intp], *, reverse: bool,
                     max_size: int | None = None) -> NDArray[np.intp]:
    """Dissolve every group whose records are better off in other groups.

    Groups are examined once each, in creation order (``reverse=False``, TFRP-2) or in
    reverse creation order (``reverse=True``, DBA-2). For a group G, each member tentatively
    moves to the remaining group with the nearest centroid (centroids as they stand before
    the test; lowest label on ties) among those smaller than ``max_size``; if the total SSE
    of G and the receiving groups decreases, G is dissolved. Receiving groups only grow, so
    every group keeps at least k records.

    Group sums and sums of squares are kept, so a test costs O(|G| * g * p) for g groups.
    Returns consecutive labels (dissolved groups removed, order kept).
    """
    n_groups = int(labels.max()) + 1
    size = np.bincount(labels, minlength=n_groups).astype(np.float64)
    sums = np.zeros((n_groups, X.shape[1]))
    np.add.at(sums, labels, X)
    squares = np.bincount(labels, weights=(X * X).sum(axis=1), minlength=n_groups).astype(np.float64)
    alive = np.ones(n_groups, dtype=bool)
    out = labels.copy()
    norms = (X * X).sum(axis=1)

    def sse_of(s: NDArray[np.float64], q: NDArray[np.float64], c: NDArray[np.float64]
               ) -> NDArray[np.float64]:
        return q - (s * s).sum(axis=-1) / c

    for g in (range(n_groups - 1, -1, -1) if reverse else range(n_groups)):
        alive[g] = False
        if not alive.any():
            alive[g] = True
            break
        rows = np.flatnonzero(out == g)
        cents = sums / size[:, None]
        d = ((X[rows][:, None, :] - cents[None, :, :]) ** 2).sum(axis=2)
        d[:, ~alive] = np.inf
        add_count = np.zeros(n_groups)
        targets = np.empty(rows.size, dtype=np.intp)
        for t in range(rows.size):
            allowed = d[t] if max_size is None else np.where(size + add_count < max_size,
                                                                 d[t], np.inf)
            targets[t] = int(np.argmin(allowed))
            if not np.isfinite(allowed[targets[t]]):
                targets = targets[:0]
                break
            add_count[targets[t]] += 1
        if targets.size != rows.size:  # no room anywhere: keep the group
            alive[g] = True
            continue
        touched = np.unique(targets)
        add_sum = np.zeros((touched.size, X.shape[1]))
        add_sq = np.zeros(touched.size)
        for j, h in enumerate(touched):
            pick = rows[targets == h]
            add_sum[j] = X[pick].sum(axis=0)
            add_sq[j] = norms[pick].sum()
        before = float(sse_of(sums[g], squares[g], size[g]))
        before += float(sse_of(sums[touched], squares[touched], size[touched]).sum())
        after = float(sse_of(sums[touched] + add_sum, squares[touched] + add_sq,
                             size[touched] + add_count[touched]).sum())
        if after < before:
            sums[touched] += add_sum
            squares[touched] += add_sq
            size[touched] += add_count[touched]
            out[rows] = targets
        else:
            alive[g] = True
    return np.unique(out, return_inverse=True)[1].astype(np.intp)


def split_large_groups(X: NDArray[np.float64], labels: NDArray[np.intp], k: int
                       ) -> NDArray[np.intp]:
    """Re-partition every group of more than 2k-1 records with MDAV-1 (the end of DBA-2)."""
    from .mdav import mdav1

    out = labels.copy()
    next_label = int(labels.max()) + 1
    for g in np.unique(labels):
        rows = np.flatnonzero(labels == g)
        if rows.size > 2 * k - 1:
            sub = mdav1(X[rows], k)
            for s in range(1, int(sub.max()) + 1):
                out[rows[sub == s]] = next_label
                next_label += 1
    return np.unique(out, return_inverse=True)[1].astype(np.intp)

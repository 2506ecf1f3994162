"""Input checks shared by every public function: one message format for all."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .constraints import check_int

__all__ = [
    "RandomState",
    "check_choice",
    "check_k",
    "check_labels",
    "check_magnitude",
    "check_matrix",
    "check_nonnegative",
    "check_random_state",
    "resolve_seed",
]

RandomState = None | int | np.random.Generator


def check_matrix(X: ArrayLike, *, caller: str, name: str = "X") -> NDArray[np.float64]:
    """Return ``X`` as a finite, C-contiguous float64 array of shape (n_samples, n_features).

    Raises ``TypeError`` for non-numeric data and ``ValueError`` for the wrong shape, an empty
    matrix or non-finite values, naming the offending columns (by position) and counts.
    """
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a numeric array. "
            f"Got dtype {arr.dtype} instead."
        )
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be 2-dimensional (n_samples, n_features). "
            f"Got an array of shape {arr.shape} instead."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"The {name!r} parameter of {caller} is empty: shape {arr.shape}; "
            "at least one row and one column are needed."
        )
    out = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(out)
    if not finite.all():
        bad = (~finite).sum(axis=0)
        where = ", ".join(f"column {j}: {int(c)}" for j, c in enumerate(bad) if c)
        raise ValueError(
            f"The {name!r} parameter of {caller} contains NaN or infinite values ({where}). "
            "Impute or drop them first; microagg never imputes silently."
        )
    return out


def check_magnitude(A: NDArray[np.float64], *, caller: str, name: str = "X") -> None:
    """Refuse values whose squared differences overflow (beyond about 3.3e150 in magnitude):
    distances between such records are infinite. Scaled data never comes near.

    Examples
    --------
    >>> check_magnitude(np.array([[1.0], [1e200]]), caller="fit_block_tree")
    Traceback (most recent call last):
    ...
    ValueError: The 'X' parameter of fit_block_tree holds 1e+200 in column 0, beyond ...
    """
    from .scaling import SAFE_MAGNITUDE

    peak = np.abs(A).max(axis=0) if A.size else np.zeros(A.shape[1])
    too_large = np.flatnonzero(peak > SAFE_MAGNITUDE)
    if too_large.size:
        where = ", ".join(f"{peak[j]:g} in column {j}" for j in too_large)
        raise ValueError(
            f"The {name!r} parameter of {caller} holds {where}, beyond {SAFE_MAGNITUDE:.3g} "
            "in magnitude: squared distances between such records overflow the float range "
            "(1.8e308). Pass scaled quasi-identifiers (anonymize scales them, safely for any "
            "finite value)."
        )


def check_k(k: Any, *, n_samples: int, caller: str) -> int:
    """Return ``k`` as an int after checking ``2 <= k <= n_samples``."""
    k = check_int(k, parameter="k", caller=caller, low=2)
    if n_samples < k:
        raise ValueError(
            f"n_samples={n_samples} should be >= k={k} in {caller}: "
            "a group of k records cannot be formed."
        )
    return k


def check_random_state(random_state: RandomState) -> np.random.Generator:
    """Turn ``None``, an int seed or a ``Generator`` into a ``numpy.random.Generator``."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        if random_state is not None and (isinstance(random_state, bool) or int(random_state) < 0):
            raise ValueError(
                f"The 'random_state' parameter must be None, an int >= 0 or a "
                f"numpy.random.Generator. Got {random_state!r} instead."
            )
        return np.random.default_rng(None if random_state is None else int(random_state))
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError(
        "The 'random_state' parameter must be None, an int >= 0 or a numpy.random.Generator. "
        f"Got {random_state!r} of type {type(random_state).__name__} instead."
    )


def check_labels(labels: ArrayLike, *, n_samples: int, k: int | None = None) -> NDArray[np.intp]:
    """Check a partition: one label per row, consecutive from 0, every group >= ``k``."""
    lab = np.asarray(labels)
    if lab.shape != (n_samples,):
        raise ValueError(f"labels must have shape ({n_samples},). Got {lab.shape} instead.")
    if lab.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers. Got dtype {lab.dtype} instead.")
    lab = lab.astype(np.intp, copy=False)
    if n_samples == 0:
        return lab
    counts = np.bincount(lab) if lab.min() >= 0 else np.array([0])
    if lab.min() < 0 or (counts == 0).any():
        raise ValueError("labels must be consecutive integers starting at 0.")
    if k is not None and counts.min() < k:
        small = int((counts < k).sum())
        raise ValueError(
            f"{small} group(s) have fewer than k={k} records (smallest has {int(counts.min())})."
        )
    return lab


def check_choice(value: Any, allowed: tuple[Any, ...], *, name: str, caller: str) -> Any:
    """Return ``value`` if it is one of ``allowed``; else a ValueError listing them."""
    if isinstance(value, bool) or value not in allowed:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be one of "
            f"{', '.join(map(str, allowed))}. Got {value!r} instead."
        )
    return value


def check_nonnegative(value: Any, *, name: str, caller: str) -> float:
    """Return ``value`` as a finite float ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a float >= 0. "
            f"Got {value!r} of type {type(value).__name__} instead."
        )
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"The {name!r} parameter of {caller} must be a float >= 0. Got {v} instead.")
    return v


def resolve_seed(random_state: RandomState) -> tuple[int, np.random.Generator]:
    """The one seed of a public call: the int to record and the Generator made from it.

    ``None`` draws a fresh seed from the OS, a Generator gives one draw, an int is used as is;
    recording it makes every release reproducible.
    """
    if isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(0, 2**63 - 1))
    else:
        check_random_state(random_state)  # same validation and messages
        if random_state is None:
            seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
        else:
            seed = int(random_state)
    return seed, np.random.default_rng(seed)

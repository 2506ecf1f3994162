"""Utility measured by learning: the propensity-score mean squared error (pMSE) between the
original and the release (its logistic model fitted here, in numpy), and the accuracy of a
classifier trained on the release and tested on held-back original records (scikit-learn,
loaded on first use).

Both read the two tables through one encoding (:func:`encode_pair`): numbers standardised
on the original, a missing number at 0 with an indicator, a category one-hot over the
values the two tables hold (the :data:`MAX_LEVELS` most frequent in the original, the rest
as one "other").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._base.validation import RandomState, check_random_state

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["CLASSIFIERS", "MAX_LEVELS", "Accuracy", "Propensity", "classification_accuracy",
           "encode_pair", "logistic_fit", "pmse"]

MAX_LEVELS = 50
"""The most one-hot columns a categorical column adds (the rest of its values as one)."""


def _numeric(column: pd.Series) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column)
                and not pd.api.types.is_bool_dtype(column))


def encode_pair(original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both tables' ``columns`` as float matrices with the same columns (module docstring).

    A column missing from the release (dropped) enters as missing there.
    """
    import pandas as pd

    parts_o: list[NDArray[np.float64]] = []
    parts_r: list[NDArray[np.float64]] = []
    for name in columns:
        col_o = original[name]
        col_r = released[name] if name in released.columns else pd.Series(
            np.nan, index=released.index)
        if _numeric(col_o):
            xo = pd.to_numeric(col_o, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            xr = pd.to_numeric(col_r, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            centre = np.nanmean(xo) if np.isfinite(xo).any() else 0.0
            spread = np.nanstd(xo) if np.isfinite(xo).any() else 1.0
            spread = spread if spread > 0 else 1.0
            for x, parts in ((xo, parts_o), (xr, parts_r)):
                seen = np.isfinite(x)
                parts.append(np.where(seen, (x - centre) / spread, 0.0)[:, None])
                parts.append((~seen).astype(np.float64)[:, None])
            continue
        to, tr = col_o.astype(str).to_numpy(), col_r.astype(str).to_numpy()
        top = np.asarray(sorted(col_o.astype(str).value_counts().index[:MAX_LEVELS]),
                         dtype=object)
        for text, parts in ((to, parts_o), (tr, parts_r)):  # the rest: "other"
            onehot = text[:, None] == top[None, :]
            parts.append(np.column_stack([onehot, ~onehot.any(axis=1)]).astype(np.float64))
    keep = [np.any(np.concatenate([a, b]) != np.concatenate([a, b])[:1], axis=0)
            for a, b in zip(parts_o, parts_r, strict=True)]  # drop constant columns
    return (np.column_stack([a[:, k] for a, k in zip(parts_o, keep, strict=True)]),
            np.column_stack([b[:, k] for b, k in zip(parts_r, keep, strict=True)]))


@dataclass(frozen=True)
class Propensity:
    """pMSE = mean (p - c)^2 over the stacked rows; ``null`` its expectation when the two
    tables come from one distribution, ``(k - 1)(1 - c)^2 c / N``; ``ratio`` = pMSE / null
    (about 1 for a release the model cannot tell from the original); ``n_rows`` each table's
    rows the model read (a sample of large files)."""

    pmse: float
    null: float
    ratio: float
    parameters: int
    share_released: float
    n_rows: int

    def as_dict(self) -> dict[str, Any]:
        """Python floats and ints, for a release's JSON."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def logistic_fit(X: NDArray[np.float64], y: NDArray[np.float64], *, ridge: float = 1e-6,
                 max_iter: int = 100) -> NDArray[np.float64]:
    """The fitted probabilities of a main-effects logistic regression of ``y`` (0 / 1) on
    ``X`` with an intercept, by Newton-Raphson (iteratively reweighted least squares), a
    ``ridge`` of 1e-6 on the slopes keeping a separating column finite.

    Validation is assumed. numpy only: a release's default pMSE need not load scikit-learn.
    """
    A = np.column_stack([np.ones(len(X)), X])
    beta = np.zeros(A.shape[1])
    penalty = np.full(A.shape[1], ridge)
    penalty[0] = 0.0
    p = _sigmoid(np.zeros(len(A)))
    with one_blas_thread():
        for _ in range(max_iter):
            gradient = A.T @ (y - p) - penalty * beta
            hessian = (A * (p * (1.0 - p))[:, None]).T @ A + np.diag(penalty + 1e-12)
            beta += np.linalg.lstsq(hessian, gradient, rcond=None)[0]
            before, p = p, _sigmoid(A @ beta)
            # one-hot columns with their "other" are collinear with the intercept: judged
            # converged on the probabilities, which that direction does not move
            if np.max(np.abs(p - before)) < 1e-8:
                break
    return p


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which BLAS runs on one thread (threadpoolctl, installed with
    scikit-learn; nothing without it): the products here are small, and BLAS threads
    spinning on a busy machine made them twenty times slower."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn requires it
        return nullcontext()
    return threadpool_limits(1, user_api="blas")


def _sigmoid(eta: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(eta, -30.0, 30.0))), dtype=np.float64)


def pmse(original: NDArray[np.float64], released: NDArray[np.float64]) -> Propensity:
    """The propensity-score mean squared error of a logistic model of "is a released row"
    on the stacked, encoded tables (main effects, :func:`logistic_fit`).

    References
    ----------
    Woo, Reiter, Oganian and Karr. "Global measures of data utility for microdata masked
    for disclosure limitation." Journal of Privacy and Confidentiality 1(1) (2009).
    Snoke, Raab, Nowok, Dibben and Slavkovic. "General and specific utility measures for
    synthetic data." JRSS A 181(3) (2018): the null expectation ``(k-1)(1-c)^2 c / N``.

    Examples
    --------
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> round(pmse(X, X).pmse, 12)
    0.0
    """
    stacked = np.concatenate([original, released])
    target = np.r_[np.zeros(len(original)), np.ones(len(released))]
    share = len(released) / len(stacked)
    p = logistic_fit(stacked, target)
    value = float(np.mean((p - share) ** 2))
    k = stacked.shape[1] + 1
    null = (k - 1) * (1 - share) ** 2 * share / len(stacked)
    return Propensity(value, float(null), float(value / null) if null > 0 else float("nan"),
                      k, float(share), len(original))


def _forest(seed: int) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=50, min_samples_leaf=3, random_state=seed,
                                  n_jobs=1)


def _logistic(seed: int) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000, random_state=seed)


CLASSIFIERS: dict[str, Callable[[int], Any]] = {"random_forest": _forest,
                                                 "logistic": _logistic}
"""The classifiers :func:`classification_accuracy` trains, by name: a seed -> an unfitted
scikit-learn estimator (a random forest of 50 trees, leaves of at least 3 records; an L2
logistic regression)."""


@dataclass(frozen=True)
class Accuracy:
    """Test accuracy on held-back original rows of the model trained on the release and of
    the same model trained on the original (same training rows), and the majority class's
    share of the test rows (what guessing the commonest class scores)."""

    target: str
    classifier: str
    released: float
    original: float
    majority: float
    n_train: int
    n_test: int

    def as_dict(self) -> dict[str, Any]:
        """Python floats, ints and strings, for a release's JSON."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def classification_accuracy(X_original: NDArray[np.float64], X_released: NDArray[np.float64],
                            y_original: NDArray[Any], y_released: NDArray[Any], *,
                            classifier: str = "random_forest", test_share: float = 0.3,
                            random_state: RandomState = None, target: str = "") -> Accuracy:
    """Train on the release's rows of a random training split, test on the original's
    held-back rows; the same model trained on the original's training rows beside it.

    Validation is assumed: row ``i`` of the four arrays is one record; ``y_released`` may
    hold ``None`` (a suppressed class: the row is left out of the release's training).

    References
    ----------
    The "classification utility" of ARX (Prasser et al. 2016, "Lightning: utility-driven
    anonymization of high-dimensional data", Trans. Data Privacy 9(2)).
    """
    rng = check_random_state(random_state)
    seed = int(rng.integers(2**31 - 1))
    n = len(y_original)
    order = rng.permutation(n)
    n_test = max(1, round(test_share * n))
    test, train = order[:n_test], order[n_test:]
    known = np.array([v is not None and v == v for v in y_released[train]], dtype=bool)
    scores = []
    for X, y, rows in ((X_released, y_released, train[known]), (X_original, y_original, train)):
        labels = y[rows].astype(str)
        if np.unique(labels).size < 2:
            scores.append(float(np.mean(y_original[test].astype(str) == labels[0]))
                          if labels.size else float("nan"))
            continue
        model = CLASSIFIERS[classifier](seed).fit(X[rows], labels)
        scores.append(float(np.mean(model.predict(X_original[test])
                                    == y_original[test].astype(str))))
    _, counts = np.unique(y_original[test].astype(str), return_counts=True)
    return Accuracy(target, classifier, scores[0], scores[1], float(counts.max() / n_test),
                    int(train.size), int(test.size))

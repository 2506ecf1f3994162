"""Documents in, TF-IDF vectors out: the text column checked, scikit-learn's
``TfidfVectorizer`` (L2-normalized rows, sparse CSR), never densified."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import SchemaError

__all__ = ["document_texts", "tfidf_vectors"]


def document_texts(documents: Any, text_column: str | None, *, caller: str) -> list[str]:
    """The documents as a list of str: a sequence of texts, or ``documents[text_column]``
    of a DataFrame. Missing and blank texts are refused, naming the rows."""
    import pandas as pd

    if isinstance(documents, pd.DataFrame):
        if text_column is None:
            raise ValueError(f"The 'text_column' parameter of {caller} is required when "
                             "documents is a DataFrame. Columns: "
                             f"{', '.join(map(repr, map(str, documents.columns)))}.")
        if text_column not in documents.columns:
            raise SchemaError(f"The text column {text_column!r} is not in the table. "
                              "Available columns: "
                              f"{', '.join(map(repr, map(str, documents.columns)))}.")
        values: Sequence[Any] = documents[text_column].tolist()
        where = f"column {text_column!r}"
    elif isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence | np.ndarray
                                                                  | pd.Series):
        raise TypeError(f"The 'documents' parameter of {caller} must be a sequence of str or "
                        f"a pandas DataFrame. Got {type(documents).__name__} instead.")
    else:
        if text_column is not None and not isinstance(documents, pd.Series):
            raise ValueError(f"The 'text_column' parameter of {caller} applies to a DataFrame "
                             f"only. Got text_column={text_column!r} with "
                             f"{type(documents).__name__} documents.")
        values = list(documents)
        where = "documents"
    bad = [i for i, v in enumerate(values) if not isinstance(v, str)]
    blank = [i for i, v in enumerate(values) if isinstance(v, str) and not v.strip()]
    for rows, what in ((bad, "missing or non-text"), (blank, "empty")):
        if rows:
            shown = ", ".join(map(str, rows[:10])) + (" ..." if len(rows) > 10 else "")
            raise ValueError(f"{where}: {len(rows)} {what} document(s), at row(s) {shown}. "
                             "Every document needs some text; drop those rows first.")
    return [str(v) for v in values]


def _check_df(value: Any, name: str, caller: str) -> int | float:
    """``min_df`` / ``max_df``: an int >= 1 (documents) or a float in (0, 1] (a share)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or (
            isinstance(value, numbers.Integral) and value < 1) or (
            not isinstance(value, numbers.Integral) and not 0.0 < float(value) <= 1.0):
        raise ValueError(f"The {name!r} parameter of {caller} must be an int >= 1 (a number "
                         "of documents) or a float in (0, 1] (a share of them). "
                         f"Got {value!r} instead.")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def tfidf_vectors(texts: list[str], *, max_features: int | None, min_df: int | float,
                  max_df: int | float, stop_words: str | None, ngram_range: tuple[int, int],
                  caller: str) -> tuple[sp.csr_matrix, tuple[str, ...]]:
    """TF-IDF vectors of ``texts`` (L2-normalized rows, float64 CSR) and the vocabulary.

    A scikit-learn ``TfidfVectorizer`` with ``sublinear_tf=False`` and smooth IDF. Refuses a
    corpus whose vocabulary is empty after ``min_df`` / ``max_df`` / ``stop_words``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    if max_features is not None and (isinstance(max_features, bool) or not isinstance(
            max_features, numbers.Integral) or max_features < 1):
        raise ValueError(f"The 'max_features' parameter of {caller} must be None or an int "
                         f">= 1. Got {max_features!r} instead.")
    if stop_words not in (None, "english"):
        raise ValueError(f"The 'stop_words' parameter of {caller} must be one of None, "
                         f"english. Got {stop_words!r} instead.")
    pair = tuple(ngram_range) if isinstance(ngram_range, Sequence) else ()
    low, high = (pair + (0, 0))[:2] if len(pair) == 2 else (0, 0)  # noqa: RUF005 - a pair
    if not (isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral)
            and 1 <= low <= high <= 3):
        raise ValueError(f"The 'ngram_range' parameter of {caller} must be (low, high) with "
                         f"1 <= low <= high <= 3. Got {ngram_range!r} instead.")
    vectorizer = TfidfVectorizer(
        max_features=None if max_features is None else int(max_features),
        min_df=_check_df(min_df, "min_df", caller), max_df=_check_df(max_df, "max_df", caller),
        stop_words=stop_words, ngram_range=(int(low), int(high)), dtype=np.float64)
    try:
        X = vectorizer.fit_transform(texts)
    except ValueError as error:  # "empty vocabulary" / "max_df corresponds to < documents ..."
        raise ValueError(f"{caller}: no term is left to describe the documents ({error}). "
                         f"Lower min_df (got {min_df!r}), raise max_df (got {max_df!r}) or "
                         "drop stop_words.") from None
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return X, tuple(str(t) for t in vectorizer.get_feature_names_out())

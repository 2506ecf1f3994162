"""The release's warnings carry the class they were raised with, and the report sorts them
into privacy warnings and others by that class, not by their words; their text (printed,
compared, in the summary JSON) is the warning's own, unchanged."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pandas as pd

from microagg import anonymize
from microagg._pipeline.notes import Note, warning_class
from microagg._pipeline.result import Release
from microagg.exceptions import ConstantColumnWarning, PrivacyLeakWarning
from microagg.report._text import all_warnings

IMPUTED = "Missing quasi-identifier values were imputed (impute:mean; 'a': 4 cells with"
CONSTANT = ("Quasi-identifier(s) 'c' are constant: excluded from the distances and the "
            "information loss, and published unchanged.")


def _release() -> tuple[Release, list[warnings.WarningMessage]]:
    """A release with a PrivacyLeakWarning whose words name no leak (imputed values) and a
    ConstantColumnWarning that says "unchanged" (a constant column identifies nobody)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60), "c": 1.0})
    df.loc[:3, "a"] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = anonymize(df, quasi_identifiers=["a", "b", "c"], k=5, missing="impute:mean",
                            random_state=0)
    return release, caught


def test_the_report_sorts_warnings_by_their_class() -> None:
    release, caught = _release()
    privacy, other = all_warnings(release)
    assert len(privacy) == 1 and privacy[0].startswith(IMPUTED)
    assert other == [CONSTANT]
    assert [warning_class(w) for w in (*privacy, *other)] == [PrivacyLeakWarning,
                                                              ConstantColumnWarning]
    # each kept note is the text warned, with the class warned
    raised = {str(w.message): w.category for w in caught}
    assert {str(w): warning_class(w) for w in release.warnings} == raised


def test_notes_keep_their_text_and_their_class_through_json_and_pickle() -> None:
    release, _ = _release()
    texts = [str(w) for w in release.warnings]
    assert json.loads(release.to_json())["warnings"] == texts
    assert release.summary()["warnings"] == texts and list(release.warnings) == texts
    again = pickle.loads(pickle.dumps(release))
    assert [(str(w), warning_class(w)) for w in again.warnings] == \
        [(str(w), warning_class(w)) for w in release.warnings]
    assert repr(Note("x", PrivacyLeakWarning)) == "'x'"


def test_plain_texts_are_sorted_by_their_words() -> None:
    """Warnings without a class (read back from a summary JSON) are sorted as before."""
    release, _ = _release()
    plain = Release.of(data=release.data, labels=release.labels, params=release.params,
                       seed=0, checks=release.checks, metrics=release.metrics,
                       layout="assessed", warnings=[str(w) for w in release.warnings])
    privacy, other = all_warnings(plain)
    assert privacy == [CONSTANT] and len(other) == 1 and other[0].startswith(IMPUTED)

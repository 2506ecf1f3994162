"""The WordNet 3.0 glosses corpus (Debian's wordnet-base, read offline with nltk): skipped
where nltk or the WordNet files are absent."""

from __future__ import annotations

import pytest

from microagg.semantic.wordnet import wordnet_available

pytestmark = pytest.mark.skipif(not wordnet_available(),
                                reason="needs nltk and WordNet 3.0 (apt-get install "
                                       "wordnet-base)")


def test_verb_glosses_are_labelled_documents_and_release() -> None:
    from microagg.documents import anonymize_documents, wordnet_glosses

    table = wordnet_glosses(600, pos="verb", random_state=1)
    assert list(table.columns) == ["synset", "lexname", "gloss"] and len(table) == 600
    assert table["lexname"].str.startswith("verb.").all()
    assert table["gloss"].str.strip().str.len().min() > 0
    again = wordnet_glosses(600, pos="verb", random_state=1)
    assert table.equals(again)
    release = anonymize_documents(table, text_column="gloss", k=5, stop_words="english",
                                  n_topics=15, random_state=0)
    assert release.k >= 5 and release.metrics["groups"] == 120


def test_bad_arguments() -> None:
    from microagg.documents import wordnet_glosses

    with pytest.raises(ValueError, match="'pos' parameter of wordnet_glosses"):
        wordnet_glosses(pos="adj")

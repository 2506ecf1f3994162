"""A real corpus read offline: the glosses of WordNet 3.0's synsets (Debian's
``wordnet-base``, read with nltk through :func:`microagg.semantic.wordnet.wordnet_reader`),
each labelled with its lexicographer file (``noun.animal``, ``noun.artifact``, ...).

WordNet 3.0 licence (Princeton): free use, copying and distribution with the copyright
notice: "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved."
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["wordnet_glosses"]

_POS = {"noun": "n", "verb": "v"}


@lru_cache(maxsize=4)
def _all_glosses(pos: str, examples: bool, folder: str | None) -> pd.DataFrame:
    import pandas as pd

    from ..semantic.wordnet import wordnet_reader

    reader = wordnet_reader(folder)
    rows = []
    for synset in reader.all_synsets(_POS[pos]):
        text = synset.definition()
        if examples and synset.examples():
            text += "; " + "; ".join(synset.examples())
        rows.append((synset.name(), synset.lexname(), text))
    table = pd.DataFrame(rows, columns=["synset", "lexname", "gloss"])
    return table.sort_values("synset", kind="stable").reset_index(drop=True)


def wordnet_glosses(n_documents: int | None = None, *, pos: str = "noun",
                    examples: bool = True, random_state: int = 0,
                    folder: str | None = None) -> pd.DataFrame:
    """The glosses of WordNet 3.0 synsets as a table of short documents with topic labels.

    Parameters
    ----------
    n_documents : int or None, default=None
        A random sample of this many synsets (without replacement, seeded by
        ``random_state``); ``None``: all of them (82,115 nouns, 13,767 verbs).
    pos : {"noun", "verb"}, default="noun"
        Part of speech: nouns (26 lexicographer files) or verbs (15).
    examples : bool, default=True
        Append the synset's example sentences to its definition (as WordNet's gloss does).
    random_state : int, default=0
        Seed of the sample.
    folder : str, optional
        The WordNet database folder (default: :func:`~microagg.semantic.wordnet.find_wordnet`).

    Returns
    -------
    pandas.DataFrame
        Columns ``synset`` (``dog.n.01``), ``lexname`` (``noun.animal``: the topic label)
        and ``gloss`` (the document), sorted by synset name, then sampled.

    Raises
    ------
    ImportError, FileNotFoundError
        Without nltk, or without the WordNet files (``apt-get install wordnet-base``).

    References
    ----------
    Fellbaum, C. (ed.) "WordNet: An Electronic Lexical Database." MIT Press (1998);
    Princeton University "About WordNet." https://wordnet.princeton.edu (2010).
    """
    if pos not in _POS:
        raise ValueError(f"The 'pos' parameter of wordnet_glosses must be one of noun, verb. "
                         f"Got {pos!r} instead.")
    table = _all_glosses(pos, bool(examples), folder)
    if n_documents is None:
        return table.copy()
    if isinstance(n_documents, bool) or not isinstance(n_documents, int) \
            or not 1 <= n_documents <= len(table):
        raise ValueError(f"The 'n_documents' parameter of wordnet_glosses must be None or an "
                         f"int in 1..{len(table)}. Got {n_documents!r} instead.")
    return table.sample(n=n_documents, random_state=random_state).reset_index(drop=True)

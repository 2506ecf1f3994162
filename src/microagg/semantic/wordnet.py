"""WordNet 3.0 noun hypernymy as a :class:`~microagg.semantic.taxonomy.Taxonomy`, read with
nltk's WordNet reader from Debian's ``wordnet-base`` files (``/usr/share/wordnet``); nothing
is downloaded."""

from __future__ import annotations

import io
import os
import pathlib
import warnings
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..exceptions import SchemaError
from .taxonomy import Taxonomy

__all__ = ["WORDNET_FOLDERS", "find_wordnet", "wordnet_available", "wordnet_reader",
           "wordnet_taxonomy"]

WORDNET_FOLDERS = ("/usr/share/wordnet", "/usr/local/share/wordnet",
                   "/opt/homebrew/share/wordnet", "/usr/local/WordNet-3.0/dict")
"""Where the WordNet 3.0 database files (``index.noun``, ``data.noun``, ...) are looked for,
after the ``MICROAGG_WORDNET`` environment variable."""

# The 45 lexicographer files of WordNet 3.0 (the ``lexnames`` file that Debian does not ship).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl").split()
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def find_wordnet() -> pathlib.Path | None:
    """The first folder holding WordNet's ``index.noun`` and ``data.noun``, or None."""
    env = os.environ.get("MICROAGG_WORDNET")
    for folder in ([env] if env else []) + list(WORDNET_FOLDERS):
        p = pathlib.Path(folder)
        if (p / "index.noun").is_file() and (p / "data.noun").is_file():
            return p
    return None


def wordnet_available() -> bool:
    """Whether nltk is installed and the WordNet files are found."""
    try:
        import nltk  # noqa: F401
    except ImportError:
        return False
    return find_wordnet() is not None


@lru_cache(maxsize=2)
def wordnet_reader(folder: str | None = None) -> Any:
    """nltk's ``WordNetCorpusReader`` over the WordNet database in ``folder`` (by default
    :func:`find_wordnet`). The folder is added to ``nltk.data.path`` (nltk reads corpora only
    from authorized folders); ``lexnames`` is served from memory when missing."""
    try:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise ImportError("The WordNet ontology needs nltk: pip install 'microagg[semantic]' "
                          "(or pip install nltk).") from None
    path = pathlib.Path(folder) if folder else find_wordnet()
    if path is None:
        raise FileNotFoundError(
            "WordNet 3.0 database files not found in "
            f"{', '.join(WORDNET_FOLDERS)} (or $MICROAGG_WORDNET). On Debian/Ubuntu: "
            "apt-get install wordnet-base.")
    has_lexnames = (path / "lexnames").is_file()

    class _Reader(WordNetCorpusReader):
        def open(self, file: str) -> Any:
            if file == "lexnames" and not has_lexnames:
                return io.StringIO("".join(
                    f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n"
                    for i, name in enumerate(_LEXNAMES)))
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            return None  # no mapping to another WordNet version (needs its index.sense)

    if str(path) not in [str(p) for p in nltk.data.path]:
        nltk.data.path.append(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return _Reader(str(path), None)


def _lookup(reader: Any, value: str) -> Any:
    """The first noun synset of ``value`` (spaces and hyphens read as underscores), or a
    synset named like ``dog.n.01``; None when WordNet has neither."""
    text = value.strip()
    if text.count(".") == 2 and text.split(".")[1] == "n":
        try:
            return reader.synset(text)
        except Exception:  # nltk raises WordNetError or ValueError
            return None
    for form in (text, text.replace("-", "_"), text.replace("-", " "), text.replace("-", "")):
        found = reader.synsets(form.replace(" ", "_"), pos="n")
        if found:
            return found[0]
    return None


def wordnet_taxonomy(values: Iterable[Any], *, column: str = "",
                     synsets: Mapping[str, str] | None = None,
                     folder: str | None = None) -> tuple[Taxonomy, dict[str, str]]:
    """WordNet noun hypernymy (hypernyms and instance hypernyms) above ``values``.

    Parameters
    ----------
    values : iterable
        The column's distinct values (compared as text).
    column : str
        The column's name, for the error message.
    synsets : mapping of str -> str, optional
        A synset name (``"technician.n.01"``) for some values; the others map to their first
        noun synset.
    folder : str, optional
        The WordNet database folder (default :func:`find_wordnet`).

    Returns
    -------
    taxonomy : Taxonomy
        The values' synsets and all their hypernyms (ids are synset names; a synset's label
        is the value that maps to it, else its first lemma).
    concept_of : dict of str -> str
        Each value's synset name.

    Raises
    ------
    SchemaError
        When values are not in WordNet: the message names the column and the values.

    References
    ----------
    Fellbaum, C. (ed.) "WordNet: An Electronic Lexical Database." MIT Press (1998);
    Martinez, S., Sanchez, D., Valls, A. "Semantic adaptive microaggregation of categorical
    microdata." Computers & Security 31 (2012) 653-672.
    """
    reader = wordnet_reader(folder)
    given = {str(k): str(v) for k, v in (synsets or {}).items()}
    concept_of: dict[str, str] = {}
    missing: list[str] = []
    found: dict[str, Any] = {}
    for value in sorted({str(v) for v in values}):
        synset = _lookup(reader, given.get(value, value))
        if synset is None:
            missing.append(value)
            continue
        concept_of[value] = synset.name()
        found[synset.name()] = synset
    if missing:
        shown = ", ".join(map(repr, missing[:20])) + (" ..." if len(missing) > 20 else "")
        raise SchemaError(
            f"Column {column!r}: {len(missing)} value(s) not found as WordNet nouns: {shown}. "
            "Give their synsets (synsets={value: 'name.n.01'}, or --synset COLUMN:VALUE=SYNSET on the "
            "command line).")
    parents: dict[str, tuple[str, ...]] = {}
    todo = list(found.values())
    while todo:
        synset = todo.pop()
        if synset.name() in parents:
            continue
        above = synset.hypernyms() + synset.instance_hypernyms()
        parents[synset.name()] = tuple(sorted(s.name() for s in above))
        todo += above
    labels = {name: reader.synset(name).lemma_names()[0].replace("_", " ")
              for name in parents}
    labels.update({c: v for v, c in sorted(concept_of.items(), reverse=True)})
    taken: dict[str, int] = {}
    for text in labels.values():
        taken[text] = taken.get(text, 0) + 1
    labels = {c: (text if taken[text] == 1 or c in concept_of.values() else c)
              for c, text in labels.items()}
    return Taxonomy(parents, labels=labels, name="WordNet 3.0 nouns"), concept_of

"""WordNet 3.0 nouns as the ontology (nltk reading Debian's wordnet-base; nothing is
downloaded), and the ``microagg semantic`` command. Skipped where either is absent."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app
from microagg.exceptions import SchemaError
from microagg.semantic import anonymize_semantic, concept_distance, wordnet_available
from microagg.semantic.adult import ADULT_SYNSETS

needs_wordnet = pytest.mark.skipif(
    not wordnet_available(),
    reason="needs nltk (pip install nltk) and WordNet (apt-get install wordnet-base)")
runner = CliRunner()


@needs_wordnet
def test_taxonomy_of_words_has_their_hypernyms():
    from microagg.semantic import wordnet_taxonomy

    taxonomy, concept_of = wordnet_taxonomy(["dog", "cat", "salmon"], column="pet")
    assert concept_of == {"cat": "cat.n.01", "dog": "dog.n.01", "salmon": "salmon.n.01"}
    assert {"canine.n.02", "carnivore.n.01", "entity.n.01"} <= taxonomy.ancestors("dog.n.01")
    assert taxonomy.roots == ("entity.n.01",)
    assert taxonomy.label("dog.n.01") == "dog" and taxonomy.label("canine.n.02") == "canine"
    assert (concept_distance(taxonomy, "dog.n.01", "cat.n.01")
            < concept_distance(taxonomy, "dog.n.01", "salmon.n.01"))


@needs_wordnet
def test_synset_names_and_instance_hypernyms():
    from microagg.semantic import wordnet_taxonomy

    taxonomy, concept_of = wordnet_taxonomy(["Mexico", "Columbia"], column="country",
                                            synsets={"Columbia": "colombia.n.01"})
    assert concept_of == {"Columbia": "colombia.n.01", "Mexico": "mexico.n.01"}
    # countries are instances: their instance hypernyms make the path up
    assert "country.n.02" in taxonomy.ancestors("mexico.n.01")


@needs_wordnet
def test_unknown_words_name_the_column_and_the_values():
    df = pd.DataFrame({"job": ["nurse", "qwzrt", "teacher", "xxyyzz"]})
    with pytest.raises(SchemaError, match=r"Column 'job': 2 value\(s\) not found as WordNet "
                                          r"nouns: 'qwzrt', 'xxyyzz'"):
        anonymize_semantic(df, columns=["job"], k=2, ontology="wordnet")


@needs_wordnet
def test_wordnet_release_on_jobs():
    jobs = ["nurse", "surgeon", "dentist", "carpenter", "plumber", "electrician"]
    df = pd.DataFrame({"job": np.repeat(jobs, [3, 2, 1, 3, 2, 1])})
    r = anonymize_semantic(df, columns=["job"], k=3, ontology="wordnet", random_state=0)
    assert np.bincount(r.labels).min() >= 3 and r.k >= 3
    health = df["job"].isin(jobs[:3]).to_numpy()
    for g in np.unique(r.labels):  # health workers and craftsmen are not mixed
        assert len(set(health[r.labels == g])) == 1
    assert 0 < r.metrics["semantic_information_loss"] < 1


@needs_wordnet
def test_cli_semantic_on_adult_occupation(tmp_path: pathlib.Path):
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    synsets = [f"occupation:{v}={s}" for v, s in ADULT_SYNSETS["occupation"].items()]
    args = ["semantic", "dataset:adult", "-c", "occupation", "-k", "5", "--random-state",
            "4", "-o", str(out), "--summary-json", str(summary)]
    for item in synsets:
        args += ["--synset", item]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert published["occupation"].value_counts().min() >= 5
    facts = json.loads(summary.read_text())
    assert facts["checks"]["k_anonymity"]["achieved"] >= 5 and facts["seed"] == 4


def test_cli_semantic_with_hierarchies_and_bad_options(tmp_path: pathlib.Path):
    result = runner.invoke(app, ["semantic", "dataset:adult", "-c", "occupation",
                                 "--ontology", "hierarchy", "-k", "3"])
    assert result.exit_code == 0, result.output
    assert "semantic information loss" in result.output
    bad = runner.invoke(app, ["semantic", "dataset:adult", "-c", "occupation",
                              "--synset", "nonsense"])
    assert bad.exit_code == EXIT_USER_ERROR and "COLUMN:VALUE=SYNSET" in bad.output
    csv = tmp_path / "t.csv"
    pd.DataFrame({"a": ["x", "y"]}).to_csv(csv, index=False)
    bad = runner.invoke(app, ["semantic", str(csv), "-c", "a", "--ontology", "hierarchy",
                              "-k", "2"])
    assert bad.exit_code == EXIT_USER_ERROR and "--hierarchy COLUMN=FILE" in bad.output

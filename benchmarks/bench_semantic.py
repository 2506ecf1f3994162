"""Semantic microaggregation on the bundled Adult data (30,162 records): semantic
information loss and share of values generalized, against mdav-categorical and mage on the
same columns and k, and the speed of semantic MDAV with one WordNet-typed attribute.

    python benchmarks/bench_semantic.py            # everything (~2-4 minutes on 2 cores)
    python benchmarks/bench_semantic.py --quick    # k = 5 only, no mdav-categorical

Table 1 (ARX hierarchies): the loss of every release is measured in the same taxonomy (the
hierarchy as an is-a tree) with the feature-based distance of Sanchez et al. (2012):
``semantic-mdav`` publishes semantic centroids (``anonymize_semantic``);
``semantic-mdav (LCA)`` is the same partition through ``microagg.anonymize``, which publishes
each group's common ancestor; ``mdav-categorical`` and ``mage`` publish common ancestors.
Table 3 (WordNet 3.0, Debian wordnet-base): occupation and native-country mapped to noun
synsets by ``microagg.semantic.adult.ADULT_SYNSETS``, against mage and mdav-categorical
without hierarchies publishing each group's most frequent value. Table 2: the speed target
(30,000 records, one WordNet attribute, < 30 s).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg import anonymize
from microagg.datasets import load_dataset
from microagg.hierarchy import Hierarchy
from microagg.semantic import Taxonomy, anonymize_semantic, semantic_loss, wordnet_available
from microagg.semantic.adult import ADULT_SYNSETS

COLUMNS = ("occupation", "native-country", "workclass", "marital-status")


def hierarchy_table(ks: tuple[int, ...], methods: tuple[str, ...]) -> None:
    data = load_dataset("adult")
    df = data.data
    hier = {c: Hierarchy.from_csv(data.hierarchies[c], column=c) for c in COLUMNS}
    tax = {c: Taxonomy.from_hierarchy(h) for c, h in hier.items()}
    print(f"\nTable 1. Adult, {len(df):,} records, columns {', '.join(COLUMNS)} "
          "(ARX hierarchies); loss = mean feature-based distance, original to published")
    print(f"{'method':<24}{'k':>4}{'sem. IL':>10}{'generalized':>13}{'seconds':>10}")
    for k in ks:
        for method in methods:
            t = time.perf_counter()
            if method == "semantic-mdav":
                published = anonymize_semantic(df, columns=COLUMNS, k=k, ontology=hier,
                                               random_state=0).data
            else:
                name = "semantic-mdav" if method.startswith("semantic") else method
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    published = anonymize(df, k=k, quasi_identifiers=list(COLUMNS),
                                          method=name, hierarchies=hier, random_state=0).data
            seconds = time.perf_counter() - t
            scores = [semantic_loss(df[c], published[c], tax[c], column=c) for c in COLUMNS]
            loss = np.mean([s["semantic_information_loss"] for s in scores])
            share = np.mean([s["generalized_share"] for s in scores])
            print(f"{method:<24}{k:>4}{loss:>10.4f}{share:>13.4f}{seconds:>10.2f}")


def wordnet_table(ks: tuple[int, ...], methods: tuple[str, ...]) -> None:
    from microagg.semantic import wordnet_taxonomy

    df = load_dataset("adult").data
    cols = ("occupation", "native-country")
    wordnet = {c: wordnet_taxonomy(df[c].unique(), column=c, synsets=ADULT_SYNSETS[c])
               for c in cols}
    print(f"\nTable 3. Adult, {len(df):,} records, {', '.join(cols)} as WordNet 3.0 nouns; "
          "loss = mean feature-based distance in WordNet")
    print(f"{'method':<30}{'k':>4}{'sem. IL':>10}{'generalized':>13}"
          f"{'occupation IL':>15}{'country IL':>12}{'seconds':>10}")
    for k in ks:
        for method in methods:
            t = time.perf_counter()
            if method.startswith("semantic-mdav"):
                distance = method.split("(")[1].rstrip(")")
                published = anonymize_semantic(df, columns=cols, k=k, ontology="wordnet",
                                               distance=distance, synsets=ADULT_SYNSETS,
                                               random_state=0).data
            else:  # no hierarchy: 0/1 distances, each group's most frequent value
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    published = anonymize(df, k=k, quasi_identifiers=list(cols),
                                          method=method.split()[0], random_state=0,
                                          categorical_aggregation="mode").data
            seconds = time.perf_counter() - t
            scores = {c: semantic_loss(df[c], published[c], wordnet[c][0],
                                       concept_of=wordnet[c][1], column=c) for c in cols}
            loss = np.mean([s["semantic_information_loss"] for s in scores.values()])
            share = np.mean([s["generalized_share"] for s in scores.values()])
            print(f"{method:<30}{k:>4}{loss:>10.4f}{share:>13.4f}"
                  f"{scores['occupation']['semantic_information_loss']:>15.4f}"
                  f"{scores['native-country']['semantic_information_loss']:>12.4f}"
                  f"{seconds:>10.2f}")


def speed_table() -> None:
    df = load_dataset("adult").data.iloc[:30_000]
    print("\nTable 2. Speed: 30,000 records, occupation as WordNet nouns, k = 5 (the first "
          "run reads WordNet)")
    print(f"{'run':<8}{'ontology s':>12}{'partition s':>13}{'total s':>10}{'achieved k':>12}")
    for run in ("first", "second"):  # the second reuses the WordNet reader
        r = anonymize_semantic(df, columns=["occupation"], k=5, ontology="wordnet",
                               synsets=ADULT_SYNSETS, random_state=0)
        t = r.timings
        print(f"{run:<8}{t['ontology']:>12.2f}{t['partition']:>13.2f}{t['total']:>10.2f}"
              f"{r.k:>12}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(machine())
    ks = (5,) if args.quick else (3, 5, 10)
    methods = ("semantic-mdav", "semantic-mdav (LCA)", "mage") if args.quick else (
        "semantic-mdav", "semantic-mdav (LCA)", "mdav-categorical", "mage")
    hierarchy_table(ks, methods)
    if not wordnet_available():
        print("\nWordNet (nltk + wordnet-base) not available: tables 2 and 3 skipped.")
        sys.exit(0)
    speed_table()
    wordnet_table(ks, ("semantic-mdav (feature)", "semantic-mdav (wu-palmer)", "mage (mode)")
                  + (() if args.quick else ("mdav-categorical (mode)",)))


if __name__ == "__main__":
    main()

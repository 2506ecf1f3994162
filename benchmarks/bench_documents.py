"""Spherical microaggregation of documents (issue 22, part 2): time, memory, information
loss, topic agreement and linkage risk on the glosses of WordNet 3.0 nouns.

    python benchmarks/bench_documents.py                  # the two parts below
    python benchmarks/bench_documents.py --n 5000 --memory-n 10000   # smaller

1. ``--n`` (20,000) noun glosses sampled from WordNet 3.0 (Debian's wordnet-base, read
   offline with nltk), TF-IDF with English stop words, at k = 3, 5, 10 (the issue's target:
   spherical MDAV under 60 s at 20,000 documents). Topics: k-means with 26 clusters (the
   number of noun lexicographer files) on the original and on the published vectors.
2. ``--memory-n`` (50,000) noun glosses, unigrams + bigrams with ``max_features`` 50,000
   (min_df 2), k = 5, the whole release (vectorize, partition, centroids, verification,
   metrics) in a child process that reads the glosses from a CSV, so that its peak RSS
   (``ru_maxrss``) counts microagg's work and not the WordNet reader (target: < 2 GB).

Columns: ``partition`` spherical MDAV alone, ``total`` the whole release; ``1-cos`` the mean
cosine loss, ``SSE/SST`` on the unit sphere (%); ``ARI / NMI vs original`` the published
topics against the original topics; ``NMI vs lexname``: the original topics (o) and the
published topics (p) against the 26 WordNet lexicographer files; ``linkage``: share of
originals whose most similar published vector is their own, ``reid`` the same / group size.
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg.documents import anonymize_documents, wordnet_glosses
from microagg.documents.measure import topic_clusters
from microagg.documents.vectors import tfidf_vectors

HEADER = ("| documents x terms | k | partition (s) | total (s) | 1-cos | SSE/SST (%) "
          "| ARI / NMI vs original topics | NMI vs lexname (o / p) | linkage | reid |")
TOPICS = 26


def topic_rows(table: pd.DataFrame, ks: tuple[int, ...]) -> None:
    """Part 1: one row per k, plus the k-means noise floor (two seeds on the originals)."""
    lexname = table["lexname"].to_numpy()
    seed = int(np.random.default_rng(0).integers(0, 2**31 - 1))  # the release's k-means seed
    for k in ks:
        start = time.perf_counter()
        release = anonymize_documents(table, text_column="gloss", k=k, stop_words="english",
                                      n_topics=TOPICS, random_state=0)
        total = time.perf_counter() - start
        X, _ = tfidf_vectors(table["gloss"].tolist(), max_features=None, min_df=k,
                             max_df=1.0, stop_words="english", ngram_range=(1, 1),
                             caller="bench")
        before = topic_clusters(X, TOPICS, seed)
        labels = release.labels
        after = topic_clusters(release.data.centroids, TOPICS, seed,
                               np.bincount(labels).astype(np.float64))[labels]
        m = release.metrics
        print(f"| {len(table):,} x {X.shape[1]:,} | {k} | {release.timings['partition']:.2f} "
              f"| {total:.2f} | {m['cosine_loss']:.3f} | {m['spherical_sse_sst']:.1f} "
              f"| {m['topic_ari']:.3f} / {m['topic_nmi']:.3f} "
              f"| {normalized_mutual_info_score(lexname, before):.3f} / "
              f"{normalized_mutual_info_score(lexname, after):.3f} "
              f"| {m['linkage_risk']:.3f} | {m['reidentification_risk']:.3f} |", flush=True)
    other = topic_clusters(X, TOPICS, seed + 1)
    print(f"\nk-means noise floor (original vectors, two seeds, min_df {ks[-1]}): ARI "
          f"{adjusted_rand_score(before, other):.3f}, NMI "
          f"{normalized_mutual_info_score(before, other):.3f}", flush=True)


def memory_child(path: str) -> None:
    """Part 2, in a child process: the whole release on the CSV, then time and peak RSS."""
    table = pd.read_csv(path, keep_default_na=False)
    start = time.perf_counter()
    release = anonymize_documents(table, text_column="gloss", k=5, max_features=50_000,
                                  min_df=2, ngram_range=(1, 2), stop_words="english",
                                  n_topics=TOPICS, random_state=0)
    total = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    m = release.metrics
    print(f"| {release.n_rows:,} x {release.params['n_features']:,} (1-2 grams) | 5 "
          f"| {release.timings['partition']:.2f} | {total:.2f} | {m['cosine_loss']:.3f} "
          f"| {m['spherical_sse_sst']:.1f} | {m['topic_ari']:.3f} / {m['topic_nmi']:.3f} "
          f"| - | {m['linkage_risk']:.3f} | {m['reidentification_risk']:.3f} |")
    print(f"\npeak RSS of the child process: {rss:,.0f} MiB; timings (s): "
          + ", ".join(f"{name} {value:.2f}" for name, value in release.timings.items()))


def main() -> None:
    """Print the machine line and the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--memory-n", type=int, default=50_000)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    print(f"machine: {machine()}")
    start = time.perf_counter()
    glosses = wordnet_glosses()
    print(f"WordNet 3.0 noun glosses: {len(glosses):,}, read in "
          f"{time.perf_counter() - start:.1f} s\n")
    print(HEADER)
    print("|" + "---|" * 10)
    topic_rows(glosses.sample(n=args.n, random_state=0).reset_index(drop=True), (3, 5, 10))
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "glosses.csv"
        glosses.sample(n=args.memory_n, random_state=1)[["gloss"]].to_csv(path, index=False)
        print("\n" + HEADER + "\n|" + "---|" * 10, flush=True)
        subprocess.run([sys.executable, __file__, "--memory-child", str(path)], check=True)


if __name__ == "__main__":
    main()

"""Seed 004 (CDT) on Adult: UL, P(Q), P(S), P(D') and time for 100..500 and 1,000 records,
against the paper's R timings, and CDT next to MDAV + 2-diversity and t-closeness.

    python benchmarks/seed004_cdt.py

Sample: 1,000 records of the bundled Adult drawn with a fixed seed (numpy default_rng(2020)
without replacement); G1..G5 are its first 100..500 records (the paper splits its 1,000
records into groups of 100..500). Quasi-identifiers: age (numeric), sex, native-country.
Sensitive: occupation, education and salary-class (the paper's third one, FNLWGT, is not in
the bundled Adult; salary-class is the only other column left).

CDT settings: the paper's rules (minimum average silhouette for the sensitive clusters,
maximum for the quasi-identifier clusters) with the scan bounded at 30 clusters
(`max_clusters=30`, the library default); k = 2 (groups of one record are merged; the
paper's CDT publishes whatever it finds). Times are the median of 3 runs of the whole
`anonymize` call after a warm-up.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from microagg import anonymize
from microagg.datasets import load_dataset
from microagg.metrics import (
    privacy_of_quasi_identifiers,
    privacy_of_release,
    privacy_of_sensitive,
    utility_loss,
)
from microagg.models import t_closeness

QI = ["age", "sex", "native-country"]
SENSITIVE = ["occupation", "education", "salary-class"]
PAPER_SECONDS = {100: 3.61, 200: 6.68, 300: 28.33, 400: 67.51, 500: 157.69}
PAPER = {100: (42.51, 58.60, 71.28, 52.27), 200: (46.05, 62.04, 63.73, 46.27),
         300: (44.80, 67.29, 64.30, 46.37), 400: (50.20, 73.87, 76.65, 52.89),
         500: (51.89, 75.27, 58.81, 42.50), 1000: (62.28, 79.84, 69.41, None)}


def sample():
    data = load_dataset("adult").data
    rows = np.random.default_rng(2020).choice(len(data), size=1000, replace=False)
    return data.iloc[np.sort(rows)].reset_index(drop=True)


def measure(release, df) -> dict:
    classes = release.data.groupby(QI, sort=False).ngroup().to_numpy()
    p_q = privacy_of_quasi_identifiers(classes)
    p_s = privacy_of_sensitive(classes, [df[c].to_numpy() for c in SENSITIVE])
    hom = release.metrics["homogeneity"]["occupation"]
    return {
        "UL": 100 * utility_loss(classes, df[["age"]].to_numpy(float),
                                 [df[c].to_numpy() for c in QI[1:]]),
        "P(Q)": 100 * p_q, "P(S)": 100 * p_s, "P(D)": 100 * privacy_of_release(p_q, p_s),
        "classes": int(classes.max()) + 1, "k": release.k,
        "homogeneous": f"{hom['homogeneous_classes']} ({100 * hom['homogeneous_share']:.1f} %)",
        "distinct l": release.metrics["distinct_l"]["occupation"],
        "t (occupation)": t_closeness(classes, df["occupation"].to_numpy()),
    }


def timed(df, **kw):
    """Median over 3 runs of the whole call, and of its method part (partition, privacy
    model, generalization; without verification and measures)."""
    times, steps = [], []
    for _ in range(3):
        t = time.perf_counter()
        release = anonymize(df, quasi_identifiers=QI, sensitive=SENSITIVE, random_state=0, **kw)
        times.append(time.perf_counter() - t)
        steps.append(sum(v for key, v in release.timings.items()
                         if key in ("partition", "l_diversity", "t_closeness", "aggregate")))
    return release, float(np.median(times)), float(np.median(steps))


def main() -> None:
    df = sample()
    print(f"machine: {platform.machine()}, Python {platform.python_version()}\n")
    anonymize(df.iloc[:100], quasi_identifiers=QI, sensitive=SENSITIVE, k=2, method="cdt",
              random_state=0)  # warm-up
    print("**CDT by size** (paper: R on an i7-8700K)\n")
    print("| records | CDT step (s) | whole call (s) | paper (s) | speed-up (step / call) | UL (%) | P(Q) (%) | P(S) (%) | "
          "P(D') (%) | paper UL / P(Q) / P(S) / gain | classes | k | homogeneous classes |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
    for n in (100, 200, 300, 400, 500, 1000):
        part = df.iloc[:n].reset_index(drop=True)
        release, seconds, step = timed(part, k=2, method="cdt")
        m = measure(release, part)
        paper = PAPER[n]
        ref = PAPER_SECONDS.get(n)
        print(f"| {n} | {step:.3f} | {seconds:.3f} | {ref if ref else 'n/a'} | "
              f"{(f'{ref / step:.0f}x / {ref / seconds:.0f}x' if ref else 'n/a')} | "
              f"{m['UL']:.2f} | "
              f"{m['P(Q)']:.2f} | {m['P(S)']:.2f} | {m['P(D)']:.2f} | "
              f"{' / '.join('n/a' if v is None else f'{v:.2f}' for v in paper)} | "
              f"{m['classes']} | {m['k']} | {m['homogeneous']} |")
    print("\n**1,000 records: CDT next to MDAV + 2-diversity and t-closeness** "
          "(same quasi-identifiers and sensitive columns; MDAV on age with sex and "
          "native-country generalized by MAGE's flat hierarchies is not comparable, so the "
          "non-CDT rows use MAGE, the mixed-data microaggregation)\n")
    print("| release | time (s) | UL (%) | P(Q) (%) | P(S) (%) | P(D') (%) | classes | k | "
          "distinct l (occupation) | t (occupation) | homogeneous classes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    configs = [
        ("CDT, k = 2", {"k": 2, "method": "cdt"}),
        ("CDT, k = 5", {"k": 5, "method": "cdt"}),
        ("MAGE, k = 5", {"k": 5}),
        ("MAGE + distinct 2-diversity, k = 5", {"k": 5, "l": 2}),
        ("MAGE + t-closeness 0.2 (occupation, education, salary), k = 5", {"k": 5, "t": 0.2}),
    ]
    for label, kw in configs:
        release, seconds, _ = timed(df, **kw)
        m = measure(release, df)
        print(f"| {label} | {seconds:.3f} | {m['UL']:.2f} | {m['P(Q)']:.2f} | {m['P(S)']:.2f} | "
              f"{m['P(D)']:.2f} | {m['classes']} | {m['k']} | "
              f"{m['distinct l']:.0f} | {m['t (occupation)']:.3f} | {m['homogeneous']} |")


if __name__ == "__main__":
    main()

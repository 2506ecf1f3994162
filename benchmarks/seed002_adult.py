"""Seed 002 on Adult: MAGE with and without l-diversity, and a full-domain generalization
with suppression in ARX's setting, on the same measures.

    python benchmarks/seed002_adult.py             # 3 seeds per MAGE configuration
    python benchmarks/seed002_adult.py --seeds 1   # a quick look

Data: the bundled ARX variant of Adult, 30,162 records. Quasi-identifiers: age (numeric)
and sex, race, marital-status, education, native-country, workclass, salary-class
(categorical, ARX hierarchies); occupation is sensitive.

MAGE configurations: k = 2, 5, 10, each without l-diversity and with distinct 2-, entropy 2-
and distinct 3-diversity (occupation). Reported: homogeneous classes before (plain MAGE)
and after, IL(Omega) normalized, NCP, query answering (1,000 random queries, the same for
every release), and the wall time of `anonymize` (partition, enforcement, generalization,
verification and measures; numba compiled by a warm-up call).

Full-domain reference (ARX's model, not ARX's code): every node of the generalization
lattice (one level per quasi-identifier, age with its ARX interval hierarchy) is evaluated;
records in classes under k or not distinct 2-diverse are suppressed if they are at most 5 %
of the table; among those nodes the one with the smallest loss (NCP with suppressed records
counted as fully generalized) wins. ARX reports, for k = 5 and distinct 2-diversity, 397
classes and 1,346 suppressed records (4.5 %).
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time

import numpy as np

from microagg import anonymize
from microagg.datasets import load_dataset
from microagg.hierarchy import Hierarchy
from microagg.metrics import normalized_certainty_penalty, query_answering

QI = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass",
      "salary-class"]
CATEGORICAL = QI[1:]
SENSITIVE = "occupation"
CONFIGS = [(None, "distinct"), (2, "distinct"), (2, "entropy"), (3, "distinct")]


def mage_runs(seeds: int) -> list[dict]:
    ds = load_dataset("adult")
    hierarchies = {c: ds.hierarchies[c] for c in CATEGORICAL}
    anonymize(ds.data.iloc[:500], quasi_identifiers=QI, k=2, sensitive=SENSITIVE,
              hierarchies=hierarchies, l=2, random_state=0)  # warm-up: numba
    rows = []
    for k in (2, 5, 10):
        for l, diversity in CONFIGS:
            for seed in range(seeds):
                t = time.perf_counter()
                r = anonymize(ds.data, quasi_identifiers=QI, k=k, sensitive=SENSITIVE,
                              hierarchies=hierarchies, l=l, diversity=diversity,
                              random_state=seed)
                seconds = time.perf_counter() - t
                hom = r.metrics["homogeneity"][SENSITIVE]
                qa = r.metrics["query_answering"]
                rows.append({
                    "k": k, "model": "k only" if l is None else f"{diversity} {l}-diversity",
                    "seed": seed, "seconds": seconds, "groups": r.metrics["n_groups"],
                    "classes": hom["classes"], "homogeneous": hom["homogeneous_classes"],
                    "homogeneous_share": hom["homogeneous_share"],
                    "il_omega": r.metrics["il_omega_normalized"], "ncp": r.metrics["ncp"],
                    "qa_mean_anon": qa["mean_anonymized"], "qa_more": qa["share_more"],
                    "qa_small": qa["small_queries"], "qa_small_still": qa["small_still_small"],
                    "qa_mean_orig": qa["mean_original"],
                    "l_achieved": r.checks.get("l_diversity", {}).get("achieved"),
                })
    return rows


def full_domain(k: int, l: int, suppression: float) -> dict:
    """Optimal full-domain generalization with suppression (ARX's model) by brute force."""
    ds = load_dataset("adult")
    df = ds.data
    n = len(df)
    hs = [Hierarchy.from_csv(ds.hierarchies[c], column=c) for c in QI]
    tables = [h.tables() for h in hs]
    codes = [h.encode(df[c].to_numpy()) for h, c in zip(hs, QI, strict=True)]
    sens = np.unique(df[SENSITIVE].to_numpy(dtype=str), return_inverse=True)[1]
    age = df["age"].to_numpy(dtype=float)
    age_range = age.max() - age.min()
    t0 = time.perf_counter()
    best = None
    age_lo, age_hi = _age_interval(tables[0], np.arange(len(tables[0].node_labels)), age)
    radix = [len(t.node_labels) for t in tables]
    for levels in itertools.product(*(range(t.height + 1) for t in tables)):
        nodes = [t.ancestor[lv, c] for t, lv, c in zip(tables, levels, codes, strict=True)]
        packed = np.zeros(n, dtype=np.int64)
        for node, base in zip(nodes, radix, strict=True):  # one int per combination
            packed = packed * base + node
        key = np.unique(packed, return_inverse=True)[1].ravel()
        size = np.bincount(key)
        distinct = np.bincount(np.unique(key * (sens.max() + 1) + sens) // (sens.max() + 1))
        bad = (size < k) | (distinct < l)
        suppressed = bad[key]
        if suppressed.sum() > suppression * n:
            continue
        # loss: NCP, age by its interval clipped to the data's range, suppressed = 1
        lo, hi = age_lo[nodes[0]], age_hi[nodes[0]]
        loss = normalized_certainty_penalty(
            lo[:, None], hi[:, None], [age_range], np.column_stack(nodes[1:]), tables[1:],
            suppressed=suppressed)
        if best is None or loss < best["ncp"]:
            best = {"levels": dict(zip(QI, levels, strict=True)), "ncp": loss,
                    "classes": int((~bad).sum()), "suppressed": int(suppressed.sum()),
                    "nodes": nodes, "suppressed_mask": suppressed}
    assert best is not None
    best["seconds"] = time.perf_counter() - t0
    # query answering on the same queries as the MAGE releases (suppressed rows match nothing)
    lo, hi = _age_interval(tables[0], best["nodes"][0], age)
    lo = np.where(best["suppressed_mask"], np.inf, lo)
    hi = np.where(best["suppressed_mask"], -np.inf, hi)
    qa = query_answering(age[:, None], lo[:, None], hi[:, None],
                         np.column_stack(codes[1:]), np.column_stack(best["nodes"][1:]),
                         tables[1:], k=k, random_state=0)
    best["qa"] = qa
    return best


def _age_interval(table, nodes, age):
    """Numeric interval of each published age label ("20-24", "*", or a single age)."""
    labels = np.asarray(table.node_labels, dtype=object)[nodes]
    lo = np.empty(len(labels))
    hi = np.empty(len(labels))
    for i, text in enumerate(labels):
        if text == "*":
            lo[i], hi[i] = age.min(), age.max()
        elif "-" in text:
            a, b = text.split("-")
            lo[i], hi[i] = float(a), float(b)
        else:
            lo[i] = hi[i] = float(text)
    return np.clip(lo, age.min(), age.max()), np.clip(hi, age.min(), age.max())


def summarize(rows: list[dict]) -> str:
    lines = ["| k | model | time (s) | groups | classes | homogeneous classes (records %) | "
             "IL(Omega) norm. | NCP (%) | QA: mean answer orig / anon | QA: anon > orig | "
             "QA: small answers still < k |",
             "|---:|---|---:|---:|---:|---|---:|---:|---|---:|---|"]
    for k in (2, 5, 10):
        for l, diversity in CONFIGS:
            model = "k only" if l is None else f"{diversity} {l}-diversity"
            sel = [r for r in rows if r["k"] == k and r["model"] == model]

            def ms(field: str, scale: float = 1.0, digits: int = 3, sel=sel) -> str:
                v = np.array([r[field] for r in sel], dtype=float) * scale
                return f"{v.mean():.{digits}f}" + (f" ± {v.std():.{digits}f}" if len(v) > 1 else "")

            small = sum(r["qa_small"] for r in sel)
            still = np.mean([r["qa_small_still"] for r in sel])
            lines.append(
                f"| {k} | {model} | {ms('seconds', digits=2)} | {ms('groups', digits=0)} | "
                f"{ms('classes', digits=0)} | {ms('homogeneous', digits=1)} "
                f"({ms('homogeneous_share', 100, 2)}) | {ms('il_omega', digits=4)} | "
                f"{ms('ncp', 100, 2)} | {sel[0]['qa_mean_orig']:.0f} / {ms('qa_mean_anon', digits=0)} | "
                f"{ms('qa_more', digits=3)} | {still:.2f} of {small // len(sel)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, Python {platform.python_version()}; "
          f"MAGE seeds 0..{args.seeds - 1}\n")
    rows = mage_runs(args.seeds)
    print(summarize(rows))
    print()
    ref = full_domain(5, 2, 0.05)
    mage5 = [r for r in rows if r["k"] == 5 and r["model"] == "distinct 2-diversity"]
    print("**k = 5, distinct 2-diversity on occupation, 8 quasi-identifiers**\n")
    print("| release | records published | classes | suppressed | NCP (%) | "
          "QA: anon > orig | time (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("| ARX as reported in the issue (full-domain, Loss, 5 % suppression) | 28,816 | "
          "397 | 1,346 (4.5 %) | n/a | n/a | 0.3-0.5 |")
    print(f"| full-domain optimum, our lattice search (levels {ref['levels']}) | "
          f"{30162 - ref['suppressed']:,} | {ref['classes']} | {ref['suppressed']:,} "
          f"({100 * ref['suppressed'] / 30162:.1f} %) | {100 * ref['ncp']:.2f} | "
          f"{ref['qa']['share_more']:.3f} | {ref['seconds']:.1f} |")
    ncp = np.array([r["ncp"] for r in mage5]) * 100
    more = np.mean([r["qa_more"] for r in mage5])
    secs = np.mean([r["seconds"] for r in mage5])
    classes = np.mean([r["classes"] for r in mage5])
    print(f"| MAGE + distinct 2-diversity (mean of {len(mage5)} seeds) | 30,162 | "
          f"{classes:.0f} | 0 | {ncp.mean():.2f} ± {ncp.std():.2f} | {more:.3f} | {secs:.2f} |")


if __name__ == "__main__":
    main()

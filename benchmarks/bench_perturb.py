"""Time the perturbative steps on the bundled eusilc (14,827 persons): PRAM on its
categorical keys, additive / correlated / ROMM noise on its incomes, rank swapping and data
shuffling; each output checked by its verifier. No sdcMicro on this machine: its side of the
comparison is not measured here.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_perturb.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from microagg.datasets import load_dataset
from microagg.steps.perturb import (
    Noise,
    Pram,
    RankSwap,
    Shuffle,
    apply_noise,
    apply_pram,
    apply_rank_swap,
    apply_shuffle,
    verify_noise,
    verify_pram,
    verify_rank_swap,
    verify_shuffle,
)

KEYS = "db040,rb090,pb220a,pl030"
INCOMES = "py010n,py050n,py090n,hy040n,hy090n,eqIncome"

CASES = [
    ("pram keys (pd=0.8, alpha=0.5)", Pram(KEYS), apply_pram, verify_pram, True),
    ("noise additive 0.1 incomes", Noise(INCOMES), apply_noise, verify_noise, False),
    ("noise correlated 0.1 incomes", Noise(INCOMES, method="correlated"), apply_noise,
     verify_noise, False),
    ("noise romm 0.1 incomes", Noise(INCOMES, method="romm"), apply_noise, verify_noise,
     False),
    ("rank swap p=5 incomes", RankSwap(INCOMES, p=5), apply_rank_swap, verify_rank_swap,
     False),
    ("shuffle py010n,py050n given age,hsize", Shuffle("py010n,py050n", given="age,hsize"),
     apply_shuffle, verify_shuffle, False),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = load_dataset("eusilc").data
    for column in ("age", "hsize"):
        table[column] = table[column].astype(float)
    print(f"eusilc: {len(table)} rows; best of {args.repeat} (first call warms numba)")
    print("| step | apply (s) | verify (s) | holds |")
    print("|---|---|---|---|")
    for label, options, apply, verify, needs_details in CASES:
        apply(table, options, np.random.default_rng(0))  # warm-up (numba compile)
        best = float("inf")
        for seed in range(args.repeat):
            start = time.perf_counter()
            out, details = apply(table, options, np.random.default_rng(seed))
            best = min(best, time.perf_counter() - start)
        start = time.perf_counter()
        extra = {"details": details} if needs_details else {}
        report = verify(options, table, out, **extra)
        checked = time.perf_counter() - start
        print(f"| {label} | {best:.4f} | {checked:.4f} | {report['holds']} |")


if __name__ == "__main__":
    main()

"""The attacks (singling out, linkability, inference) against a release's time at 10^5 rows
(issue "What the release board asks", Measure: the attacks must not more than double a
release's time at 10^5 rows, the attacked records sampled).

    python benchmarks/bench_attacks.py [--rows 100000] [--attacks 2000] [--runs 3]

A synthetic survey (age, income, height, weight as numbers; region as a code; a secret
code): ``--control`` of the rows held out with :func:`hold_out`, the rest released by
``microagg.anonymize(kept, quasi_identifiers=[age, income, height, weight], k=5)``; then
:func:`attack_release` on the release (known: the four numbers and region; secret: the
code). Prints the median of ``--runs`` for each, their ratio and every attack's figures.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

import microagg
from _machine import machine
from microagg.metrics._attack_tables import AttackOptions
from microagg.metrics.attacks import attack_release, hold_out

QI = ["age", "income", "height", "weight"]


def survey(n: int, rng: np.random.Generator) -> pd.DataFrame:
    height = rng.normal(170, 10, n)
    return pd.DataFrame({
        "age": rng.integers(16, 95, n).astype(float),
        "income": rng.lognormal(10, 0.6, n).round(-1),
        "height": height.round(),
        "weight": (0.9 * (height - 100) + rng.normal(0, 8, n)).round(1),
        "region": rng.choice([f"r{i}" for i in range(9)], n),
        "secret": rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])})


def _median(fn, runs: int):  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--attacks", type=int, default=2000)
    parser.add_argument("--control", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    df = survey(args.rows, np.random.default_rng(0))
    kept, control = hold_out(df, args.control, random_state=0)
    kept, control = kept.reset_index(drop=True), control.reset_index(drop=True)
    t_rel, release = _median(lambda: microagg.anonymize(
        kept, quasi_identifiers=QI, k=5, random_state=0), args.runs)
    opts = AttackOptions(n_attacks=args.attacks)
    t_att, out = _median(lambda: attack_release(
        kept, release.data, control, secret="secret", known=[*QI, "region"], options=opts,
        random_state=0), args.runs)
    print(f"rows {args.rows}, released {len(kept)}, control {len(control)}, "
          f"attacks {args.attacks}")
    print(f"release (anonymize, mdav default, k=5): {t_rel:.2f} s")
    print(f"attacks (attack_release):             {t_att:.2f} s  "
          f"(ratio {t_att / t_rel:.2f} of the release)")
    for name in ("singling_out", "singling_out_multivariate", "linkability"):
        _line(name, out[name])
    for name, res in out["inference"].items():
        _line(f"inference {name}", res)


def _line(name: str, r: dict) -> None:  # type: ignore[type-arg]
    print(f"  {name:28s} n={r['n_attacks']:5d} success {r['success']:.3f} "
          f"control {r['control']:.3f} baseline {r['baseline']:.3f} risk {r['risk']:.3f} "
          f"[{r['risk_ci'][0]:.3f}, {r['risk_ci'][1]:.3f}]")


if __name__ == "__main__":
    main()

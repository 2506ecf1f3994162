"""One ``anonymize`` call on 50,000 x 10 standard Gaussian records (seed 0), exact MDAV, k = 5,
as a whole process: time it from outside (``/usr/bin/time -v python
benchmarks/bench_measure_stage.py``), paired with the same script under another checkout.

Prints the release's stage timings (partition, measure, total) and the metrics that the
measure stage computes, so that two checkouts can be compared figure by figure.
``--repeat N`` runs the same call N times in the one process: the first is the fresh
process's release (modules imported and kernels loaded during it), the others the warm
process's.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from microagg import anonymize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="calls in this one process")
    repeat = parser.parse_args().repeat
    X = np.random.default_rng(0).standard_normal((50_000, 10))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(10)])
    for call in range(repeat):
        print("fresh" if call == 0 else "warm ", end="  ")
        _one(df)


def _one(df: pd.DataFrame) -> None:
    release = anonymize(df, quasi_identifiers=list(df.columns), k=5, method="mdav",
                        random_state=0)
    stages = release.timings
    print(f"partition {stages['partition']:.3f} s  measure {stages['measure']:.3f} s  "
          f"total {stages['total']:.3f} s  measure/partition "
          f"{stages['measure'] / stages['partition']:.3f}")
    print(f"information_loss {release.metrics['information_loss']!r}  "
          f"dld_risk {release.metrics['dld_risk']!r}  il1s {release.metrics['il1s']!r}")


if __name__ == "__main__":
    main()

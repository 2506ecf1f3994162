"""The attacks of ``microagg risk``: the file attacked as if it were published unchanged,
the baseline a release of it must lower. The release's own attacks
(:func:`microagg._pipeline.attack_step.attack_figures`: the keys known, each sensitive
column a secret, 2,000 attacked records), against the leave-one-out control or the
records of ``--control``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["RiskAttacks", "raw_file_attacks"]


@dataclass(frozen=True, eq=False)  # holds a DataFrame: identity, not value, equality
class RiskAttacks:
    """The attacks ``microagg risk`` was asked for: ``secrets`` (the sensitive columns),
    ``control`` (held-out original records; ``None``: leave-one-out), ``seed`` (the seed
    the attacks' stream is drawn from, as a release's; ``None``: drawn), ``dates`` (date
    keys, left out as the release leaves them out)."""

    secrets: Sequence[str] = ()
    control: pd.DataFrame | None = None
    seed: int | None = None
    dates: Collection[str] = field(default_factory=tuple)


def raw_file_attacks(table: pd.DataFrame, keys: Sequence[str], asked: RiskAttacks
                     ) -> dict[str, Any] | None:
    """The attacks on ``table`` published unchanged: ``metrics["attacks"]``'s layout, with
    ``seed`` (the seed the attacks' ``random_state`` is drawn from: a release made with it
    attacks its output with the same ``random_state``); ``None`` as
    :func:`~microagg._pipeline.attack_step.attack_figures` says (no key to know, fewer than
    2 records).

    Raises
    ------
    ValueError
        A control that is not records of ``table`` held out
        (:func:`~microagg.audit.attacks_review.check_control`: other columns, no rows, more
        rows than ``table``), naming ``--control``.

    References
    ----------
    Giomi et al. (2023), "A Unified Framework for Quantifying Privacy Risk in Synthetic
    Data", PoPETs 2023(2) (anonymeter's three attacks).
    """
    import numpy as np

    from microagg._pipeline.attack_step import attack_figures, attack_seed
    from microagg.audit.attacks_review import check_control

    if asked.control is not None:
        check_control(table, asked.control, parameter="--control")
    seed = asked.seed if asked.seed is not None else int(
        np.random.default_rng().integers(2**31))
    result = attack_figures(table, table, asked.control, quasi_identifiers=list(keys),
                            sensitive=list(asked.secrets), dates=asked.dates,
                            random_state=attack_seed(seed))
    if result is not None:
        result["seed"] = seed
    return result

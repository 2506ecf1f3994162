"""The attacks of a review (``microagg report --attacks [--control C]``): singling out,
linkability and inference, the release's own (:func:`microagg._pipeline.attack_step.
attack_figures`), tried on the published table against a control set held out before the
release was made, or without one against the leave-one-out control, put in the review's
metrics as ``metrics["attacks"]``.

The intruder knows the quasi-identifiers (the known columns); each sensitive column is a
secret the inference attack guesses. pandas is loaded by the caller's tables only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .._pipeline.result import Release

__all__ = ["check_control", "with_attacks"]


def check_control(original: pd.DataFrame, control: pd.DataFrame, *,
                  parameter: str = "control") -> None:
    """Refuse a control set that is not original records held out of the same file: other
    columns than the original's, no rows, or more rows than the original.

    Raises
    ------
    ValueError
        Naming the columns only one of the two tables has, or the row counts.
    """
    only_original = [str(c) for c in original.columns if c not in control.columns]
    only_control = [str(c) for c in control.columns if c not in original.columns]
    if only_original or only_control:
        raise ValueError(
            f"The {parameter!r} table must have the original's columns (it holds original "
            f"records held out before the release): "
            + "; ".join(part for part in (
                f"missing {only_original}" if only_original else "",
                f"not in the original {only_control}" if only_control else "") if part)
            + ".")
    if not 1 <= len(control) <= len(original):
        raise ValueError(f"The {parameter!r} table must hold 1 to {len(original):,} rows (at "
                         f"most the original's, which holds the released records); got "
                         f"{len(control):,}. Hold it out first: "
                         "microagg.metrics.attacks.hold_out(df, 0.2).")


def with_attacks(release: Release, original: pd.DataFrame, control: pd.DataFrame | None, *,
                 quasi_identifiers: Sequence[str], sensitive: Sequence[str] = (),
                 dates: Collection[str] = (), random_state: int | None = None) -> Release:
    """``release`` with ``metrics["attacks"]``: the release's own attacks
    (:func:`~microagg._pipeline.attack_step.attack_figures`: the same columns known, the
    same sample of attacked records, the same layout) on ``original`` (the records the
    release was made from, row for row) and the published table, each sensitive column a
    secret.

    Parameters
    ----------
    release : Release
        An assessed release (:func:`~microagg.audit.assess.assess_release`); its ``data`` is
        the published table.
    original : pandas.DataFrame
    control : pandas.DataFrame or None
        Original records held out before the release (the original's columns, 1 to
        ``len(original)`` rows); ``None``: the leave-one-out control, as a release without
        one.
    quasi_identifiers, sensitive : sequence of str
    dates : collection of str
        Date quasi-identifiers, not attacked (as the release leaves them out).
    random_state : int >= 0, default=None
        The attacks' seed (a release's is :func:`~microagg._pipeline.attack_step.attack_seed`
        of its seed); ``None``: drawn. Recorded in ``metrics["attacks"]["random_state"]``.

    Returns
    -------
    Release
        Unchanged when nothing can be attacked (no known column, or the two tables do not
        hold the same number of records).

    References
    ----------
    Giomi et al. (2023), "A Unified Framework for Quantifying Privacy Risk in Synthetic
    Data", PoPETs 2023(2) (anonymeter's three attacks).
    """
    from .._pipeline.attack_step import attack_figures

    if control is not None:
        check_control(original, control)
    if random_state is None:
        random_state = int(np.random.default_rng().integers(2**31))
    result = attack_figures(original, release.data, control,
                            quasi_identifiers=list(quasi_identifiers), sensitive=sensitive,
                            dates=dates, random_state=int(random_state))
    if result is None:
        return release
    metrics: dict[str, Any] = {**release.metrics, "attacks": result}
    return dataclasses.replace(release, metrics=metrics)

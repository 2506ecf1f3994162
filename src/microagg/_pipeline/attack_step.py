"""The attacks every in-memory release is tried with (``metrics["attacks"]``): singling out,
linkability and the inference of each sensitive column
(:func:`microagg.metrics.attacks.attack_release`, anonymeter's three attacks, Giomi et al.
2023), on a sample of the attacked records, unless the request opts out (``attacks=False``,
``--no-attacks``).

The intruder knows the quasi-identifiers; each sensitive column is a secret. A release of
every record has no held-out records to compare with: each attack is then judged against
itself with the attacked person's own released record left out (the leave-one-out control,
:data:`~microagg.metrics.attacks.LEAVE_ONE_OUT`, whose module docstring says why this and
not random guessing, and its limit); with ``control=`` (``--control FILE``: original records
held out before the release) against those, as anonymeter does. The attacks draw from their
own stream of the release's seed (:func:`attack_seed`): the masking is the same with or
without them, and the seed they used is recorded.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .request import Request

__all__ = ["ATTACK_ROWS", "AttackRequest", "attack_figures", "attack_request", "attack_seed",
           "release_attacks", "sentence"]

ATTACK_ROWS = 2_000
"""Persons attacked by linkability and each inference, and the rows of the file the
singling-out predicates are built and tried on: a rate's 95 % interval is then at most
+-0.022 wide, and the attacks cost about the same at 10^5 rows as at 10^4 (the nearest
neighbours are searched among every released record with a k-d tree)."""

_STREAM = 0x61747461  # "atta": the attacks' stream of the release's seed


@dataclass(frozen=True, eq=False)  # holds a DataFrame: identity, not value, equality
class AttackRequest:
    """The attacks a request asks for: ``control`` original records held out before the
    release (``None``: the leave-one-out control)."""

    control: pd.DataFrame | None = None


def attack_request(df: pd.DataFrame, attacks: Any = True, control: Any = None
                   ) -> AttackRequest | None:
    """The checked ``attacks`` / ``control`` options of :func:`microagg.anonymize`:
    ``None`` when the release opts out.

    Raises
    ------
    ValueError
        ``attacks`` not a bool, a ``control`` with ``attacks=False``, or a control that is
        not records of ``df`` held out (:func:`~microagg.audit.attacks_review.check_control`:
        other columns, no rows, more rows than ``df``).
    """
    import pandas as pd

    from ..audit.attacks_review import check_control

    if not isinstance(attacks, (bool, np.bool_)):
        raise ValueError(f"The 'attacks' parameter of anonymize must be True or False. Got "
                         f"{attacks!r} instead.")
    if not attacks:
        if control is not None:
            raise ValueError("The 'control' parameter of anonymize is what the attacks "
                             "compare with; attacks=False runs none: drop control, or the "
                             "opt-out.")
        return None
    if control is None:
        return AttackRequest()
    if not isinstance(control, pd.DataFrame):
        raise ValueError(f"The 'control' parameter of anonymize must be a pandas DataFrame "
                         f"of the original's columns. Got {type(control).__name__} instead.")
    check_control(df, control)
    return AttackRequest(control=control)


def attack_seed(seed: int) -> int:
    """The attacks' seed: their own stream of the release's ``seed`` (the masking draws the
    same with or without the attacks)."""
    state = np.random.SeedSequence([int(seed), _STREAM]).generate_state(1, dtype=np.uint64)
    return int(state[0] >> 1)


def sentence(compared_with: str) -> str:
    """What the attacks were compared with, in one sentence (the reports' and the JSON's)."""
    from ..metrics.attacks import LEAVE_ONE_OUT

    if compared_with == LEAVE_ONE_OUT:
        return ("No held-out records: each attack is compared with the same attack on the "
                "same person with her own released record left out, which counts what the "
                "release teaches about everyone; hold out a control set (--control) for "
                "anonymeter's figure.")
    return ("Each attack is compared with the same attack on original records held out "
            "before the release (anonymeter's control).")


def release_attacks(request: Request, attacked: pd.DataFrame, seed: int
                    ) -> dict[str, Any] | None:
    """``metrics["attacks"]`` of a release: ``attacked`` is the published table, row ``i``
    the release of ``request.data`` row ``i`` (a shuffled release before its rows are
    shuffled: the attacks read no row order). ``None`` when the request opts out, or as
    :func:`attack_figures` says."""
    asked = getattr(request, "attacks", None)
    if asked is None:
        return None
    return attack_figures(request.data, attacked, asked.control,
                          quasi_identifiers=request.quasi_identifiers,
                          sensitive=request.sensitive, dates=request.dates,
                          random_state=attack_seed(seed))


def attack_figures(original: pd.DataFrame, attacked: pd.DataFrame,
                   control: pd.DataFrame | None, *, quasi_identifiers: Sequence[str],
                   sensitive: Sequence[str] = (), dates: Collection[str] = (),
                   random_state: int) -> dict[str, Any] | None:
    """The attacks' figures as every face reports them (``metrics["attacks"]`` of a release
    and of a review, ``microagg risk``'s ``attacks``): one call, one layout.

    The intruder knows the quasi-identifiers published as a number or a code (``dates``
    are left out: published as dates, they are compared with their day numbers nowhere);
    each sensitive column in ``attacked`` is a secret.

    Parameters
    ----------
    original : pandas.DataFrame
        The records ``attacked`` was made from, row for row (``attacked`` itself for the
        raw file's baseline: the file attacked as if published unchanged).
    attacked : pandas.DataFrame
        The published table.
    control : pandas.DataFrame or None
        Original records held out before the release (checked by the caller,
        :func:`~microagg.audit.attacks_review.check_control`); ``None``: the leave-one-out
        control.
    quasi_identifiers, sensitive : sequence of str
    dates : collection of str
        Date columns, left out of the known columns.
    random_state : int >= 0
        The attacks' own seed (a release's: :func:`attack_seed` of its seed), recorded.

    Returns
    -------
    dict or None
        :func:`~microagg.metrics.attacks.attack_release`'s figures on :data:`ATTACK_ROWS`
        attacked records, with ``random_state``, ``known``, ``n_attacked`` and
        ``sentence``; ``None`` when no quasi-identifier is known, the tables do not hold
        the same records, or there are fewer than 2.

    References
    ----------
    Giomi et al. (2023), "A Unified Framework for Quantifying Privacy Risk in Synthetic
    Data", PoPETs 2023(2) (anonymeter's three attacks).
    """
    from ..metrics._attack_tables import AttackOptions, attack_release

    if len(attacked) != len(original) or len(original) < 2:
        return None
    known = [c for c in quasi_identifiers if c in attacked.columns and c not in dates]
    secrets = [c for c in sensitive if c in attacked.columns and c not in known]
    if not known:
        return None
    options = AttackOptions(n_attacks=ATTACK_ROWS, singling_out_rows=ATTACK_ROWS)
    result = attack_release(original, attacked, control, secret=secrets or None,
                            known=known, options=options, random_state=random_state)
    result.update(random_state=int(random_state), known=known,
                  n_attacked=min(ATTACK_ROWS, len(original)),
                  sentence=sentence(result["compared_with"]))
    return result

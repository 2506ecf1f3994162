"""Attacks tried on a release: singling out, linkability and attribute inference, each
judged against a control set of original records held out of the release (the anonymeter
methodology of Giomi et al. 2023) or, when every record was released, against the same
attack with the person's own released record left out (:data:`LEAVE_ONE_OUT`).

Without held-out records there is nobody the release was not made from, so no control in
anonymeter's sense. Comparing with random guessing only would count what the release
teaches about everyone (a rare value of a column, a pattern shared by many) as a risk to the
people in it, and an independent sample of the same population would "beat" it. The
leave-one-out control asks instead what the same attack achieves on a person once her own
released record is taken out of the release, every other record kept: the part of the
success owed to her being in the file is the risk, the part the others' records give away
about her is what the release teaches about anyone. Its limit: the other records were made
with her in the file (a group mean includes her values), so the control is at least as
successful as one of truly held-out persons would be, and the risk can read lower than
anonymeter's; hold out a control set (:func:`hold_out`) for anonymeter's figure.

The numeric core works on :class:`AttackTables` (float arrays, categorical columns coded as
numbers); :func:`attack_release` builds them from tables (pandas is imported only there)
and :func:`hold_out` splits a file into the rows to release and the control rows BEFORE the
release is made.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._base.validation import RandomState, check_random_state
from . import _attack_predicates as _pred
from ._attack_tables import GowerSpace, attack_release

__all__ = ["HELD_OUT", "LEAVE_ONE_OUT", "AttackResult", "AttackTables", "attack_release",
           "hold_out", "inference", "linkability", "risk_from_rates", "singling_out", "wilson"]

HELD_OUT = "held-out records"
"""``AttackResult.compared_with`` of an attack judged against a control set."""
LEAVE_ONE_OUT = "leave-one-out"
"""``AttackResult.compared_with`` of an attack judged, without held-out records, against the
same attack on each person with her own released record left out of the release."""


@dataclass(frozen=True)
class AttackTables:
    """The three tables an attack reads, on the same columns in the same order.

    ``original`` are the records the release was made from (row ``i`` need not be row ``i``
    of ``release``), ``control`` original records held out of the release, ``categorical``
    which columns hold codes (compared for equality only). Cells may be NaN (missing or
    suppressed); a NaN matches no predicate and is at distance 1 from every value. A
    ``control`` of no rows asks for the leave-one-out control (:data:`LEAVE_ONE_OUT`):
    ``release`` row ``i`` must then be the release of ``original`` row ``i``.
    """

    original: NDArray[np.float64]
    release: NDArray[np.float64]
    control: NDArray[np.float64]
    categorical: NDArray[np.bool_]
    columns: tuple[str, ...]


@dataclass(frozen=True)
class AttackResult:
    """One attack's outcome: success rates (Wilson centres, with their ``confidence``
    intervals) of the main attack (on the release's own originals), the control attack (the
    same guesses on held-out originals, or with each person's own record left out:
    ``compared_with``) and the baseline (random guesses), and the risk
    ``(main - control) / (1 - control)`` with its interval, clipped to [0, 1]."""

    attack: str
    n_attacks: int
    success: float
    success_ci: tuple[float, float]
    control: float
    control_ci: tuple[float, float]
    baseline: float
    baseline_ci: tuple[float, float]
    risk: float
    risk_ci: tuple[float, float]
    confidence: float
    compared_with: str = HELD_OUT

    @property
    def beats_baseline(self) -> bool:
        """Whether the main attack does better than random guessing (its interval lies
        above the baseline's); when it does not, the attack is too weak to say anything."""
        return self.success_ci[0] > self.baseline_ci[1]

    def as_dict(self) -> dict[str, Any]:
        """Python floats and lists, for a release's JSON."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        out["beats_baseline"] = self.beats_baseline
        return out


def wilson(n_success: int, n_total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score estimate of a success rate: its centre and half-width.

    References
    ----------
    Wilson, E. B. "Probable inference, the law of succession, and statistical inference."
    JASA 22 (1927), 209-212; used for every rate by Giomi et al. (2023), section 4.

    Examples
    --------
    >>> centre, half = wilson(50, 100)
    >>> round(centre, 3), round(half, 3)
    (0.5, 0.096)
    """
    if n_total <= 0:
        return 0.0, 0.0
    z = NormalDist().inv_cdf(0.5 * (1.0 + confidence))
    rate = n_success / n_total
    shrink = 1.0 + z * z / n_total
    centre = (rate + z * z / (2 * n_total)) / shrink
    half = z / shrink * math.sqrt(rate * (1 - rate) / n_total + z * z / (4 * n_total ** 2))
    return centre, half


def risk_from_rates(main: tuple[float, float],
                    control: tuple[float, float]) -> tuple[float, float]:
    """The risk ``(main - control) / (1 - control)`` and its error, from the (centre,
    half-width) of both rates by first-order error propagation (Giomi et al. 2023, eq. 2).

    Examples
    --------
    >>> r, err = risk_from_rates((0.6, 0.0), (0.2, 0.0))
    >>> round(r, 3), err
    (0.5, 0.0)
    """
    m, dm = main
    c, dc = control
    denom = 1.0 - c
    risk = (m - c) / denom
    error = math.hypot(dm / denom, dc * (m - 1.0) / denom ** 2)
    return risk, error


def _clip(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


def _result(attack: str, n_main: int, n_ctl: int, n_base: int, n_total: int,
            confidence: float, compared_with: str) -> AttackResult:
    rates = [wilson(n, n_total, confidence) for n in (n_main, n_ctl, n_base)]
    (m, dm), (c, dc), (b, db) = rates
    risk, err = risk_from_rates(rates[0], rates[1])
    return AttackResult(
        attack=attack, n_attacks=n_total,
        success=float(m), success_ci=(_clip(m - dm), _clip(m + dm)),
        control=float(c), control_ci=(_clip(c - dc), _clip(c + dc)),
        baseline=float(b), baseline_ci=(_clip(b - db), _clip(b + db)),
        risk=_clip(risk), risk_ci=(_clip(risk - err), _clip(risk + err)),
        confidence=float(confidence), compared_with=compared_with)


def _check_count(value: Any, *, name: str, caller: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"The {name!r} parameter of {caller} must be an int >= {low}. "
                         f"Got {value!r} instead.")
    return int(value)


def _check_columns(cols: Any, p: int, *, name: str, caller: str) -> NDArray[np.intp]:
    out = np.asarray(cols, dtype=np.intp).ravel()
    if out.size == 0 or (out < 0).any() or (out >= p).any():
        raise ValueError(f"The {name!r} parameter of {caller} must name at least one of the "
                         f"columns 0..{p - 1}. Got {list(np.asarray(cols).ravel())} instead.")
    return out


def _sample(n: int, size: int, rng: np.random.Generator) -> NDArray[np.intp]:
    return np.sort(rng.choice(n, size=min(size, n), replace=False)).astype(np.intp)


def singling_out(tables: AttackTables, *, n_attacks: int = 2000, n_columns: int = 1,
                 max_rows: int = 5000, confidence: float = 0.95,
                 random_state: RandomState = None) -> AttackResult:
    """Singling out: predicates that single out one record of the release, checked on the
    originals and on the control set.

    The intruder writes predicates ("the only person aged 93 with income <= 1200") that hold
    for exactly one record of the release: with ``n_columns=1`` every value or extreme held
    by one record only; with more, conjunctions on ``n_columns`` random columns built from a
    random record's values (``==`` for codes, ``<=`` or ``>=`` for numbers). A predicate
    succeeds when it matches exactly one record of the table it is tried on. So that the
    main and the control attack are judged on files of the same size (a predicate singles
    out more easily in a smaller file), the attack works on the release records of a random
    sample of ``m = min(len(control), max_rows)`` originals and is tried on those originals
    (main) and on ``m`` control records; the baseline tries predicates of independently
    drawn values on the same originals. The rates are those of an intruder facing a file of
    ``m`` records. Without control records (``m = min(len(original), max_rows)``), the
    control tries each predicate on the ``m`` originals less the one whose released record
    it was built from: it succeeds when it singles out somebody else.

    Parameters
    ----------
    tables : AttackTables
        ``release`` row ``i`` must be the release of ``original`` row ``i`` here (a plan's
        release is).
    n_attacks : int, default=2000
        Predicates tried (fewer when fewer single anyone out).
    n_columns : int, default=1
        Conditions per predicate; 1 is the univariate attack.
    max_rows : int, default=5000
        Largest file the predicates are built and tried on (the time grows with it).
    confidence : float, default=0.95
        Level of every interval.
    random_state : None, int or numpy.random.Generator
        Draws the sample, the records and the columns.

    Returns
    -------
    AttackResult

    References
    ----------
    Giomi, M., Boenisch, F., Wehmeyer, C., Tasnádi, B. "A Unified Framework for Quantifying
    Privacy Risk in Synthetic Data." PoPETs 2023(2), 312-328, section 3.1.
    """
    caller = "singling_out"
    n_attacks = _check_count(n_attacks, name="n_attacks", caller=caller)
    p = tables.release.shape[1]
    n_columns = _check_count(n_columns, name="n_columns", caller=caller)
    if n_columns > p:
        raise ValueError(f"The 'n_columns' parameter of {caller} must be in 1..{p} (the "
                         f"columns attacked). Got {n_columns} instead.")
    if tables.release.shape[0] != tables.original.shape[0]:
        raise ValueError(f"{caller}: the release has {tables.release.shape[0]} rows and the "
                         f"original {tables.original.shape[0]}; they must be the same records.")
    max_rows = _check_count(max_rows, name="max_rows", caller=caller)
    rng = check_random_state(random_state)
    held_out = tables.control.shape[0] > 0
    m = min(tables.control.shape[0] if held_out else max_rows, tables.original.shape[0],
            max_rows)
    rows = _sample(tables.original.shape[0], m, rng)
    release, original = tables.release[rows], tables.original[rows]
    control = tables.control[_sample(tables.control.shape[0], m, rng)] if held_out else None
    if n_columns == 1:
        preds = _pred.univariate(release, tables.categorical)
        if len(preds) > n_attacks:
            preds = preds.take(_sample(len(preds), n_attacks, rng))
    else:
        preds = _pred.multivariate(release, tables.categorical, n_attacks, n_columns, rng)
    n = len(preds)
    base = _pred.random_predicates(release, tables.categorical, max(n, 1), n_columns, rng)
    counted = _pred.sort_columns(original)
    on_original = _pred.count_matches(counted, preds, at_most=3)  # 1, 2 or more
    n_main = int((on_original == 1).sum())
    if control is not None:
        n_ctl = int((_pred.count_matches(control, preds, at_most=2) == 1).sum())
    else:  # the originals less the person the predicate was built from
        source = original[_pred.first_matches(release, preds)]
        n_ctl = int((on_original - _pred.holds_on(source, preds) == 1).sum())
    n_base = int((_pred.count_matches(counted, base.take(np.arange(n)), at_most=2) == 1).sum())
    name = "singling out" + ("" if n_columns == 1 else f" ({n_columns} columns)")
    return _result(name, n_main, n_ctl, n_base, n, confidence,
                   HELD_OUT if control is not None else LEAVE_ONE_OUT)


def _neighbours(space: GowerSpace, targets: NDArray[np.float64], n_neighbors: int,
                own: NDArray[np.intp] | None = None) -> NDArray[np.intp]:
    """The ``n_neighbors`` release records nearest each target (city-block distance in the
    Gower ``space``, its k-d tree); with ``own``, target ``i``'s own record ``own[i]`` is
    left out (one more neighbour is asked for and hers dropped)."""
    tree = space.tree()
    extra = 0 if own is None else 1
    ask = min(n_neighbors + extra, tree.n)
    _, found = tree.query(space.embed(targets), k=ask, p=1)
    found = np.asarray(found, dtype=np.intp).reshape(len(targets), ask)
    if own is None:
        return found
    keep = found != own[:, None]
    keep[keep.all(axis=1), -1] = False   # her record was not among them: drop the farthest
    return found[keep].reshape(len(targets), ask - 1)


def _linked(spaces: tuple[GowerSpace, GowerSpace], targets: NDArray[np.float64],
            n_neighbors: int, own: NDArray[np.intp] | None = None) -> int:
    left = _neighbours(spaces[0], targets, n_neighbors, own)
    right = _neighbours(spaces[1], targets, n_neighbors, own)
    return int((left[:, :, None] == right[:, None, :]).any(axis=(1, 2)).sum())


def _targets(tables: AttackTables, n_attacks: int, rng: np.random.Generator
             ) -> tuple[NDArray[np.intp], NDArray[np.float64] | None]:
    """The originals attacked (their rows) and the control records (``None`` without:
    the same persons, their own record left out)."""
    held_out = tables.control.shape[0] > 0
    if not held_out and tables.release.shape[0] != tables.original.shape[0]:
        raise ValueError(f"Without control records the release ({tables.release.shape[0]} "
                         f"rows) must be the original's records ({tables.original.shape[0]} "
                         "rows), row for row: each person's own record is left out.")
    n = min(n_attacks, tables.original.shape[0],
            tables.control.shape[0] if held_out else n_attacks)
    rows = _sample(tables.original.shape[0], n, rng)
    return rows, tables.control[_sample(tables.control.shape[0], n, rng)] if held_out else None


def linkability(tables: AttackTables, columns_a: Any, columns_b: Any, *,
                n_attacks: int = 2000, n_neighbors: int = 1, confidence: float = 0.95,
                random_state: RandomState = None) -> AttackResult:
    """Linkability: an intruder holding two disjoint sets of columns of some persons links
    them through the release.

    For each attacked person the intruder looks up the ``n_neighbors`` release records
    nearest (Gower distance) to what one source says (``columns_a``) and those nearest to
    what the other says (``columns_b``); the two pieces are linked when the lists share a
    record. The main attack is on originals that went into the release, the control on
    held-out originals (without: on the same persons, their own released record left out),
    the baseline draws both lists at random. A link counts when the person's own two pieces
    meet; wrong links between different persons are not counted.

    Parameters
    ----------
    tables : AttackTables
    columns_a, columns_b : sequence of int
        Positions of the columns each source holds; they must not overlap.
    n_attacks : int, default=2000
        Persons attacked, from the originals and from the control set each.
    n_neighbors : int, default=1
        Records each source points at.
    confidence : float, default=0.95
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    AttackResult

    References
    ----------
    Giomi et al. (2023), section 3.2.
    """
    caller = "linkability"
    p = tables.release.shape[1]
    a = _check_columns(columns_a, p, name="columns_a", caller=caller)
    b = _check_columns(columns_b, p, name="columns_b", caller=caller)
    if np.intersect1d(a, b).size:
        raise ValueError(f"The 'columns_a' and 'columns_b' parameters of {caller} must not "
                         f"overlap. Both hold {np.intersect1d(a, b).tolist()}.")
    n_attacks = _check_count(n_attacks, name="n_attacks", caller=caller)
    n_rel = tables.release.shape[0]
    n_neighbors = _check_count(n_neighbors, name="n_neighbors", caller=caller)
    if n_neighbors > n_rel:
        raise ValueError(f"The 'n_neighbors' parameter of {caller} must be in 1..{n_rel} "
                         f"(the release's rows). Got {n_neighbors} instead.")
    rng = check_random_state(random_state)
    rows, ctl = _targets(tables, n_attacks, rng)
    n = rows.size
    main = tables.original[rows]
    spaces = GowerSpace(tables, a), GowerSpace(tables, b)  # each tree built once
    n_main = _linked(spaces, main, n_neighbors)
    n_ctl = (_linked(spaces, ctl, n_neighbors) if ctl is not None
             else _linked(spaces, main, n_neighbors, own=rows))
    left, right = (rng.choice(n_rel, size=(n, n_neighbors)) for _ in range(2))
    n_base = int((left[:, :, None] == right[:, None, :]).any(axis=(1, 2)).sum())
    return _result("linkability", n_main, n_ctl, n_base, n, confidence,
                   HELD_OUT if ctl is not None else LEAVE_ONE_OUT)


def _correct(guess: NDArray[np.float64], truth: NDArray[np.float64], categorical: bool,
             tolerance: float) -> int:
    if categorical:
        return int((guess == truth).sum())
    return int((np.abs(guess - truth) <= tolerance * np.abs(truth)).sum())


def inference(tables: AttackTables, known: Any, secret: int, *, n_attacks: int = 2000,
              tolerance: float = 0.05, confidence: float = 0.95,
              random_state: RandomState = None) -> AttackResult:
    """Attribute inference: the secret column guessed from the known columns as the secret
    of the nearest release record (Gower distance on the known columns).

    A guess is right when it equals the secret (a coded column) or lies within
    ``tolerance`` times the secret's magnitude (a number). The main attack guesses the
    secrets of originals that went into the release, the control those of held-out
    originals (what the release teaches about anyone, the part that is not a privacy
    risk; without held-out records: the same persons' secrets guessed with their own
    released record left out), the baseline guesses the secret of a random release record.

    Parameters
    ----------
    tables : AttackTables
    known : sequence of int
        Positions of the columns the intruder knows.
    secret : int
        Position of the column guessed; not among ``known``.
    n_attacks : int, default=2000
    tolerance : float, default=0.05
        Relative error accepted for a numeric secret, in [0, 1].
    confidence : float, default=0.95
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    AttackResult

    References
    ----------
    Giomi et al. (2023), section 3.3.
    """
    caller = "inference"
    p = tables.release.shape[1]
    cols = _check_columns(known, p, name="known", caller=caller)
    if isinstance(secret, bool) or not isinstance(secret, numbers.Integral) \
            or not 0 <= secret < p or secret in cols:
        raise ValueError(f"The 'secret' parameter of {caller} must be one of the columns "
                         f"0..{p - 1} not in known={cols.tolist()}. Got {secret!r} instead.")
    if not (isinstance(tolerance, numbers.Real) and 0.0 <= tolerance <= 1.0):
        raise ValueError(f"The 'tolerance' parameter of {caller} must be a float in [0, 1]. "
                         f"Got {tolerance!r} instead.")
    n_attacks = _check_count(n_attacks, name="n_attacks", caller=caller)
    rng = check_random_state(random_state)
    rows, ctl = _targets(tables, n_attacks, rng)
    n = rows.size
    main = tables.original[rows]
    released = tables.release[:, secret]
    code = bool(tables.categorical[secret])
    counts = []
    space = GowerSpace(tables, cols)
    for targets, own in ((main, None), (main, rows) if ctl is None else (ctl, None)):
        guess = released[_neighbours(space, targets, 1, own)[:, 0]]
        counts.append(_correct(guess, targets[:, secret], code, float(tolerance)))
    base = released[rng.integers(0, released.size, size=n)]
    counts.append(_correct(base, main[:, secret], code, float(tolerance)))
    return _result(f"inference of {tables.columns[secret]}", *counts, n, confidence,
                   LEAVE_ONE_OUT if ctl is None else HELD_OUT)


def hold_out(table: Any, fraction: float, *, random_state: RandomState = None) -> tuple[Any, Any]:
    """Split a table into the rows to release and the control rows, at random.

    Call it BEFORE making the release: the control rows must never reach it. Both parts
    keep the table's row order (and a DataFrame's index).

    Parameters
    ----------
    table : pandas.DataFrame or ndarray
    fraction : float
        Share of rows held out, in (0, 0.5]: the control set is never larger than the
        release's records.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    (released_rows, control_rows)

    Examples
    --------
    >>> import numpy as np
    >>> kept, control = hold_out(np.arange(10).reshape(10, 1), 0.2, random_state=0)
    >>> kept.shape, control.shape
    ((8, 1), (2, 1))
    """
    n = len(table)
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) \
            or not 0.0 < fraction <= 0.5:
        raise ValueError(f"The 'fraction' parameter of hold_out must be a float in (0, 0.5]. "
                         f"Got {fraction!r} instead.")
    n_control = round(fraction * n)
    if n_control < 1:
        raise ValueError(f"hold_out: fraction={fraction} of n_rows={n} holds out no row; "
                         f"use a fraction >= {1 / max(n, 1):.3g}.")
    rng = check_random_state(random_state)
    control = np.zeros(n, dtype=bool)
    control[rng.choice(n, size=n_control, replace=False)] = True
    take = table.iloc if hasattr(table, "iloc") else table
    return take[~control], take[control]

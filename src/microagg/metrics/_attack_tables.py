"""The attacks of :mod:`.attacks` on tables: columns coded, checked and attacked in one
call; the Gower embedding the nearest-neighbour attacks search in. pandas is imported only
when a table is coded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._base.validation import RandomState, check_random_state

if TYPE_CHECKING:
    from .attacks import AttackTables

__all__ = ["AttackOptions", "GowerSpace", "attack_release", "encode_tables", "gower_embedding"]


@dataclass(frozen=True)
class AttackOptions:
    """How hard the attacks try: ``n_attacks`` records (or predicates) per attack,
    ``n_columns`` conditions of the multivariate singling-out predicates, ``n_neighbors``
    records each linkage source points at, ``tolerance`` the relative error a numeric
    inference may make, ``singling_out_rows`` the largest file the singling-out predicates
    are built and tried on, ``confidence`` the level of every interval."""

    n_attacks: int = 2000
    n_columns: int = 3
    singling_out_rows: int = 5000
    n_neighbors: int = 1
    tolerance: float = 0.05
    confidence: float = 0.95


class GowerSpace:
    """Columns ``cols`` of the attack tables placed so that the city-block distance is
    Gower's sum: a number divided by its range in the originals and the control (a missing
    number at 0 with an indicator: 1 to 2 away from any present value), a code as one-hot
    halves (a mismatch costs 1). The ranges and the codes are read once; :meth:`embed`
    places any rows, :meth:`tree` is the k-d tree of the release, built once.

    References
    ----------
    Gower, J. C. "A general coefficient of similarity and some of its properties."
    Biometrics 27 (1971), 857-871; the distance anonymeter's attacks search with.
    """

    def __init__(self, tables: AttackTables, cols: NDArray[np.intp]) -> None:
        self._tables = tables
        self._parts: list[tuple[int, NDArray[np.float64] | None, float, float, bool]] = []
        for j in cols:
            if tables.categorical[j]:
                seen = np.unique(np.concatenate([tables.original[:, j], tables.release[:, j],
                                                 tables.control[:, j]]))
                self._parts.append((int(j), seen, 0.0, 1.0, False))
                continue
            ref = np.concatenate([tables.original[:, j], tables.control[:, j]])
            # halves: (x/2 - low/2) / (span/2) is (x - low) / span bit for bit, and cannot
            # overflow for finite values near the float limit (1e308 - -1e308)
            low, high = 0.5 * np.nanmin(ref), 0.5 * np.nanmax(ref)
            span = high - low if high > low else 0.5
            flag = bool(np.isnan(tables.release[:, j]).any() or np.isnan(ref).any())
            self._parts.append((int(j), None, float(low), float(span), flag))
        self._tree: Any = None

    def embed(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Rows of ``X`` (the attack tables' columns) in the space."""
        parts: list[NDArray[np.float64]] = []
        for j, seen, low, span, flag in self._parts:
            column = X[:, j]
            if seen is not None:
                parts.append(0.5 * (column[:, None] == seen[None, :]))
                continue
            missing = np.isnan(column)
            parts.append(np.where(missing, 0.0, (0.5 * column - low) / span)[:, None])
            if flag:
                parts.append(missing[:, None].astype(np.float64))
        return np.ascontiguousarray(np.hstack(parts), dtype=np.float64)

    def tree(self) -> Any:
        """The release's records in a ``scipy.spatial.cKDTree`` (built on the first call)."""
        if self._tree is None:
            from scipy.spatial import cKDTree

            self._tree = cKDTree(self.embed(self._tables.release))
        return self._tree


def gower_embedding(X: NDArray[np.float64], tables: AttackTables,
                    cols: NDArray[np.intp]) -> NDArray[np.float64]:
    """Columns ``cols`` of ``X`` in :class:`GowerSpace` (city-block distance = Gower's)."""
    return GowerSpace(tables, cols).embed(X)


def _names(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _check_names(names: list[str], tables: dict[str, Any], *, parameter: str) -> None:
    problems = [f"{name!r} is not in {where}" for name in names
                for where, table in tables.items() if name not in table.columns]
    if problems:
        raise ValueError(f"The {parameter!r} parameter of attack_release names columns that "
                         f"must be in the original, the release and the control: "
                         f"{'; '.join(problems)}. Columns in all three: "
                         f"{[c for c in tables['original'].columns if all(c in t.columns for t in tables.values())]}.")


def encode_tables(original: Any, release: Any, control: Any | None,
                  columns: Sequence[str]) -> AttackTables:
    """The three DataFrames' ``columns`` as :class:`~.attacks.AttackTables`: a column
    numeric in all three stays a number (missing as NaN), any other is coded (the same
    value, the same code, in the three; a missing value is a code of its own). A value the
    release generalized ("20-29") therefore never matches an original value (25): the
    attacks do not read intervals. ``control=None``: no held-out records (a control of no
    rows, :data:`~.attacks.LEAVE_ONE_OUT`)."""
    import pandas as pd

    from .attacks import AttackTables

    if control is None:  # no held-out records: the leave-one-out control
        control = original.iloc[:0]
    frames = (original, release, control)
    out = [np.empty((len(f), len(columns)), dtype=np.float64) for f in frames]
    categorical = np.zeros(len(columns), dtype=bool)
    for j, col in enumerate(columns):
        series = [f[col] for f in frames]
        if all(pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
               for s in series):
            for arr, s in zip(out, series, strict=True):
                arr[:, j] = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64,
                                                                       na_value=np.nan)
            continue
        categorical[j] = True
        joined = pd.concat([s.astype(object) for s in series], ignore_index=True)
        codes, _ = pd.factorize(joined.astype(str).where(joined.notna(), "\0missing"))
        start = 0
        for arr in out:
            arr[:, j] = codes[start:start + arr.shape[0]]
            start += arr.shape[0]
    return AttackTables(out[0], out[1], out[2], categorical=categorical, columns=tuple(columns))


def attack_release(original: Any, release: Any, control: Any | None = None, *,
                   secret: str | Sequence[str] | None = None,
                   known: Sequence[str] | None = None,
                   link: tuple[Sequence[str], Sequence[str]] | None = None,
                   options: AttackOptions | None = None,
                   random_state: RandomState = None) -> dict[str, Any]:
    """Singling out (one and several columns), linkability and the inference of each
    ``secret`` column, tried on a release against a control set.

    Parameters
    ----------
    original : pandas.DataFrame
        The records the release was made from: the same rows in the same order.
    release : pandas.DataFrame
        The published table.
    control : pandas.DataFrame, optional
        Original records held out BEFORE the release was made (:func:`.attacks.hold_out`),
        no more rows than ``original``. ``None`` (every record released): each attack is
        judged against itself with the attacked person's own released record left out
        (:data:`~.attacks.LEAVE_ONE_OUT`, which says why and its limit).
    secret : str or sequence of str, optional
        Columns guessed by the inference attack, one attack each; none by default.
    known : sequence of str, optional
        Columns the intruder knows (singled out on, linked on, inferred from); by default
        every column in all three tables but the secret ones. Singling out reads the known
        and the secret columns.
    link : (sequence of str, sequence of str), optional
        The two sources' columns; by default ``known`` split in two halves (no
        linkability attack with fewer than two known columns).
    options : AttackOptions, optional
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    dict
        ``{"singling_out": ..., "singling_out_multivariate": ..., "linkability": ...,
        "inference": {column: ...}, "n_control": int (0 without), "compared_with": str,
        "columns": [...]}``, each attack as
        :meth:`.attacks.AttackResult.as_dict`.

    References
    ----------
    Giomi et al. (2023), "A Unified Framework for Quantifying Privacy Risk in Synthetic
    Data", PoPETs 2023(2); the anonymeter package implements the same three attacks.
    """
    from . import attacks

    opts = options or AttackOptions()
    if len(release) != len(original):
        raise ValueError(f"attack_release: the release has {len(release)} rows and the "
                         f"original {len(original)}; pass the records it was made from.")
    held_out = control is not None
    control_rows: Any = control if held_out else original.iloc[:0]
    control = control_rows
    frames = {"original": original, "release": release, "control": control}
    if held_out and not 1 <= len(control) <= len(original):
        raise ValueError(f"The 'control' parameter of attack_release must hold 1 to "
                         f"{len(original)} rows (at most the original's). Got {len(control)} "
                         "rows instead.")
    secrets = _names(secret)
    _check_names(secrets, frames, parameter="secret")
    know = _names(known) if known is not None else [
        c for c in original.columns
        if c in release.columns and c in control.columns and c not in secrets]
    _check_names(know, frames, parameter="known")
    cols = [*know, *(s for s in secrets if s not in know)]
    pair = link if link is not None else (know[: len(know) // 2], know[len(know) // 2:])
    _check_names([*pair[0], *pair[1]], frames, parameter="link")
    cols += [c for c in [*know, *pair[0], *pair[1]] if c not in cols]
    tables = encode_tables(original, release, control, cols)
    rng = check_random_state(random_state)
    where = {c: j for j, c in enumerate(cols)}
    out: dict[str, Any] = {"columns": cols, "n_control": len(control),
                           "compared_with": attacks.HELD_OUT if held_out
                           else attacks.LEAVE_ONE_OUT}
    out["singling_out"] = attacks.singling_out(
        tables, n_attacks=opts.n_attacks, n_columns=1, max_rows=opts.singling_out_rows,
        confidence=opts.confidence, random_state=rng).as_dict()
    if len(cols) > 1:
        out["singling_out_multivariate"] = attacks.singling_out(
            tables, n_attacks=opts.n_attacks, n_columns=min(opts.n_columns, len(cols)),
            max_rows=opts.singling_out_rows, confidence=opts.confidence,
            random_state=rng).as_dict()
    if pair[0] and pair[1]:
        out["linkability"] = attacks.linkability(
            tables, [where[c] for c in pair[0]], [where[c] for c in pair[1]],
            n_attacks=opts.n_attacks, n_neighbors=opts.n_neighbors,
            confidence=opts.confidence, random_state=rng).as_dict()
    if secrets and know:
        out["inference"] = {s: attacks.inference(
            tables, [where[c] for c in know if c != s], where[s], n_attacks=opts.n_attacks,
            tolerance=opts.tolerance, confidence=opts.confidence,
            random_state=rng).as_dict() for s in secrets}
    return out

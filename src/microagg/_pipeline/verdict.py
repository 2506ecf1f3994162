"""The one verdict of a release: whether it is protected, in the same words on every face.

:func:`decide` reads the checks the verifier re-derived from the published table
(:mod:`.verify`, :mod:`.unmasked`) and the identifier-like columns published on purpose, and
returns one :class:`Verdict`. Every :class:`~microagg._pipeline.result.Release` computes it
once, when it is made (so a release always carries the verdict of its own checks); the
command line, the summary JSON, the HTML report, ``microagg check``, ``microagg report`` and
the workbench print its :attr:`Verdict.headline` and nothing of their own.

"Protected" is said only when every required model (k, and l, t or epsilon when asked) is
reached, no identifier-like column is published on purpose and no published column breaks
the required k. Without a required k (a noisy release, or a file checked without ``-k``) the
status is "no k required", unless something else already argues against protection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["NOT_PROTECTED", "NO_K_REQUIRED", "PROTECTED", "Verdict",
           "breaking_columns", "decide", "failed_steps", "kept_identifiers", "number", "unmet_models"]

PROTECTED = "protected"
NOT_PROTECTED = "not protected"
NO_K_REQUIRED = "no k required"

_PREFIX = {PROTECTED: "Protected", NOT_PROTECTED: "Not protected",
           NO_K_REQUIRED: "No k was required"}


@dataclass(frozen=True)
class Verdict:
    """Whether a release is protected, and why, in plain words.

    Attributes
    ----------
    protected : bool
        True only when the status is ``"protected"``.
    status : {"protected", "not protected", "no k required"}
        The decision.
    headline : str
        One plain sentence that starts with the status ("Protected: ...", "Not protected:
        ...", "No k was required: ..."): the words every output prints.
    reasons : tuple of str
        Short phrases of what argues against protection (empty when protected).
    """

    protected: bool
    status: str
    headline: str
    reasons: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The headline's first words, before the colon ("Not protected")."""
        return _PREFIX[self.status]

    @property
    def detail(self) -> str:
        """The headline after its label and colon."""
        return self.headline[len(self.label) + 2:]

    def summary(self) -> dict[str, Any]:
        """The verdict as plain JSON values (``Release.summary()["verdict"]``)."""
        return {"protected": self.protected, "status": self.status,
                "headline": self.headline, "reasons": list(self.reasons)}


def number(value: Any) -> str:
    """A figure as plain text: thousands separators for integers, 4 significant digits.

    Examples
    --------
    >>> number(12000), number(0.123456), number(None)
    ('12,000', '0.1235', 'n/a')
    """
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}" if np.isfinite(value) else "n/a"
    return "n/a" if value is None else str(value)


def kept_identifiers(params: Mapping[str, Any]) -> tuple[str, ...]:
    """Identifier-like columns published on purpose (``params["keep"]``; absent: none)."""
    keep = params.get("keep") or ()
    return (str(keep),) if isinstance(keep, str) else tuple(str(c) for c in keep)


def breaking_columns(checks: Mapping[str, Any]) -> dict[str, Any]:
    """Published columns that break k when added to the quasi-identifiers, with the k then
    achieved (``checks["published_columns"]["columns"]``; absent or malformed: none)."""
    entry = checks.get("published_columns")
    columns = entry.get("columns") if isinstance(entry, Mapping) else None
    return {str(c): k for c, k in columns.items()} if isinstance(columns, Mapping) else {}


def _met(name: str, check: Mapping[str, Any]) -> bool | None:
    """Whether a required model was reached; ``None`` when none was required (or the entry
    is not a model with an achieved level, such as ``rounding``)."""
    if "holds" in check and "epsilon" in check:
        return bool(check["holds"])
    if "achieved" not in check or check.get("required") is None:
        return None
    required, achieved = check["required"], check["achieved"]
    if achieved is None:
        return False
    return bool(achieved <= required if name.startswith("t_closeness")
                else achieved >= required)


def failed_steps(checks: Mapping[str, Any]) -> list[str]:
    """The steps of a plan whose verifier does not hold on the published table
    (``checks["steps"]``, entries with ``holds`` false), as short phrases ("step 2 of the
    plan (recode): <its model> does not hold")."""
    entries = checks.get("steps")
    if not isinstance(entries, (list, tuple)):
        return []
    return [f"step {entry.get('step')} of the plan ({entry.get('name', 'step')}): "
            f"{entry.get('model')} does not hold"
            for entry in entries if isinstance(entry, Mapping) and entry.get("holds") is False]


def _relinking_columns(checks: Mapping[str, Any]) -> str:
    """The columns of ``checks["household_relinking"]`` with the households each identifies,
    in words ("" when none)."""
    entry = checks.get("household_relinking")
    columns = entry.get("columns") if isinstance(entry, Mapping) else None
    if not isinstance(columns, Mapping):
        return ""
    return ", ".join(f"{c} ({number(m['households_identified'])} of "
                     f"{number(m['households'])} households)" for c, m in columns.items())


def unmet_models(checks: Mapping[str, Any]) -> list[str]:
    """The required models the published table does not reach, as short phrases
    ("k anonymity: required 6, achieved 5"), then the steps of a plan that do not hold
    (:func:`failed_steps`)."""
    found = failed_steps(checks)
    for name, check in checks.items():
        if not isinstance(check, Mapping) or _met(name, check) is not False:
            continue
        if "epsilon" in check:
            found.append(f"epsilon-differential privacy does not hold (epsilon = "
                         f"{number(check.get('epsilon'))})")
        else:
            found.append(f"{name.replace('_', ' ')}: required {number(check.get('required'))}"
                         f", achieved {number(check.get('achieved'))}")
    return found


def _column_list(names: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def decide(checks: Mapping[str, Any], kept: Sequence[str] = ()) -> Verdict:
    """The verdict of the ``checks`` re-derived from a published table.

    Parameters
    ----------
    checks : mapping
        ``Release.checks``: ``k_anonymity`` (``required`` ``None`` when no k is promised),
        optionally ``l_diversity``, ``t_closeness``, ``differential_privacy`` and
        ``published_columns`` (:func:`~microagg._pipeline.unmasked.published_column_checks`).
    kept : sequence of str
        Identifier-like columns published on purpose.

    Examples
    --------
    >>> decide({"k_anonymity": {"required": 5, "achieved": 5}}).headline
    'Protected: k = 5 required and reached on the published file.'
    >>> decide({"k_anonymity": {"required": 5, "achieved": 5},
    ...         "published_columns": {"required": 5, "columns": {"weight": 1}}}).headline
    'Not protected: published column(s) that break the required k: weight (k = 1 with it).'
    """
    k_entry = checks.get("k_anonymity")
    k_entry = k_entry if isinstance(k_entry, Mapping) else {}
    required, achieved = k_entry.get("required"), k_entry.get("achieved")
    reasons = unmet_models(checks)
    if kept:
        reasons.append(f"identifier-like column(s) published on purpose: "
                       f"{_column_list(list(kept))}")
    broken = ", ".join(f"{c} (k = {number(k)} with it)"
                       for c, k in breaking_columns(checks).items())
    if broken and required is not None:
        reasons.append(f"published column(s) that break the required k: {broken}")
    relinked = _relinking_columns(checks)
    if relinked:
        reasons.append("published column(s) that re-link households (the household id is "
                       f"effectively published): {relinked}")
    if reasons:
        return Verdict(False, NOT_PROTECTED,
                       f"{_PREFIX[NOT_PROTECTED]}: {'; '.join(reasons)}.", tuple(reasons))
    if required is None:
        lowered = f"published column(s) that lower it: {broken}" if broken else ""
        return Verdict(False, NO_K_REQUIRED,
                       f"{_PREFIX[NO_K_REQUIRED]}: the published file is {number(achieved)}-"
                       "anonymous on its quasi-identifiers" + (f"; {lowered}" if broken
                                                               else "") + ".",
                       (lowered,) if broken else ())
    return Verdict(True, PROTECTED, f"{_PREFIX[PROTECTED]}: k = {number(required)} required "
                                    "and reached on the published file.")

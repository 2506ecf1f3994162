"""Global recoding as plan steps: categories grouped (``recode``), numbers banded
(``band``), dates coarsened (``recode_date``), top and bottom coding (``topcode``) and
robust multivariate top coding (``mvtopcode``).

Each step has a frozen options class (:mod:`.options`, standard library only), a core
``apply_<step>(table, options, rng, *, households, weights, strata) -> (table, details)``
and a verifier ``verify_<step>(options, original, published, ...) -> dict``
(:mod:`.verify`). Importing this package imports the options only.
"""

from __future__ import annotations

from .options import Band, MultivariateTopCode, Recode, RecodeDate, TopCode

__all__ = ["Band", "MultivariateTopCode", "Recode", "RecodeDate", "TopCode"]

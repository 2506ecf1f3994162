"""Privacy models checked on published data; each check returns the level achieved.

k-anonymity (``_k_anonymity``), l-diversity (``_l_diversity``; enforcing it, ``_enforce_l``),
t-closeness (``_t_closeness``) and the cost models the enforcers merge with (``_costs``).
"""

from __future__ import annotations

from ._costs import ILOmegaCost
from ._enforce_l import enforce_l_diversity
from ._k_anonymity import check_k_anonymity, k_anonymity
from ._l_diversity import DIVERSITIES, check_l, check_l_diversity, l_diversity
from ._t_closeness import (
    GROUND_DISTANCES,
    SensitiveDistribution,
    check_t,
    check_t_closeness,
    earth_movers_distance,
    enforce_t_closeness,
    t_closeness,
)

__all__ = [
    "DIVERSITIES",
    "GROUND_DISTANCES",
    "ILOmegaCost",
    "SensitiveDistribution",
    "check_k_anonymity",
    "check_l",
    "check_l_diversity",
    "check_t",
    "check_t_closeness",
    "earth_movers_distance",
    "enforce_l_diversity",
    "enforce_t_closeness",
    "k_anonymity",
    "l_diversity",
    "t_closeness",
]

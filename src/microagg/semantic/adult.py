"""WordNet 3.0 synsets for the bundled Adult data's textual values (occupation and
native-country), chosen by hand from each synset's gloss; values absent here map to their
first noun synset."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["ADULT_SYNSETS"]

ADULT_SYNSETS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "occupation": MappingProxyType({
        "Adm-clerical": "clerk.n.01",
        "Armed-Forces": "serviceman.n.01",
        "Craft-repair": "repairman.n.01",
        "Exec-managerial": "executive.n.01",
        "Farming-fishing": "farmer.n.01",
        "Handlers-cleaners": "laborer.n.01",
        "Machine-op-inspct": "machinist.n.01",
        "Other-service": "servant.n.01",
        "Priv-house-serv": "domestic.n.01",
        "Prof-specialty": "professional.n.01",
        "Protective-serv": "guard.n.01",
        "Sales": "salesperson.n.01",
        "Tech-support": "technician.n.01",
        "Transport-moving": "driver.n.01",
    }),
    "native-country": MappingProxyType({
        "Columbia": "colombia.n.01",          # the first noun synset is the river
        "Holand-Netherlands": "netherlands.n.01",
        "Hong": "hong_kong.n.01",
        "Japan": "japan.n.02",                # japan.n.01 is the archipelago
        "Outlying-US(Guam-USVI-etc)": "guam.n.01",
        "South": "south_korea.n.01",          # Adult's 'South' is read as South Korea
        "Trinadad&Tobago": "trinidad_and_tobago.n.01",
        "Yugoslavia": "yugoslavia.n.02",
    }),
})
"""Column -> value -> synset name, for ``anonymize_semantic(..., synsets=ADULT_SYNSETS)``."""

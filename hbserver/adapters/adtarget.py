"""Adtarget adapter: PBS-Go's ``adapters/adtarget`` is Adtelligent's with its own names and a 400
answer that is bad input (:mod:`hbserver.adapters.adtelligent`, its ``Flavour``)."""

from __future__ import annotations

from hbserver.adapters.adtelligent import AdtelligentAdapter, Flavour
from hbserver.adapters.base import AdapterConfig

ADTARGET = Flavour(
    name="Adtarget",
    ext_key="adtarget",
    struct="openrtb_ext.ExtImpAdtarget",
    marshal_verb="encoding",
    bad_request_is_input=True,
)


def build(config: AdapterConfig) -> AdtelligentAdapter:
    return AdtelligentAdapter(config, ADTARGET)

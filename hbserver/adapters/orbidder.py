"""Orbidder adapter: the recipe ``recipes/orbidder.yaml`` with its floors priced in EUR, PBS-Go's
orbidder rule: a positive floor in another named currency is converted to EUR (an imp without a
rate is dropped with the conversion error) and every imp sent says ``bidfloorcur: EUR``.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.recipe import RecipeAdapter


def floor_in_eur(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    """``imp`` with ``bidfloorcur: EUR``, a positive floor in another named currency converted first;
    ConversionError without a rate."""
    floor, currency = imp.get("bidfloor"), imp.get("bidfloorcur")
    out = {**imp, "bidfloorcur": "EUR"}
    positive = isinstance(floor, int | float) and not isinstance(floor, bool) and floor > 0
    if positive and isinstance(currency, str) and currency and currency.upper() != "EUR":
        out["bidfloor"] = info.convert_currency(floor, currency, "EUR")
    return out


class OrbidderAdapter(RecipeAdapter):
    """The recipe, its ``floors: usd_first`` step pricing the floor in EUR instead."""

    floor_rule = staticmethod(floor_in_eur)


def build(config: AdapterConfig) -> OrbidderAdapter:
    return OrbidderAdapter.of_code("orbidder", config)

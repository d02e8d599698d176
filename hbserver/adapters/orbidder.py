"""Orbidder adapter: the recipe ``recipes/orbidder.yaml`` with its floors priced in EUR, PBS-Go's
orbidder rule: a positive floor in another named currency is converted to EUR (an imp without a
rate is dropped with the conversion error) and every imp sent says ``bidfloorcur: EUR``.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, ConversionError, RequestInfo
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter


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

    @staticmethod
    def floored(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
        try:
            return floor_in_eur(imp, info)
        except ConversionError as exc:
            raise DroppedImp(BidderError(str(exc))) from None


def build(config: AdapterConfig) -> OrbidderAdapter:
    return OrbidderAdapter.of_code("orbidder", config)

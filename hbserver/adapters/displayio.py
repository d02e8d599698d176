"""Displayio adapter: the recipe ``recipes/displayio.yaml`` (params, endpoint, the answer and bid
typing) plus the bidder's own rules: an imp without a floor currency or with a zero floor is sent
with ``bidfloorcur: USD`` (a floor in another currency converted first); each call's request ext
carries ``displayio: {placementId, inventoryId}`` from its imp (an ext that is no object replaced);
the recipe's ``seatbid_count_error`` makes an answer without exactly one seatbid fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    ConversionError,
    RequestData,
    RequestInfo,
)
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter


def usd_floor(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    """The imp with its floor in USD: no currency or a zero floor is USD; another currency is converted."""
    floor, currency = imp.get("bidfloor") or 0, imp.get("bidfloorcur") or ""
    if not currency or not floor:
        return {**imp, "bidfloorcur": "USD"}
    if currency == "USD":
        return imp
    try:
        return {**imp, "bidfloor": info.convert_currency(floor, currency, "USD"), "bidfloorcur": "USD"}
    except ConversionError as exc:
        raise DroppedImp(BidderError(str(exc))) from None


def displayio_ext(ext: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The request ext with ``displayio`` set (a fresh one when the ext is no object)."""
    out = dict(ext) if isinstance(ext, dict) else {}
    out["displayio"] = {"placementId": params.get("placementId", ""), "inventoryId": params.get("inventoryId", "")}
    return out


class DisplayioAdapter(RecipeAdapter):
    """The recipe, with Displayio's floor rule and request ext."""

    floored = staticmethod(usd_floor)  # type: ignore[assignment]

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        request = {**request, "ext": displayio_ext(request.get("ext"), group[0].params)}
        return super().call(request, group, more)


def build(config: AdapterConfig) -> DisplayioAdapter:
    return DisplayioAdapter.of_code("displayio", config)

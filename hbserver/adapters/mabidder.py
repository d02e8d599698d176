"""Mabidder adapter: the call is the recipe ``recipes/mabidder.yaml``'s; the answer is Mabidder's own,
``{"Responses": [...]}``, each item one bid: ``requestId`` its id and imp id, ``cpm`` (a Go float32)
its price, ``ad``, ``width``/``height``, ``creativeId``, ``dealId`` and ``meta.advertiserDomains``;
``mediaType`` is its type as given (the auction refuses one it does not know), and the last
non-empty ``currency`` the answer's currency."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, ResponseData, TypedBid
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import GoKind, go_fields, go_json_object, go_list, go_strings, go_value
from hbserver.adapters.recipe import RecipeAdapter

_STRUCT = "mabidder.bidResponse"
# json name -> (Go field, kind)
_FIELDS: Mapping[str, tuple[str, GoKind]] = {
    "requestId": ("RequestID", GoKind.STRING),
    "currency": ("Currency", GoKind.STRING),
    "width": ("Width", GoKind.INT),
    "height": ("Height", GoKind.INT),
    "creativeId": ("PlacementId", GoKind.STRING),
    "dealId": ("Deal", GoKind.STRING),
    "netRevenue": ("NetRevenue", GoKind.BOOL),
    "ttl": ("TimeToLiveSeconds", GoKind.INT),
    "ad": ("AdTag", GoKind.STRING),
    "mediaType": ("MediaType", GoKind.STRING),
    "cpm": ("CPM", GoKind.FLOAT),
}


def float32(value: float) -> float:
    """Go's ``float64(float32 v)``: the float32 nearest ``value``, as a float64."""
    try:
        single = float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        single = math.inf
    if math.isinf(single):
        raise JsonShapeError(f"cannot unmarshal {_STRUCT}.CPM: float32 overflow: {value}")
    return single


def read_item(item: Any) -> dict[str, Any]:
    """One answer item decoded as ``bidResponse`` (zero values for absent fields); JsonShapeError."""
    members = go_fields(expect_object(item, _STRUCT), *_FIELDS, "meta")
    out = {name: go_value(members.get(name), kind, f"{_STRUCT}.{go_name}") for name, (go_name, kind) in _FIELDS.items()}
    meta = expect_object(members.get("meta"), "mabidder.meta") if members.get("meta") is not None else {}
    out["domains"] = go_strings(go_fields(meta, "advertiserDomains").get("advertiserDomains"), "mabidder.meta.AdDomain")
    out["cpm"] = float32(out["cpm"] or 0)
    return out


def bid_of(item: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenRTB bid an item makes (Go's omitempty fields left out when zero)."""
    bid: dict[str, Any] = {"id": item["requestId"] or "", "impid": item["requestId"] or "", "price": item["cpm"]}
    extra = {
        "adm": item["ad"], "adomain": item["domains"], "crid": item["creativeId"], "dealid": item["dealId"],
        "w": item["width"], "h": item["height"],
    }  # fmt: skip
    bid.update((key, value) for key, value in extra.items() if value)
    return bid


class MabidderAdapter(RecipeAdapter):
    """The recipe's call, Mabidder's answer."""

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = self.recipe.answer.status_failure(response)
        if failure is not None:
            return None, failure
        try:
            data = go_json_object(response.body)
            responses = go_fields(expect_object(data, ""), "Responses").get("Responses") if data is not None else None
            items = [read_item(item) for item in go_list(responses, "mabidder.serverResponse.Responses")]
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        result = BidderResponse()
        for item in items:
            result.bids.append(TypedBid(bid_of(item), item["mediaType"] or ""))
            result.currency = item["currency"] or result.currency
        return result, []


def build(config: AdapterConfig) -> MabidderAdapter:
    return MabidderAdapter.of_code("mabidder", config)

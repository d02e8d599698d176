"""Yieldmo adapter: all imps in one OpenRTB call to ``ads.yieldmo.com/exchange/prebid-server``.

Each imp's ``ext`` is replaced by ``{"placement_id": <placementId param>, "gpid": <ext.data.pbadslot>}``
(``gpid`` only when there is one). A floor in a currency other than USD is converted to USD; when
that fails the imp keeps its floor and an error is reported. Unreadable params are reported too,
but every imp is still sent (with the fields read before the fault), as PBS-Go does. The answer
and bid typing are the recipe ``recipes/yieldmo.yaml``'s.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, ConversionError, RequestData, RequestInfo, bad_input
from hbserver.adapters.common import (
    JsonShapeError,
    expect_object,
    expect_string,
    floor_in_usd,
    found,
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import ABSENT_OBJECT, NOT_AN_OBJECT, go_fields
from hbserver.adapters.recipe import RecipeAdapter

HEADERS = {"Content-Type": "application/json;charset=utf-8"}
_ABSENT = object()


def _read_ext(ext: Any, errors: list[BidderError]) -> tuple[Any, str]:
    """(raw ``bidder`` value or _ABSENT, ``data.pbadslot``) from ``imp.ext`` decoded as Go's
    ExtImpBidderYieldmo: fields in document order, stopping at the first that fails."""
    bidder: Any = _ABSENT
    pbadslot = ""
    if ext is not None and not isinstance(ext, dict):
        errors.append(bad_input(NOT_AN_OBJECT.format(found=found(ext))))
        return bidder, pbadslot
    try:
        for name, value in go_fields(ext or {}, "prebid", "bidder", "data").items():
            if name == "prebid":
                expect_object(value, "yieldmo.ExtImpBidderYieldmo.Prebid")
            elif name == "bidder":
                bidder = value
            else:
                data = expect_object(value, "yieldmo.ExtImpBidderYieldmo.Data")
                for slot in go_fields(data, "pbadslot").values():
                    pbadslot = ""  # cleared before a value of the wrong type fails, as in Go
                    pbadslot = expect_string(slot, "yieldmo.ExtData.PbAdslot")
    except JsonShapeError as exc:
        errors.append(bad_input(str(exc)))
    return bidder, pbadslot


def _placement_id(bidder: Any, errors: list[BidderError]) -> str:
    """The ``placementId`` param ("" when absent or unreadable; an unreadable one is reported)."""
    if bidder is _ABSENT:
        errors.append(bad_input(ABSENT_OBJECT))
        return ""
    placement = ""
    try:
        for value in go_fields(expect_object(bidder, ""), "placementId").values():
            placement = ""  # Go clears the field before it fails on a value of the wrong type
            placement = expect_string(value, "openrtb_ext.ExtImpYieldmo.PlacementId")
    except JsonShapeError as exc:
        errors.append(bad_input(str(exc)))
    return placement


def _build_imp(imp: dict[str, Any], info: RequestInfo, errors: list[BidderError]) -> dict[str, Any]:
    try:
        out = dict(floor_in_usd(imp, info))
    except ConversionError:  # sent with its own floor, as PBS-Go does
        errors.append(bad_input(f"Unable to convert provided bid floor currency from {imp['bidfloorcur']} to USD"))
        out = dict(imp)
    bidder, pbadslot = _read_ext(imp.get("ext"), errors)
    ext = {"placement_id": _placement_id(bidder, errors)}
    if pbadslot:
        ext["gpid"] = pbadslot
    out["ext"] = ext
    return out


class YieldmoAdapter(RecipeAdapter):
    """The recipe ``recipes/yieldmo.yaml`` (the answer and bid typing), the call Yieldmo's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = [_build_imp(imp, info, errors) for imp in request.get("imp") or ()]
        return [json_call(self.endpoint, {**request, "imp": imps}, imp_ids(imps), HEADERS)], errors


def build(config: AdapterConfig) -> YieldmoAdapter:
    return YieldmoAdapter.of_code("yieldmo", config)

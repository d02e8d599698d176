"""Impactify adapter: the whole request in one OpenRTB 2.5 call to the configured endpoint.

Floors in another currency are converted to USD (a missing rate fails the request) and the request
asks for ``cur: ["USD"]``. Each imp's ext becomes ``{"impactify": {appId, format, style}}`` (a
param of the wrong type, or an ext that is no object, fails the request). The call passes on the
device's user agent and IP (IPv4, else IPv6), the page as ``Referer`` and the bidder's user id as
the ``uids`` cookie. Only the answer's first seatbid is read; bids without a positive price are
skipped; a bid is banner or video as its imp asks, and one whose imp asks for neither fails the
whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    JsonShapeError,
    expect_object,
    expect_string,
    floor_in_usd,
    imp_ids,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import go_answer, go_field, go_fields, go_imp, go_request_top

_PARAMS = ("appId", "format", "style")


def impactify_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``{"impactify": {appId, format, style}}`` from ``imp.ext.bidder`` (each "" when absent; no
    ext at all fails, a null ext or bidder reads as empty). Raises JsonShapeError."""
    if "ext" not in imp:
        raise JsonShapeError("no imp ext")
    bidder = expect_object(go_field(expect_object(imp["ext"], ""), "bidder"), "")
    fields = go_fields(bidder, *_PARAMS)
    return {"impactify": {name: expect_string(fields.get(name), name) for name in _PARAMS}}


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = json_headers(x_openrtb_version="2.5")
    device = _object(request.get("device"))
    if _text(device.get("ua")):
        headers["User-Agent"] = device["ua"]
    address = _text(device.get("ip")) or _text(device.get("ipv6"))
    if address:
        headers["X-Forwarded-For"] = address
    site = request.get("site")
    if isinstance(site, dict):
        headers["Referer"] = _text(site.get("page"))  # PBS-Go sends it even when empty
    buyer_uid = _text(_object(request.get("user")).get("buyeruid"))
    if buyer_uid:
        headers["Cookie"] = f"uids={buyer_uid}"
    return headers


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class ImpactifyAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps: list[dict[str, Any]] = []
        for imp in request.get("imp") or ():
            imp = imp if isinstance(imp, dict) else {}
            try:
                imp = floor_in_usd(imp, info)
            except ConversionError as exc:
                return [], [BidderError(str(exc))]
            try:
                ext = impactify_ext(imp)
            except JsonShapeError:
                return [], [bad_input(f'Unable to decode the imp ext : "{imp.get("id", "")}"')]
            imps.append(go_imp({**imp, "ext": ext}))
        if not imps:
            return [], [bad_input("No valid impressions in the bid request")]
        body = {**go_request_top(request), "cur": ["USD"], "imp": imps}
        return [json_call(self.endpoint, body, imp_ids(imps), _headers(request))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status == 400:
            return None, [bad_input("Invalid request.")]
        if response.status != 200:
            return None, [bad_server_response(f"Unexpected HTTP status {response.status}.")]
        try:
            answer = go_answer(response.body)
        except JsonShapeError:
            return None, [bad_server_response("Bad server body response")]
        if not answer.seatbids:
            return None, []
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.seatbids[0][1]:
            if not bid["price"] > 0:
                continue
            bid_type = _bid_type(bid["impid"], request)
            if bid_type is None:
                return None, [bad_input(f'Failed to find a supported media type impression "{bid["impid"]}"')]
            result.bids.append(TypedBid(bid, bid_type))
        return result, []


def _bid_type(imp_id: str, request: Mapping[str, Any]) -> str | None:
    """Banner or video as the first imp with ``imp_id`` that asks for either; None when none does."""
    for imp in request.get("imp") or ():
        if isinstance(imp, dict) and imp.get("id") == imp_id:
            if imp.get("banner") is not None:
                return "banner"
            if imp.get("video") is not None:
                return "video"
    return None


def build(config: AdapterConfig) -> ImpactifyAdapter:
    return ImpactifyAdapter(config)

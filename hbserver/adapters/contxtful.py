"""Contxtful adapter: every imp in one call to ``prebid.receptivity.io/v1/pbs/{{.AccountID}}/bid``,
wrapped as a Prebid.js payload.

The account is the first non-empty ``customerId`` of the imps' params. The body carries the request
as ``ortb2`` (its ``user.buyeruid`` filled from ``user.ext.prebid.buyeruids.contxtful`` when empty),
one ``bidRequests`` entry per imp (``{bidder: contxtful, params: {placementId}, bidId}``),
``bidderRequest`` and ``config.contxtful`` (version ``v1``, the customer). An imp whose params do
not decode sends nothing at all (PBS-Go stops there or fails on the mismatch that follows).

The answer is a Prebid.js bid array (``requestId``, ``cpm``, ``adm``, ``mediaType``, ...). A bid
without a price or a request id is skipped, one without a media type or markup is reported; the
others become OpenRTB bids ``contxtful-<requestId>`` typed by their imp (video, then native, else
banner). The currency is the last bid's own, USD when none names one. An answer that is not a
non-empty array of such bids fails as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, OwnAnswerAdapter, imp_ids, json_call, json_headers, resolve_macros
from hbserver.adapters.golike import GoKind, go_field, go_fields, go_imp, go_request_top, go_value
from hbserver.adapters.steps import ParamsSpec

BIDDER = "contxtful"
VERSION = "v1"
_PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpContxtful",
        "fields": {"placementId": ["PlacementId", "string"], "customerId": ["CustomerId", "string"]},
    }
)
# ContxtfulExchangeBid: the fields of a Prebid.js bid as PBS-Go decodes them
_EXCHANGE_BID = {
    "requestId": GoKind.STRING, "cpm": GoKind.FLOAT, "currency": GoKind.STRING, "width": GoKind.INT,
    "height": GoKind.INT, "creativeId": GoKind.STRING, "adm": GoKind.STRING, "ttl": GoKind.INT,
    "netRevenue": GoKind.BOOL, "mediaType": GoKind.STRING, "bidderCode": GoKind.STRING,
    "placementId": GoKind.STRING, "traceId": GoKind.STRING, "random": GoKind.FLOAT, "nurl": GoKind.STRING,
    "burl": GoKind.STRING, "lurl": GoKind.STRING, "ext": GoKind.RAW,
}  # fmt: skip
_ZERO = {GoKind.STRING: "", GoKind.FLOAT: 0, GoKind.INT: 0, GoKind.BOOL: False, GoKind.RAW: None}
# openrtb2.Bid field <- exchange bid field (omitempty: left out when zero)
_BID_FIELDS = (
    ("adm", "adm"), ("w", "width"), ("h", "height"), ("crid", "creativeId"),
    ("nurl", "nurl"), ("burl", "burl"), ("lurl", "lurl"), ("ext", "ext"),
)  # fmt: skip
NOT_PARSED = "failed to parse response as Contxtful relay or Prebid.js format"


def _buyeruid_in_ext(ext: Any) -> str:
    """``ext.prebid.buyeruids.contxtful`` when ``ext`` decodes as far as that, else ""."""
    if not isinstance(ext, Mapping):
        return ""
    prebid = go_field(ext, "prebid")
    buyeruids = go_field(prebid, "buyeruids") if isinstance(prebid, Mapping) else None
    if not isinstance(buyeruids, Mapping) or not all(isinstance(v, str | None) for v in buyeruids.values()):
        return ""
    return buyeruids.get(BIDDER) or ""


def ortb2_of(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request as sent under ``ortb2``: re-encoded as Go's typed request, the user's buyer uid
    taken from ``user.ext.prebid.buyeruids`` when the user has none."""
    ortb2 = go_request_top(request)
    ortb2["imp"] = [go_imp(imp) for imp in request.get("imp") or ()]
    user = request.get("user")
    if isinstance(user, Mapping) and not user.get("buyeruid"):
        uid = _buyeruid_in_ext(user.get("ext"))
        if uid:
            ortb2["user"] = {**user, "buyeruid": uid}
    return ortb2


def exchange_bids(body: bytes) -> list[dict[str, Any]]:
    """The answer's Prebid.js bids, each field Go's zero value when absent; JsonShapeError when the
    answer is not a JSON array of objects whose fields have their types."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise JsonShapeError(str(exc)) from None
    if not isinstance(data, list):
        raise JsonShapeError("not an array")
    bids = []
    for item in data:
        if item is not None and not isinstance(item, dict):
            raise JsonShapeError("not an object")
        fields = go_fields(item or {}, *_EXCHANGE_BID)
        bid = {}
        for name, kind in _EXCHANGE_BID.items():
            value = go_value(fields.get(name), kind, f"contxtful.ContxtfulExchangeBid.{name}")
            bid[name] = _ZERO[kind] if value is None else value
        bids.append(bid)
    return bids


def _bid_type(request: Mapping[str, Any], imp_id: str) -> str:
    for imp in request.get("imp") or ():
        if imp.get("id") == imp_id:
            if imp.get("video") is not None:
                return "video"
            return "native" if imp.get("native") is not None else "banner"
    return "banner"


def openrtb_bid(exchange_bid: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenRTB bid made of a Prebid.js bid (zero fields left out, as Go writes them)."""
    request_id = exchange_bid["requestId"]
    bid: dict[str, Any] = {"id": f"{BIDDER}-{request_id}", "impid": request_id, "price": exchange_bid["cpm"]}
    for name, source in _BID_FIELDS:
        value = exchange_bid[source]
        if value if name != "ext" else value is not None:  # a raw ext is written unless absent or null
            bid[name] = value
    return bid


class ContxtfulAdapter(OwnAnswerAdapter):
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        placements: list[str] = []
        errors: list[BidderError] = []
        customer = ""
        for imp in imps:
            try:
                params = _PARAMS.read(imp)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            customer = customer or params.get("customerId", "")
            placements.append(params.get("placementId", ""))
        if errors or not placements:
            return [], errors
        body = {
            "ortb2": ortb2_of(request),
            "bidRequests": [
                {"bidder": BIDDER, "params": {"placementId": placement}, "bidId": imp.get("id", "")}
                for imp, placement in zip(imps, placements, strict=True)
            ],
            "bidderRequest": {"bidderCode": BIDDER},
            "config": {BIDDER: {"version": VERSION, "customer": customer}},
        }
        uri = resolve_macros(self.endpoint, {"AccountID": customer})
        return [json_call(uri, body, imp_ids(imps), self.headers)], []

    def read_body(self, body: bytes) -> list[dict[str, Any]]:
        """The exchange's bids; none when the body does not decode (reported as not parsed)."""
        try:
            return exchange_bids(body)
        except JsonShapeError:
            return []

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: list[dict[str, Any]]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = data
        if not bids:
            return None, [BidderError(NOT_PARSED)]
        result = BidderResponse(currency="USD")
        errors: list[BidderError] = []
        for bid in bids:
            if bid["cpm"] == 0 or not bid["requestId"]:
                continue
            if not bid["mediaType"]:
                errors.append(bad_server_response("bid has no ad media type"))
                continue
            if not bid["adm"]:
                errors.append(bad_server_response("bid has no ad markup"))
                continue
            result.bids.append(TypedBid(openrtb_bid(bid), _bid_type(request, bid["requestId"])))
            if bid["currency"]:
                result.currency = bid["currency"]
        return result, errors


def build(config: AdapterConfig) -> ContxtfulAdapter:
    return ContxtfulAdapter(config)

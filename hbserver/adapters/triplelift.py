"""TripleLift adapter: all banner and video imps in one OpenRTB call to ``tlx.3lift.com/s2s/auction``.

Per imp: ``inventoryCode`` becomes ``tagid`` and ``floor`` (when given) the floor; a positive floor
is sent in USD (converted from ``bidfloorcur``, whose absence means USD) with ``bidfloorcur: USD``.
``imp.ext`` goes unchanged. Bids are video when ``ext.triplelift_pb.format`` is 11, 12 or 17, else
banner. Malformed ``ext`` objects are reported in the words of PBS-Go's JSON library
(``expect { or n, but found <first character>``), which its tests pin.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    AnswerAdapter,
    JsonShapeError,
    expect_object,
    imp_ids,
    items_of,
    seat_bids,
    typed_bid_response,
)

VIDEO_FORMATS = frozenset({11, 12, 17})


class _Invalid(ValueError):
    """Something this adapter cannot use (the message is the bidder error's)."""


def _build_imp(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    params = expect_object(expect_object(imp.get("ext"), "").get("bidder"), "")
    if imp.get("banner") is None and imp.get("video") is None:
        raise _Invalid("neither Banner nor Video object specified")
    code = params.get("inventoryCode", "")
    floor = params.get("floor")
    if not isinstance(code, str):
        raise _Invalid("triplelift params: inventoryCode must be a string")
    if floor is not None and (isinstance(floor, bool) or not isinstance(floor, int | float)):
        raise _Invalid("triplelift params: floor must be a number")
    out = dict(imp)
    out["tagid"] = code
    if floor is not None:
        out["bidfloor"] = floor
    amount = out.get("bidfloor") or 0
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        raise _Invalid("imp.bidfloor must be a number")
    if amount > 0:
        currency = (out.get("bidfloorcur") or "USD").upper()
        if currency != "USD":
            try:
                amount = info.convert_currency(amount, currency, "USD")
            except ConversionError as exc:
                raise _Invalid(str(exc)) from None
        out["bidfloor"] = amount
        out["bidfloorcur"] = "USD"
    return out


def _bid_type(bid: dict[str, Any]) -> str:
    ours = expect_object(expect_object(bid.get("ext"), "").get("triplelift_pb"), "")
    fmt = ours.get("format", 0)
    if isinstance(fmt, bool) or not isinstance(fmt, int):
        raise _Invalid("bid.ext.triplelift_pb.format must be an integer")
    return "video" if fmt in VIDEO_FORMATS else "banner"


class TripleliftAdapter(AnswerAdapter):
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                imps.append(_build_imp(imp, info))
            except (_Invalid, JsonShapeError) as exc:
                errors.append(bad_input(str(exc)))
        if not imps:
            errors.append(bad_input("No valid impressions for triplelift"))
            return [], errors
        body = orjson.dumps({**request, "imp": imps})
        return [RequestData("POST", self.endpoint, body, imp_ids=imp_ids(imps))], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = (bid for seatbid in items_of(data.get("seatbid")) for bid in seat_bids(seatbid))
        return typed_bid_response(bids, _typed, data.get("cur") or "USD")


def _typed(bid: Any) -> TypedBid | BidderError:
    if not isinstance(bid, dict):
        return bad_server_response("a bid is not a JSON object")
    if "ext" not in bid:
        return bad_server_response(f"bid {bid.get('id')}: no ext.triplelift_pb to type it by")
    try:
        return TypedBid(bid, _bid_type(bid))
    except (_Invalid, JsonShapeError) as exc:
        return bad_server_response(str(exc))


def build(config: AdapterConfig) -> TripleliftAdapter:
    return TripleliftAdapter(config)

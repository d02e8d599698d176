"""Improve Digital adapter: one OpenRTB call per imp to ``ad.360yield.com/{PublisherId}pbs``.

Each imp goes out alone in a copy of the request. ``{PublisherId}`` in the endpoint becomes the
imp's integer ``publisherId`` param followed by ``/`` (nothing when it is absent, zero or not an
integer). An imp whose ``ext.prebid.is_rewarded_inventory`` is exactly ``1`` also gets
``ext.is_rewarded_inventory: true``. The answer must have at most one seatbid; a bid is typed by
``mtype``, else by its imp when the imp asks for a single media type (banner, video, audio,
native in that order); a bid for an unknown imp, of an unknown ``mtype`` or for a multi-format imp
without ``mtype`` fails the whole answer. A bid whose ``ext.improvedigital`` has a non-zero
``line_item_id`` and a ``buying_type`` containing ``classic`` or ``deal`` gets that line item as
its ``dealid``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string
from hbserver.adapters.golike import ABSENT_OBJECT, decode_go_answer, go_field, go_fields, go_int

PUBLISHER_MACRO = "{PublisherId}"
REWARDED = "is_rewarded_inventory"
_DEAL_BUYING = re.compile("(classic|deal)")
_SINGLE_FORMAT_ORDER = (("banner", 1), ("video", 2), ("audio", 3), ("native", 4))
_HEADERS = {"Content-Type": "application/json;charset=utf-8"}


class _BadBid(ValueError):
    """A bid this adapter cannot type (the message is the bidder error's)."""


def _rewarded_ext(imp: Mapping[str, Any]) -> dict[str, Any] | None:
    """The imp's ext with ``is_rewarded_inventory: true`` when ``ext.prebid`` asks for rewarded
    inventory, else None; a missing or malformed ext fails as PBS-Go's JSON library words it."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    ext = expect_object(imp["ext"], "")
    if "prebid" not in ext:
        return None
    prebid = expect_object(ext["prebid"], "")
    flag = prebid.get(REWARDED)
    if type(flag) is int and flag == 1:
        return {**ext, REWARDED: True}
    return None


def _publisher_path(ext: Any) -> str:
    """``<publisherId>/`` from the imp's params, "" when there is none (or it is no integer)."""
    try:
        bidder = go_field(expect_object(ext, ""), "bidder")
        publisher = go_int(go_field(expect_object(bidder, ""), "publisherId"), "")
    except JsonShapeError:
        return ""
    return f"{publisher}/" if publisher else ""


def _bid_type(bid: Mapping[str, Any], imps: Mapping[str, Mapping[str, Any]]) -> str:
    impid = bid["impid"]
    imp = imps.get(impid)
    if imp is None:
        raise _BadBid(f'Failed to find impression for ID: "{impid}"')
    mtype = bid.get("mtype", 0)
    if mtype == 0:
        kinds = [value for kind, value in _SINGLE_FORMAT_ORDER if imp.get(kind) is not None]
        if len(kinds) > 1:
            raise _BadBid(f'Bid must have non-zero MType for multi format impression with ID: "{impid}"')
        if not kinds:
            raise _BadBid(f'Could not determine MType from impression with ID: "{impid}"')
        mtype = kinds[0]
    bid_type = MTYPE_TO_TYPE.get(mtype)
    if bid_type is None:
        raise _BadBid(f'Unsupported MType {mtype} for impression with ID: "{impid}"')
    return bid_type


def _deal_id(bid: Mapping[str, Any]) -> str | None:
    """The line item id of a classic or deal buy (``ext.improvedigital``), else None."""
    if "ext" not in bid:
        return None
    ours = go_field(expect_object(bid["ext"], ""), "Improvedigital")
    fields = go_fields(expect_object(ours, "improvedigital.BidExt.Improvedigital"), "line_item_id", "buying_type")
    line_item = go_int(fields.get("line_item_id"), "LineItemID")
    buying = expect_string(fields.get("buying_type"), "BuyingType")
    if line_item and buying and _DEAL_BUYING.search(buying):
        return str(line_item)
    return None


class ImprovedigitalAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                ext = _rewarded_ext(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            out = imp if ext is None else {**imp, "ext": ext}
            uri = self.endpoint.replace(PUBLISHER_MACRO, _publisher_path(out.get("ext")))
            body = orjson.dumps({**request, "imp": [out]})
            calls.append(RequestData("POST", uri, body, _HEADERS, imp_ids=[imp.get("id", "")]))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response)
        if answer is None:
            return None, failure
        if not answer.seatbids:
            return None, []
        if len(answer.seatbids) > 1:
            return None, [bad_server_response(f"Unexpected SeatBid! Must be only one but have: {len(answer.seatbids)}")]
        bids = answer.seatbids[0][1]
        if not bids:
            return None, []
        imps = {imp.get("id"): imp for imp in request.get("imp") or ()}
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in bids:
            try:
                bid_type = _bid_type(bid, imps)
                deal = _deal_id(bid)
            except (_BadBid, JsonShapeError) as exc:
                return None, [bad_server_response(str(exc))]
            result.bids.append(TypedBid(bid if deal is None else {**bid, "dealid": deal}, bid_type))
        return result, []


def build(config: AdapterConfig) -> ImprovedigitalAdapter:
    return ImprovedigitalAdapter(config)

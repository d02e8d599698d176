"""Goldbach adapter: one OpenRTB call per ``publisherId``, carrying that publisher's imps.

Each imp's ext becomes ``{"goldbach": {"slotId", "targetings"}}`` (``customTargeting`` values as
lists; a single string is a list of one), imps without both ``publisherId`` and ``slotId`` are
dropped. Each call's request id is ``<id>_<publisherId>`` and its ext ``{"goldbach": {"publisherId",
"mockResponse"}}`` (plus the incoming ext's ``inline`` member, which Go's struct tag names so). Goldbach
answers 201 with bids; each bid is typed by ``ext.prebid.type``, and an answer without a typed bid
is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    JSON_HEADERS,
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
from hbserver.adapters.common import JsonShapeError, Refusal, expect_object, expect_string, imp_ids, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoKind,
    ImpExtError,
    go_answer,
    go_field,
    go_fields,
    go_imp,
    go_request_top,
    go_value,
    imp_bidder_params,
)

BID_TYPES = frozenset({"banner", "video", "audio", "native"})
_STRUCT = "openrtb_ext.ImpExtGoldbach"


def request_ext(request: Mapping[str, Any]) -> tuple[dict[str, Any], list[BidderError]]:
    """What the calls' ext keeps of the request's (``mockResponse``, ``inline``) and the error of an
    ext that does not decode (then nothing is kept)."""
    ext = request.get("ext")
    if ext is None:
        return {}, []
    try:
        fields = go_fields(expect_object(ext, ""), "goldbach", "inline")
        goldbach = go_fields(
            expect_object(fields.get("goldbach"), "goldbach.requestExtAdapter.Goldbach"), "publisherId", "mockResponse"
        )
        go_value(goldbach.get("publisherId"), GoKind.STRING, "goldbach.requestExtGoldbach.PublisherID")
        mock = go_value(goldbach.get("mockResponse"), GoKind.BOOL, "goldbach.requestExtGoldbach.MockResponse")
        inline = expect_object(fields.get("inline"), "goldbach.requestExtAdapter.ExtRequest")
    except JsonShapeError as exc:
        return {}, [BidderError(f"unable to unmarshal request.ext: {exc}")]
    kept: dict[str, Any] = {}
    if mock is not None:
        kept["mockResponse"] = mock
    if fields.get("inline") is not None:
        kept["inline"] = inline
    return kept, []


def _targetings(value: Any) -> dict[str, Any]:
    """``customTargeting`` with each value as a list of strings (a string alone is a list of one)."""
    out: dict[str, Any] = {}
    for key, item in expect_object(value, f"{_STRUCT}.CustomTargeting").items():
        if item is None or isinstance(item, str):
            out[key] = [item or ""]
        elif isinstance(item, list) and all(isinstance(text, str) for text in item):
            out[key] = item
        else:
            problem = "value should be of type string or []string"
            raise JsonShapeError(f"cannot unmarshal {_STRUCT}.CustomTargeting: {problem}")
    return out


def _imp_as_sent(imp: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the imp's publisher, the imp as sent); BidderError (bad input) when it is dropped."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Dropped(bad_input(f"unable to unmarshal imp.ext: {exc}")) from None
    except JsonShapeError as exc:
        raise _Dropped(bad_input(f"unable to unmarshal imp.ext.bidder: {exc}")) from None
    try:
        fields = go_fields(params, "publisherId", "slotId", "customTargeting")
        publisher = expect_string(fields.get("publisherId"), f"{_STRUCT}.PublisherID")
        slot = expect_string(fields.get("slotId"), f"{_STRUCT}.SlotID")
        targetings = _targetings(fields.get("customTargeting"))
    except JsonShapeError as exc:
        raise _Dropped(bad_input(f"unable to unmarshal imp.ext.bidder: {exc}")) from None
    if not publisher or not slot:
        raise _Dropped(bad_input("publisherId and slotId are required"))
    goldbach: dict[str, Any] = {"slotId": slot}
    if targetings:
        goldbach["targetings"] = targetings
    return publisher, go_imp({**imp, "ext": {"goldbach": goldbach}})


class _Dropped(Refusal):
    """See ``common.Refusal``."""


def bid_type(bid: Mapping[str, Any]) -> str:
    """``ext.prebid.type``; _Dropped when the ext does not decode or names no known type."""
    ext = bid.get("ext")
    if ext is None:
        raise _Dropped(BidderError(f"unable to unmarshal ext for bid: {ABSENT_OBJECT}"))
    try:
        prebid = expect_object(go_field(expect_object(ext, ""), "prebid"), "openrtb_ext.ExtBid.Prebid")
        kind = expect_string(go_field(prebid, "type"), "openrtb_ext.ExtBidPrebid.Type")
    except JsonShapeError as exc:
        raise _Dropped(BidderError(f"unable to unmarshal ext for bid: {exc}")) from None
    if not kind:
        raise _Dropped(bad_input(f"no media type for bid {bid.get('id', '')}"))
    if kind not in BID_TYPES:
        raise _Dropped(bad_server_response(f"invalid BidType: {kind}"))
    return kind


class GoldbachAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        kept, errors = request_ext(request)
        by_publisher: dict[str, list[dict[str, Any]]] = {}
        for imp in request.get("imp") or ():
            try:
                publisher, sent = _imp_as_sent(imp)
            except _Dropped as dropped:
                errors.append(dropped.error)
                continue
            by_publisher.setdefault(publisher, []).append(sent)
        if not by_publisher:
            errors.append(bad_input("no valid impression found"))
        top = go_request_top(request)
        calls = []
        for publisher, imps in by_publisher.items():
            ext: dict[str, Any] = {"goldbach": {"publisherId": publisher}}
            if "mockResponse" in kept:
                ext["goldbach"]["mockResponse"] = kept["mockResponse"]
            if "inline" in kept:
                ext["inline"] = kept["inline"]
            body = {**top, "id": f"{request.get('id', '')}_{publisher}", "imp": imps, "ext": ext}
            calls.append(json_call(self.endpoint, body, imp_ids(imps), JSON_HEADERS))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 201:
            text = f"unexpected status code: {response.status}. Run with request.debug = 1 for more info"
            return None, [bad_server_response(text)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"unable to unmarshal response: {exc}")]
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                result.bids.append(TypedBid(bid, bid_type(bid)))
            except _Dropped as dropped:
                errors.append(dropped.error)
        if not result.bids:
            return None, [*errors, bad_server_response("no valid bids found in response")]
        return result, errors


def build(config: AdapterConfig) -> GoldbachAdapter:
    return GoldbachAdapter(config)

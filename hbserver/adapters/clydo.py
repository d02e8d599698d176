"""Clydo adapter: one OpenRTB call per imp, the endpoint's ``PartnerId`` and ``Region`` macros filled
from the imp's ``partnerId`` (required) and ``region`` (``us`` by default) params.

A request without a device is refused: the calls carry the device's IP (IPv4 before IPv6) and user
agent, with OpenRTB 2.5. Each call names every imp id of the request, as PBS-Go's does. A bid is
typed by its imp (audio, video, native, banner, in that order; a banner when no imp has its id);
an imp id given twice, or an imp without a media object, fails the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    expect_object,
    first_media_type,
    imp_ids,
    json_call,
    resolve_macros,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_int,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
)

_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_TYPE_ORDER = ("audio", "video", "native", "banner")


class _Refused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.error = bad_input(message)


def _bidder_of(imp: Mapping[str, Any]) -> Any:
    """``imp.ext.bidder`` as Clydo reads it (None for a null one); _Refused (Clydo's words) else."""
    if "ext" not in imp:
        raise _Refused("missing ext")
    try:
        fields: dict[str, Any] = {}
        for name, value in go_members(expect_object(imp["ext"], ""), "prebid", "bidder", "ae"):
            if name == "prebid":
                expect_object(value, "adapters.ExtImpBidder.Prebid")
            elif name == "ae":
                go_int(value, "adapters.ExtImpBidder.AuctionEnvironment")
            fields[name] = value
    except JsonShapeError:
        raise _Refused("invalid ext") from None
    if "bidder" not in fields:
        raise _Refused("missing ext.bidder")
    return fields["bidder"]


def endpoint_values(imp: Mapping[str, Any]) -> dict[str, str]:
    """The endpoint macros from the imp's params; _Refused when they do not decode or lack a partner."""
    params = {"partnerId": "", "region": ""}
    try:
        for name, value in go_members(expect_object(_bidder_of(imp), ""), *params):
            params[name] = go_value(value, GoKind.STRING, "openrtb_ext.ImpExtClydo") or ""
    except JsonShapeError:
        raise _Refused("invalid ext.bidder") from None
    if not params["partnerId"]:
        raise _Refused("invalid partnerId")
    return {"PartnerId": params["partnerId"], "Region": params["region"] or "us"}


def call_headers(request: Mapping[str, Any]) -> dict[str, str]:
    device = request.get("device")
    if not isinstance(device, dict):
        raise _Refused("Failed to get device headers")
    headers = {
        "X-Openrtb-Version": "2.5",
        "Accept": "application/json",
        "Content-Type": "application/json; charset=utf-8",
    }
    for key in ("ipv6", "ip"):
        if isinstance(device.get(key), str) and device[key]:
            headers["X-Forwarded-For"] = device[key]
    if isinstance(device.get("ua"), str) and device["ua"]:
        headers["User-Agent"] = device["ua"]
    return headers


def imp_types(imps: Any) -> dict[Any, str]:
    """imp id -> its media type; _Refused for an id given twice or an imp without a media object."""
    types: dict[Any, str] = {}
    for imp in imps or ():
        imp_id = imp.get("id", "")
        if imp_id in types:
            raise _Refused("Duplicate impression ID found")
        kind = first_media_type(imp, _TYPE_ORDER)
        if kind is None:
            raise _Refused("Failed to get media type")
        types[imp_id] = kind
    return types


class ClydoAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        try:
            headers = call_headers(request)
        except _Refused as exc:
            return [], [exc.error]
        ids = imp_ids(imps)
        top = go_request_top(request)
        calls, errors = [], []
        for imp in imps:
            try:
                uri = resolve_macros(self.endpoint, endpoint_values(imp))
            except _Refused as exc:
                errors.append(exc.error)
                continue
            calls.append(json_call(uri, {**top, "imp": [go_media_objects(imp)]}, ids, headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        try:
            types = imp_types(request.get("imp"))
        except _Refused as exc:
            return None, [exc.error]
        result = BidderResponse(currency=answer.cur or "USD")
        result.bids = [TypedBid(bid, types.get(bid.get("impid", ""), "banner")) for bid in answer.bids]
        return result, []


def build(config: AdapterConfig) -> ClydoAdapter:
    return ClydoAdapter(config)

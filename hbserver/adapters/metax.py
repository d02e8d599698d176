"""MetaX adapter: one OpenRTB call per imp, the endpoint's ``PublisherID`` and ``AdUnit`` macros
filled from the imp's ``publisherId`` and ``adunit`` params (integers).

A banner without both ``w`` and ``h`` takes the size of its first format. An answer without bids in
its first seatbid is no answer. Bids are typed by ``mtype``; one bid without a type fails the whole
answer. Every bid carries its video facts (first category, duration); the answer's currency is kept.
An empty endpoint is refused, as PBS-Go's builder does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    MTYPE_TO_TYPE,
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, json_call, json_headers, resolve_macros
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)

_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_PARAMS = {"publisherId": ("PublisherID", "PublisherID"), "adunit": ("Adunit", "AdUnit")}  # Go field, macro


def endpoint_values(imp: Mapping[str, Any]) -> dict[str, str]:
    """The endpoint macros from the imp's params; BidderError (MetaX's words) when they do not decode."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(BidderError(str(exc))) from None
    except JsonShapeError:
        raise _Refused(BidderError("Wrong MetaX bidder ext")) from None
    values = {macro: "0" for _, macro in _PARAMS.values()}
    try:
        for name, value in go_members(params, *_PARAMS):
            go_name, macro = _PARAMS[name]
            values[macro] = str(go_value(value, GoKind.INT, f"openrtb_ext.ExtImpMetaX.{go_name}") or 0)
    except JsonShapeError:
        raise _Refused(BidderError("Wrong MetaX bidder ext")) from None
    return values


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def with_banner_size(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its banner sized from the first format when it lacks ``w`` or ``h``."""
    banner = imp.get("banner")
    if not isinstance(banner, dict) or (banner.get("w") is not None and banner.get("h") is not None):
        return imp
    formats = banner.get("format")
    if not isinstance(formats, list) or not formats:
        return imp
    first = formats[0] if isinstance(formats[0], dict) else {}
    return {**imp, "banner": {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}}


def bid_video(bid: Mapping[str, Any]) -> dict[str, Any]:
    categories = bid.get("cat") or [""]
    return {"primary_category": categories[0], "duration": max(bid.get("dur", 0), 0)}


class MetaxAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        if not config.endpoint:
            raise ValueError("endpoint is empty")
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        top = go_request_top(request)
        for imp in request.get("imp") or ():
            try:
                uri = resolve_macros(self.endpoint, endpoint_values(imp))
            except _Refused as exc:
                errors.append(exc.error)
                continue
            sent = go_media_objects(with_banner_size(imp))
            calls.append(json_call(uri, {**top, "imp": [sent]}, [imp.get("id", "")], self.headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None or not answer.seatbids or not answer.seatbids[0][1]:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            bid_type = MTYPE_TO_TYPE.get(bid.get("mtype", 0))
            if bid_type is None:
                return None, [bad_server_response(f"Unsupported MType {bid.get('mtype', 0)}")]
            result.bids.append(TypedBid(bid, bid_type, bid_video=bid_video(bid)))
        return result, []


def build(config: AdapterConfig) -> MetaxAdapter:
    return MetaxAdapter(config)

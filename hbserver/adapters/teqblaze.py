"""TeqBlaze adapter (white label: its aliases name the hosts): one OpenRTB call per imp to the
configured endpoint, each carrying the request with that imp alone.

The imp's ``ext`` is replaced by ``{"bidder": {"type": ..., ...}}``: a ``placementId`` param makes it
``{"type": "publisher", "placementId": id}``, else an ``endpointId`` ``{"type": "network",
"endpointId": id}``, else ``{"type": ""}``. An imp whose ``ext`` or params do not decode is dropped
with json-iterator's error and the other imps still go. Bids are typed by ``mtype`` alone (banner,
video or native); a bid without one of those fails the whole answer. The answer's ``cur`` is the
currency when given.
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
)
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    expect_string,
    json_call,
)
from hbserver.adapters.golike import (
    decode_go_answer,
    go_media_objects,
    go_members,
    go_request_top,
    imp_bidder_params,
)

# A body that does not decode is json-iterator's own error (jsonutil's FailedToUnmarshal), not a
# bad-server-response one.
_ANSWER_WORDING = AnswerWording(body_error=BidderError)
_BID_TYPES = {mtype: kind for mtype, kind in MTYPE_TO_TYPE.items() if kind != "audio"}
# json name -> Go field of openrtb_ext.ImpExtTeqBlaze, for json-iterator's error texts
_PARAM_FIELDS = {"placementId": "PlacementID", "endpointId": "EndpointID"}


def _string_params(params: Mapping[str, Any], struct: str, fields: Mapping[str, str]) -> dict[str, str]:
    """The string fields ``fields`` (json name -> Go field) of ``params`` as json-iterator decodes
    them into ``struct``: keys matched case-insensitively, every occurrence type-checked
    (JsonShapeError in its words), the last one winning (a null reads as "", unlike encoding/json)."""
    return {name: expect_string(value, f"{struct}.{fields[name]}") for name, value in go_members(params, *fields)}


def _imp_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ext`` TeqBlaze gets for ``imp``; JsonShapeError (json-iterator's text) when the imp's
    ``ext`` or its params do not decode."""
    params = _string_params(imp_bidder_params(imp, null_is_absent=True), "openrtb_ext.ImpExtTeqBlaze", _PARAM_FIELDS)
    placement, endpoint = params.get("placementId", ""), params.get("endpointId", "")
    if placement:
        return {"bidder": {"type": "publisher", "placementId": placement}}
    if endpoint:
        return {"bidder": {"type": "network", "endpointId": endpoint}}
    return {"bidder": {"type": ""}}


class TeqblazeAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        base = go_request_top(request)
        for imp in request.get("imp") or ():
            try:
                ext = _imp_ext(imp)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            body = {**base, "imp": [go_media_objects({**imp, "ext": ext})]}
            calls.append(json_call(self.endpoint, body, (imp.get("id", ""),)))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            bid_type = _BID_TYPES.get(bid.get("mtype"))  # type: ignore[arg-type]
            if bid_type is None:
                return None, [BidderError(f"could not define media type for bid: {bid['impid']}")]
            result.bids.append(TypedBid(bid, bid_type))
        return result, []


def build(config: AdapterConfig) -> TeqblazeAdapter:
    return TeqblazeAdapter(config)

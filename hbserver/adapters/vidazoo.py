"""Vidazoo adapter: one OpenRTB call per imp to ``prebidsrvr.cootlogix.com/openrtb/<cId>``.

Each call carries the request with that imp alone, unchanged, and only a ``Content-Type`` header.
The imp's ``cId`` param, trimmed of white space and query-escaped, is appended to the endpoint (an
empty one is appended as it is); an imp whose ext or params do not decode is reported and left out.
Bids are typed by ``mtype`` alone: banner or video; any other bid is reported and skipped. Every
failure status but 204 is reported as bad input; the answer's ``cur`` is the currency when given.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

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
from hbserver.adapters.common import AnswerWording, JsonShapeError, expect_string, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GO_SPACE,
    ImpExtError,
    go_field,
    go_media_objects,
    go_request_top,
    go_typed_bids,
    imp_bidder_params,
)

HEADERS = {"Content-Type": "application/json;charset=utf-8"}  # PBS-Go sends no Accept here
# Go's unicode.IsSpace set, which strings.TrimSpace strips (Python's str.strip also strips \x1c-\x1f)
_BID_TYPES = {1: "banner", 2: "video"}

_ANSWER_WORDING = AnswerWording(
    status_error=bad_input,  # PBS-Go reports every failure status as bad input
    body_text="bad server response: &{{%!d(string={})}}. ",  # Go's %d of the error struct
)


def _connection_id(imp: dict[str, Any]) -> str:
    """The imp's ``cId`` param, trimmed; ValueError in PBS-Go's words when the ext or the params do
    not decode."""
    try:
        if imp.get("ext") is None:  # Go's imp.Ext is empty for an absent or null ext
            raise ImpExtError(ABSENT_OBJECT)
        params = imp_bidder_params(imp, null_is_absent=True)
    except ImpExtError as exc:
        raise ValueError(f"extract cId: unmarshal bidderExt: {exc}") from None
    except JsonShapeError as exc:
        raise ValueError(f"extract cId: unmarshal ImpExtVidazoo: {exc}") from None
    try:
        cid = expect_string(go_field(params, "cId", skip_null=True), "openrtb_ext.ImpExtVidazoo.ConnectionId")
    except JsonShapeError as exc:
        raise ValueError(f"extract cId: unmarshal ImpExtVidazoo: {exc}") from None
    return cid.strip(GO_SPACE)


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    bid_type = _BID_TYPES.get(bid.get("mtype", 0))
    return TypedBid(bid, bid_type) if bid_type else bad_input(f"Could not define bid type for imp: {bid['impid']}")


class VidazooAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        top = go_request_top(request)
        for imp in request.get("imp") or ():
            try:
                cid = _connection_id(imp)
            except ValueError as exc:
                errors.append(BidderError(str(exc)))
                continue
            uri = self.endpoint + quote_plus(cid, safe="")  # Go's url.QueryEscape
            calls.append(json_call(uri, {**top, "imp": [go_media_objects(imp)]}, [imp.get("id", "")], HEADERS))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, _typed, _ANSWER_WORDING)


def build(config: AdapterConfig) -> VidazooAdapter:
    return VidazooAdapter(config)

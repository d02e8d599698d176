"""OneTag adapter: the request, unchanged, in one OpenRTB call to
``prebid-server.onetag-sys.com/prebid-server/{{.PublisherID}}``.

Every imp must carry the same non-empty ``pubId`` param, which fills the endpoint's
``{{.PublisherID}}`` as given (PBS-Go's text template does not escape it); any imp without one, or
with another, fails the whole request. The call has no headers of its own. Bids are typed by their
imp (banner, else video, else native); a bid for an imp not in the request fails the whole answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
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
from hbserver.adapters.common import JsonShapeError, expect_object, imp_bid_type, resolve_macros
from hbserver.adapters.improvedigital import GO_INT, GO_STR, go_answer, go_fields, go_value

UNEXPECTED_STATUS = "Unexpected status code: {}. Run with request.debug = 1 for more info."
_EXT_NAMES = {"prebid": "prebid", "bidder": "bidder", "ae": "ae"}
_PARAM_NAMES = {"pubid": "pubId", "ext": "ext"}
_TYPE_ORDER = ("banner", "video", "native")


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _publisher_id(imp: dict[str, Any]) -> str:
    try:
        if "ext" not in imp:
            raise JsonShapeError("no imp.ext")
        ext = go_fields(expect_object(imp["ext"], ""), _EXT_NAMES)
        expect_object(ext.get("prebid"), "adapters.ExtImpBidder.Prebid")
        go_value(ext.get("ae"), GO_INT, "adapters.ExtImpBidder.AuctionEnvironment")
    except JsonShapeError:
        raise _BadImp("Bidder extension not provided or can't be unmarshalled") from None
    try:
        bidder = ext.get("bidder")
        if bidder is None:  # null or absent: PBS-Go's decoder has no bytes to read
            raise JsonShapeError("no params")
        params = go_fields(expect_object(bidder, ""), _PARAM_NAMES)
        return go_value(params.get("pubId"), GO_STR, "openrtb_ext.ExtImpOnetag.PubId") or ""
    except JsonShapeError:
        raise _BadImp("Error while unmarshaling bidder extension") from None


class OnetagAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        publisher = ""
        for imp in imps:
            try:
                imp_publisher = _publisher_id(imp)
            except _BadImp as exc:
                return [], [bad_input(str(exc))]
            if not imp_publisher:
                return [], [bad_input("The publisher ID must not be empty")]
            if publisher and imp_publisher != publisher:
                return [], [bad_input("There must be only one publisher ID")]
            publisher = imp_publisher
        uri = resolve_macros(self.endpoint, {"PublisherID": publisher})
        ids = [imp.get("id", "") for imp in imps]
        return [RequestData("POST", uri, orjson.dumps(request), {}, imp_ids=ids)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            return None, [bad_server_response(UNEXPECTED_STATUS.format(response.status))]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(str(exc))]
        imps = request.get("imp") or []
        result = BidderResponse(currency=answer.cur or "USD")
        for _, bids in answer.seatbids:
            for bid in bids:
                bid_type = _bid_type(imps, bid["impid"])
                if bid_type is None:
                    message = f"The impression with ID {bid['impid']} is not present into the request"
                    return None, [bad_server_response(message)]
                result.bids.append(TypedBid(bid, bid_type))
        return result, []


def _bid_type(imps: list[dict[str, Any]], imp_id: str) -> str | None:
    """The first imp with ``imp_id`` that asks for banner, video or native decides (PBS-Go looks
    past an imp of that id that asks for none of them)."""
    for imp in imps:
        if imp.get("id") == imp_id:
            bid_type = imp_bid_type((imp,), imp_id, _TYPE_ORDER)
            if bid_type is not None:
                return bid_type
    return None


def build(config: AdapterConfig) -> OnetagAdapter:
    return OnetagAdapter(config)

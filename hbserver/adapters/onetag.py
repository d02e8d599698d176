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
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    UNEXPECTED_STATUS,
    AnswerWording,
    JsonShapeError,
    expect_string,
    first_media_type,
    resolve_macros,
)
from hbserver.adapters.golike import ImpExtError, decode_go_answer, go_field, imp_bidder_params

_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".", bad_request_is_input=False)


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _publisher_id(imp: dict[str, Any]) -> str:
    """The imp's ``pubId`` param; _BadImp in PBS-Go's words when ``imp.ext`` or the params do not
    decode (a null ``bidder`` included: PBS-Go's decoder has no bytes to read)."""
    try:
        params = imp_bidder_params(imp, null_is_absent=True)
        return expect_string(go_field(params, "pubId"), "openrtb_ext.ExtImpOnetag.PubId")
    except ImpExtError:
        raise _BadImp("Bidder extension not provided or can't be unmarshalled") from None
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
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        imps = request.get("imp") or []
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
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
            bid_type = first_media_type(imp, BANNER_VIDEO_NATIVE)
            if bid_type is not None:
                return bid_type
    return None


def build(config: AdapterConfig) -> OnetagAdapter:
    return OnetagAdapter(config)

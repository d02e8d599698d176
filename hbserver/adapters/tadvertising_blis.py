"""T-Advertising (Blis) adapter: the whole request in one OpenRTB call to the configured endpoint.

The first imp's ``publisherId`` becomes the publisher id of the app (when there is one), else of the
site (one is made when the request has neither), and goes in the ``X-Supply-Partner-Id`` header.
The request is sent as PBS-Go writes its typed model. Bids are typed by ``mtype`` (banner, video,
native); ``${AUCTION_PRICE}`` in ``adm``, ``nurl`` and ``burl`` is replaced by the price.
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
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, json_call, mtype_bid_type
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_field,
    go_typed_request,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.stackadapt import with_price_macro

BID_TYPES = ("banner", "video", "native")
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)


def publisher_id(imps: Any) -> str:
    """The first imp's ``publisherId``; BidderError (bad input) when its ext or params do not decode."""
    imp = imps[0] if isinstance(imps, list) and imps else {}
    try:
        params = imp_bidder_params(imp)
        value = go_value(go_field(params, "publisherId"), GoKind.STRING, "openrtb_ext.ImpExtTadvertising.PublisherId")
    except ImpExtError as exc:
        raise _Refused(bad_input(f"Invalid imp.ext for impression index 0. Error Information: {exc}")) from None
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"Invalid imp.ext.bidder for impression index 0. Error Information: {exc}")) from None
    return value or ""


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def with_publisher(request: Mapping[str, Any], publisher: str) -> dict[str, Any]:
    """The request with the app's (when there is an app), else the site's, publisher id set."""
    holder = "app" if request.get("app") is not None else "site"
    place = request.get(holder)
    place = dict(place) if isinstance(place, dict) else {}
    existing = place.get("publisher")
    place["publisher"] = {**(existing if isinstance(existing, dict) else {}), "id": publisher}
    return {**request, holder: place}


class TAdvertisingBlisAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        try:
            publisher = publisher_id(request.get("imp"))
        except _Refused as refused:
            return [], [refused.error]
        body = go_typed_request(with_publisher(request, publisher))
        headers = {"Content-Type": "application/json", "X-Supply-Partner-Id": publisher}
        ids = [imp.get("id", "") for imp in body.get("imp") or () if isinstance(imp, dict)]
        return [json_call(self.endpoint, body, ids, headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = mtype_bid_type(bid)
            if kind not in BID_TYPES:
                text = f'Failed to parse media type of impression ID "{bid.get("impid", "")}"'
                errors.append(bad_server_response(text))
                continue
            result.bids.append(TypedBid(with_price_macro(bid), kind))
        return result, errors


def build(config: AdapterConfig) -> TAdvertisingBlisAdapter:
    return TAdvertisingBlisAdapter(config)

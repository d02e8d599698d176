"""Seedtag adapter: every imp whose floor can be read in USD, in one OpenRTB call to
``s.seedtag.com/c/openrtb?partner=prebidserver``.

A positive floor in another currency is converted to USD (``bidfloorcur: USD``); an imp whose floor
has no rate is left out with the conversion error, and when no imp is left nothing is sent. The
request goes with ``cur: ["USD"]`` and the params untouched. Bids are typed by ``mtype`` (1 banner,
2 video); any other bid is reported (``bid.MType invalid``) and the rest are kept. Bids are always
in USD: the answer's ``cur`` is not read.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import AnswerWording, floor_in_usd, imp_ids, json_call, json_headers
from hbserver.adapters.golike import go_media_objects, go_request_top, go_typed_bids

# PBS's usual status texts; an answer that does not decode is reported with the decoder's bare text
_ANSWER_WORDING = AnswerWording(body_error=BidderError)
_BID_TYPES = {1: "banner", 2: "video"}


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    bid_type = _BID_TYPES.get(bid.get("mtype", 0))
    return TypedBid(bid, bid_type) if bid_type else BidderError("bid.MType invalid")


class SeedtagAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                imps.append(go_media_objects(floor_in_usd(imp, info)))
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
        if not imps:
            return [], errors
        body = go_request_top(request)
        body["cur"] = ["USD"]
        body["imp"] = imps
        return [json_call(self.endpoint, body, imp_ids(imps), self.headers)], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return go_typed_bids(response, _typed, _ANSWER_WORDING, answer_currency=False)


def build(config: AdapterConfig) -> SeedtagAdapter:
    return SeedtagAdapter(config)

"""Kargo adapter: the request unchanged, in one OpenRTB call to ``krk2.kargo.com/api/v1/openrtb``.

The call carries no headers of its own (PBS-Go sends Kargo none). Any status but 200 or 204 is a
bad server response (Kargo's wording ends in a full stop). Bids are typed by their
``ext.mediaType``: ``video`` or ``native``, anything else (or an unreadable ext) is a banner. The
answer's currency is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
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
)
from hbserver.adapters.common import UNEXPECTED_STATUS, AnswerWording, answer_bids, decode_answer, imp_ids
from hbserver.adapters.golike import NOT_AN_OBJECT, go_members

_TYPED = frozenset({"video", "native"})
_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".", bad_request_is_input=False, not_an_object=NOT_AN_OBJECT)


def _bid_type(bid: Mapping[str, Any]) -> str:
    """``ext.mediaType`` (its key in any case, the last one wins) when video or native, else banner."""
    ext = bid.get("ext")
    if not isinstance(ext, dict):
        return "banner"
    media_type = ""
    for _, value in go_members(ext, "mediaType"):
        if value is None:
            media_type = ""
        elif isinstance(value, str):
            media_type = value
        else:
            return "banner"  # Go fails to decode the ext and falls back to banner
    return media_type if media_type in _TYPED else "banner"


class KargoAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        return [RequestData("POST", self.endpoint, orjson.dumps(request), {}, imp_ids(request.get("imp") or ()))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        data, failure = decode_answer(response, _ANSWER_WORDING)
        if data is None:
            return None, failure
        currency = data.get("cur")
        result = BidderResponse(currency=currency if isinstance(currency, str) and currency else "USD")
        for _, bid in answer_bids(data):
            result.bids.append(TypedBid(bid, _bid_type(bid)))
        return result, []


def build(config: AdapterConfig) -> KargoAdapter:
    return KargoAdapter(config)

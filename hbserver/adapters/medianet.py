"""Media.net adapter: the bidder's OpenRTB 2.6 request, unchanged, in one call.

The endpoint carries the host's ``extra_info`` (its own URL, from the bidder definition or the
host's config) as the query parameter ``src``; the query is then re-encoded with its parameters
sorted by name, as Go's ``url.Values`` does. Bids are typed by ``mtype`` (banner, video or
native); a bid with another ``mtype`` is dropped with an error. Prices are always in USD.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import answer_bids, decode_answer, imp_ids, json_call, typed_bid_response
from hbserver.adapters.golike import with_query_param

_HEADERS = {"Content-Type": "application/json;charset=utf-8"}
_MTYPES = {1: "banner", 2: "video", 4: "native"}


def endpoint_with_source(endpoint: str, source: str) -> str:
    """``endpoint`` with ``src=<source>`` added to its query (keys sorted, Go's query encoding);
    unchanged when ``source`` is empty."""
    if not source:
        return endpoint
    try:
        return with_query_param(endpoint, "src", source)
    except ValueError:  # Go's url.Parse fails too: the endpoint stays as it is
        return endpoint


class MedianetAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = endpoint_with_source(config.endpoint, str(config.extra.get("extra_info") or ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        return [json_call(self.endpoint, request, imp_ids(request.get("imp") or ()), _HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_answer(response)
        if answer is None:
            return None, failure
        return typed_bid_response((bid for _, bid in answer_bids(answer)), _typed)


def _typed(bid: dict[str, Any]) -> TypedBid | BidderError:
    mtype = bid.get("mtype")
    number = isinstance(mtype, int | float) and not isinstance(mtype, bool)
    bid_type = _MTYPES.get(mtype) if number else None  # type: ignore[arg-type]
    if bid_type is None:
        return BidderError(f"Unable to fetch mediaType for imp: {bid.get('impid', '')}")
    return TypedBid(bid, bid_type)


def build(config: AdapterConfig) -> MedianetAdapter:
    return MedianetAdapter(config)

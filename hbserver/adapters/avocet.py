"""Avocet adapter: the request as it comes in one call (the recipe ``recipes/avocet.yaml``); the
answer read as Avocet's own.

A failure status is a bad server response naming the status and the body ("no response body" when
there is none). Each bid's ``ext.avocet`` gives its ``duration`` and ``deal_priority``: a bid with a
duration, or whose ``api`` is VPAID 1.0 or 2.0, is a video (its duration the video's), any other a
banner. A bid whose ext does not decode fails the whole answer, with every such bid's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import GoAnswer, GoKind, go_field, go_fields, go_value
from hbserver.adapters.recipe import RecipeAdapter

_VPAID = (1, 2)  # adcom1.APIVPAID10, APIVPAID20


def avocet_ext(bid: Mapping[str, Any]) -> tuple[int, int]:
    """(duration, deal priority) of ``bid.ext.avocet`` (0s when absent); JsonShapeError in
    json-iterator's words when the ext does not decode."""
    ext = bid.get("ext")
    if ext is None:
        return 0, 0
    avocet = go_field(expect_object(ext, ""), "avocet")
    if avocet is None:
        return 0, 0
    members = go_fields(expect_object(avocet, "avocet.avocetBidExt.Avocet"), "duration", "deal_priority")
    duration = go_value(members.get("duration"), GoKind.INT, "avocet.avocetBidExtension.Duration") or 0
    priority = go_value(members.get("deal_priority"), GoKind.INT, "avocet.avocetBidExtension.DealPriority") or 0
    return duration, priority


def avocet_bid_type(bid: Mapping[str, Any], duration: int) -> str:
    """Video for a bid with a duration or a VPAID api, else banner."""
    return "video" if duration != 0 or bid.get("api") in _VPAID else "banner"


class AvocetAdapter(RecipeAdapter):
    """The recipe ``recipes/avocet.yaml``, the failure status and the bids Avocet's own."""

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status not in (200, 204):
            body = response.body.decode(errors="replace") or "no response body"
            return None, [bad_server_response(f"received status code: {response.status} error: {body}")]
        return super().make_bids(request, call, response)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = BidderResponse(), []
        for bid in answer.bids:
            try:
                duration, priority = avocet_ext(bid)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            kind = avocet_bid_type(bid, duration)
            video = {"duration": duration, "primary_category": ""} if kind == "video" else None
            result.bids.append(TypedBid(bid, kind, deal_priority=priority, bid_video=video))
        return (None, errors) if errors else (result, [])


def build(config: AdapterConfig) -> AvocetAdapter:
    return AvocetAdapter.of_code("avocet", config)

"""BidMyAdz adapter: the recipe ``recipes/bidmyadz.yaml``, with BidMyAdz's own request checks and
answer.

A request is refused, with every problem, when it has more than one imp, its device has neither an
IPv4 nor an IPv6 address, or no user agent. Of the answer only the first seatbid's first bid is
taken (none: "Empty SeatBid.Bids"), typed by its ``ext.mediaType`` (``ParseBidType``: an unknown
type fails the answer).
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
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, go_field
from hbserver.adapters.recipe import Prepared, RecipeAdapter, typed_imp

_BID_TYPES = ("banner", "video", "audio", "native")


def request_problems(request: Mapping[str, Any]) -> list[BidderError]:
    """What BidMyAdz refuses in a request, in PBS-Go's order and words (a missing device counts as
    one without an address or a user agent)."""
    device = request.get("device")
    device = device if isinstance(device, Mapping) else {}
    problems = []
    if len(request.get("imp") or ()) > 1:
        problems.append(bad_input("Bidder does not support multi impression"))
    if not device.get("ip") and not device.get("ipv6"):
        problems.append(bad_input("IP/IPv6 is a required field"))
    if not device.get("ua"):
        problems.append(bad_input("User-Agent is a required field"))
    return problems


def ext_media_type(bid: Mapping[str, Any]) -> str:
    """``bid.ext.mediaType`` as PBS-Go decodes it ("" without one); JsonShapeError when it does not."""
    if "ext" not in bid:
        raise JsonShapeError(ABSENT_OBJECT)
    kind = go_field(expect_object(bid["ext"], ""), "mediaType")
    return "" if kind is None else expect_string(kind, "bidmyadz.bidExt.MediaType")


class BidmyadzAdapter(RecipeAdapter):
    """The recipe, the request's checks and the bid BidMyAdz's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        problems = request_problems(request)
        if problems:
            return [], problems
        prepared = [Prepared(typed_imp(imp), self.endpoint, {}) for imp in request.get("imp") or ()]
        return ([self.call(request, prepared)] if prepared else []), []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = answer.seatbids[0][1]
        if not bids:
            return None, [bad_server_response("Empty SeatBid.Bids")]
        try:
            kind = ext_media_type(bids[0])
        except JsonShapeError as exc:
            return None, [bad_server_response(f"BidExt parsing error. {exc}")]
        if kind not in _BID_TYPES:
            return None, [BidderError(f"invalid BidType: {kind}")]
        return BidderResponse(bids=[TypedBid(bids[0], kind)]), []


def build(config: AdapterConfig) -> BidmyadzAdapter:
    return BidmyadzAdapter.of_code("bidmyadz", config)

"""SA Lunamedia adapter: the recipe ``recipes/sa_lunamedia.yaml`` (the call, the answer's wording);
of the answer only the first bid of the first seatbid is taken, typed by its ``ext.mediaType`` as
``openrtb_ext.ParseBidType`` reads it. An ext that does not decode fails the answer (``Missing
BidExt``), as does a type other than banner, video, audio or native."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid, bad_server_response
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string
from hbserver.adapters.golike import GoAnswer, go_members
from hbserver.adapters.recipe import RecipeAdapter

BID_TYPES = frozenset({"banner", "video", "audio", "native"})


def media_type(bid: Mapping[str, Any]) -> str:
    """The bid's ``ext.mediaType`` ("" without one); JsonShapeError when its ext is absent or does not
    decode."""
    ext = bid.get("ext")
    if ext is None:
        raise JsonShapeError("no ext")
    texts = [expect_string(value, "") for _, value in go_members(expect_object(ext, ""), "mediaType")]
    return texts[-1] if texts else ""


class SaLunamediaAdapter(RecipeAdapter):
    """The recipe; the first seatbid's first bid alone, typed by its ext (the recipe's empty answer
    errors leave at least one)."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bid = answer.seatbids[0][1][0]
        try:
            kind = media_type(bid)
        except JsonShapeError:
            return None, [bad_server_response("Missing BidExt")]
        if kind not in BID_TYPES:
            return None, [BidderError(f"invalid BidType: {kind}")]
        return BidderResponse([TypedBid(bid, kind)]), []


def build(config: AdapterConfig) -> SaLunamediaAdapter:
    return SaLunamediaAdapter.of_code("sa_lunamedia", config)

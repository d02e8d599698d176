"""SmartHub (Attekmi) adapter: the recipe ``recipes/smarthub.yaml`` (one call to the endpoint filled
with the first imp's params, the answer's status texts), its reading of the answer SmartHub's own:
only the first bid of the first seatbid is taken, typed by its ``ext.mediaType``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid, bad_server_response
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, go_members
from hbserver.adapters.recipe import RecipeAdapter

_MEDIA_TYPES = frozenset({"banner", "video", "audio", "native"})


def _media_type(bid: Mapping[str, Any]) -> str:
    """``ext.mediaType`` as Go decodes the bid's ext; JsonShapeError when the ext is absent, null or
    not an object, or the field is not a string."""
    if bid.get("ext") is None:  # Go holds no bytes to decode
        raise JsonShapeError(ABSENT_OBJECT)
    kind = ""
    for _, value in go_members(expect_object(bid["ext"], ""), "mediaType"):
        kind = expect_string(value, "smarthub.bidExt.MediaType")
    return kind


class SmarthubAdapter(RecipeAdapter):
    """The recipe ``recipes/smarthub.yaml``; of the answer only the first bid of the first seatbid is
    taken, typed by its ``ext.mediaType`` (SmartHub's own reading)."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        bids = answer.seatbids[0][1]  # the recipe's empty_seatbid_error: there is a seatbid
        if not bids:
            return None, [bad_server_response("Array SeatBid[0].Bid cannot be empty")]
        bid = bids[0]
        try:
            kind = _media_type(bid)
        except JsonShapeError:
            return None, [bad_server_response("Field BidExt is required")]
        if kind not in _MEDIA_TYPES:
            return None, [BidderError(f"invalid BidType: {kind}")]
        return BidderResponse([TypedBid(bid, kind)]), []


def build(config: AdapterConfig) -> SmarthubAdapter:
    return SmarthubAdapter.of_code("smarthub", config)

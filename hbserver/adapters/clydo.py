"""Clydo adapter: the recipe ``recipes/clydo.yaml`` (one call per imp, its endpoint, headers and the
answer's wording) plus the bidder's own bid typing: a map of the request's imps built up front (audio,
video, native, banner, in that order), where an imp id given twice or an imp without a media object
fails the whole answer, and a bid whose imp is not in the map is a banner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid, bad_input
from hbserver.adapters.common import first_media_type
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter

_TYPE_ORDER = ("audio", "video", "native", "banner")


def imp_types(imps: Any) -> dict[Any, str] | BidderError:
    """imp id -> its media type; the error (bad input) for an id given twice or an imp without a
    media object."""
    types: dict[Any, str] = {}
    for imp in imps or ():
        imp_id = imp.get("id", "")
        if imp_id in types:
            return bad_input("Duplicate impression ID found")
        kind = first_media_type(imp, _TYPE_ORDER)
        if kind is None:
            return bad_input("Failed to get media type")
        types[imp_id] = kind
    return types


class ClydoAdapter(RecipeAdapter):
    """The recipe's calls and answer wording, its bids typed by Clydo's map of the request's imps."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        types = imp_types(request.get("imp"))
        if isinstance(types, BidderError):
            return None, [types]
        result = BidderResponse(currency=answer.cur or "USD")
        result.bids = [TypedBid(bid, types.get(bid.get("impid", ""), "banner")) for bid in answer.bids]
        return result, []


def build(config: AdapterConfig) -> ClydoAdapter:
    return ClydoAdapter.of_code("clydo", config)

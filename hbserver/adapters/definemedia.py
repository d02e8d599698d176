"""Definemedia adapter: the recipe ``recipes/definemedia.yaml`` (the call and the answer's wording)
plus the bidder's own bid typing: ``bid.ext.prebid.type`` must be banner or native; a bid with
``prebid`` naming any other type, or without a decodable ``prebid``, is dropped with its error (a
bad server response)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, bad_server_response
from hbserver.adapters.common import JsonShapeError, typed_as
from hbserver.adapters.golike import GoAnswer, typed_bids
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import ext_prebid_type

INVALID_TYPE = "Invalid mediatype in the impression"


def definemedia_type(bid: Mapping[str, Any]) -> str | BidderError:
    """The bid's type, or the error that drops it."""
    try:
        kind = None if bid.get("ext") is None else ext_prebid_type(bid)
    except JsonShapeError:
        kind = None
    if kind is None:
        return bad_server_response(f'Failed to parse impression "{bid.get("impid", "")}" mediatype')
    return kind if kind in ("banner", "native") else bad_server_response(INVALID_TYPE)


class DefinemediaAdapter(RecipeAdapter):
    """The recipe's call and answer, the bids typed by Definemedia's rule."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, typed_as(definemedia_type), answer_currency=False)


def build(config: AdapterConfig) -> DefinemediaAdapter:
    return DefinemediaAdapter.of_code("definemedia", config)

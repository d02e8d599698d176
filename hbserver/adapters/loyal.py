"""Loyal adapter: the recipe ``recipes/loyal.yaml`` (the calls and the answer's status checks), its bids
typed by ``ext.prebid.type`` in Loyal's words: banner, video or native; an ext that does not decode,
one without ``prebid`` or any other type (audio too) fails the whole answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.common import JsonShapeError, typed_as
from hbserver.adapters.golike import GoAnswer, typed_bids
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import ext_prebid_type

_TYPES = ("banner", "video", "native")


def bid_type(bid: Mapping[str, Any]) -> str | BidderError:
    """The bid's ``ext.prebid.type``, else the error (Loyal's words) that fails the answer."""
    impid = bid.get("impid", "")
    try:
        kind = ext_prebid_type(bid)
    except JsonShapeError as exc:
        return BidderError(f"unable to deserialize imp {impid} bid.ext, error: {exc}")
    if kind is None:
        return BidderError(f"imp {impid} with unknown media type")
    return kind if kind in _TYPES else BidderError(f"invalid BidType: {kind}")


class LoyalAdapter(RecipeAdapter):
    """The recipe, the bids typed in Loyal's words."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, typed_as(bid_type), first_error_fails=True)


def build(config: AdapterConfig) -> LoyalAdapter:
    return LoyalAdapter.of_code("loyal", config)

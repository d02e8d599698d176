"""Madvertise adapter: the recipe ``recipes/madvertise.yaml``, with its own rules: a zone id must be
given and at least 7 bytes long (each failure naming the imp), and a bid is a video when one of its
creative attributes is a video one (6: auto-play, 7: user-initiated, 16: skip button), else a banner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid, bad_input
from hbserver.adapters.golike import GoAnswer, typed_bids
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

VIDEO_ATTRS = frozenset({6, 7, 16})  # adcom1's AttrVideoAuto, AttrVideoUser, AttrHasSkipButton
MIN_ZONE_ID = 7


def madvertise_type(bid: Mapping[str, Any]) -> str:
    """``video`` when the bid has a video creative attribute, else ``banner``."""
    attrs = bid.get("attr")
    if isinstance(attrs, list) and any(attr in VIDEO_ATTRS for attr in attrs if not isinstance(attr, bool)):
        return "video"
    return "banner"


class MadvertiseAdapter(RecipeAdapter):
    """The recipe, the zone id checked and the bids typed by their attributes."""

    def read_params(self, imp: Mapping[str, Any], index: int) -> dict[str, Any]:
        params = super().read_params(imp, index)
        imp_id = imp.get("id", "")
        if not params["zoneId"]:
            raise DroppedImp(bad_input(f"ext.bidder.zoneId not provided; ImpID={imp_id}"))
        if len(params["zoneId"].encode()) < MIN_ZONE_ID:
            raise DroppedImp(bad_input(f"The minLength of zone ID is {MIN_ZONE_ID}; ImpID={imp_id}"))
        return params

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, lambda bid: TypedBid(bid, madvertise_type(bid)))


def build(config: AdapterConfig) -> MadvertiseAdapter:
    return MadvertiseAdapter.of_code("madvertise", config)

"""AJA adapter: the recipe ``recipes/aja.yaml`` plus the bidder's own rule: a bid whose impid names
no imp of the request is let go silently (PBS-Go only types the bids it finds an imp for)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter


class AjaAdapter(RecipeAdapter):
    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        imp_ids = {imp.get("id") for imp in request.get("imp") or ()}
        seatbids = [(seat, [bid for bid in bids if bid.get("impid") in imp_ids]) for seat, bids in answer.seatbids]
        return super().typed_bids(request, answer._replace(seatbids=seatbids))


def build(config: AdapterConfig) -> AjaAdapter:
    return AjaAdapter.of_code("aja", config)

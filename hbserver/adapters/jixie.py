"""Jixie adapter: the recipe ``recipes/jixie.yaml`` (one call, the answer's wording), the bids
Jixie's own: each bid's impid becomes its own id, and a bid is video when its adm mentions
``<?xml`` or ``<vast`` (in any case), else a banner; the answer's currency, USD when it names none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter

VIDEO_MARKS = ("<?xml", "<vast")


def bid_type(adm: Any) -> str:
    """video when the markup mentions an XML or VAST document, else banner."""
    text = adm.lower() if isinstance(adm, str) else ""
    return "video" if any(mark in text for mark in VIDEO_MARKS) else "banner"


class JixieAdapter(RecipeAdapter):
    """The recipe's call and answer, Jixie's bids."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            result.bids.append(TypedBid({**bid, "impid": bid.get("id", "")}, bid_type(bid.get("adm"))))
        return result, []


def build(config: AdapterConfig) -> JixieAdapter:
    return JixieAdapter.of_code("jixie", config)

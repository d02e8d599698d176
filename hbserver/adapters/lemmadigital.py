"""Lemma Digital adapter: the recipe ``recipes/lemmadigital.yaml``, every bid typed by the request's
first imp (video when it has a video object, else banner), whatever imp the bid is for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter


def first_imp_type(request: Mapping[str, Any]) -> str:
    """video when the request's first imp has a video object, else banner."""
    imps = request.get("imp") or [{}]
    return "video" if isinstance(imps[0], Mapping) and imps[0].get("video") is not None else "banner"


class LemmadigitalAdapter(RecipeAdapter):
    """The recipe (every bid a banner), the first imp's type given to every bid."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        kind = first_imp_type(request)
        for bid in result.bids if result is not None else ():
            bid.bid_type = kind
        return result, errors


def build(config: AdapterConfig) -> LemmadigitalAdapter:
    return LemmadigitalAdapter.of_code("lemmadigital", config)

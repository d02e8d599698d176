"""IMDS adapter (synacormedia is its alias): the recipe ``recipes/imds.yaml`` (one call with the
imps that have a seatId and a tagId, the endpoint, the answer), IMDS's own rules around it: the
request's ext is replaced by ``{"seatId": <the first sent imp's>}``, and only banner and video bids
are kept (a bid whose imp is native or audio is let go silently).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import Prepared, RecipeAdapter

KEPT_TYPES = ("banner", "video")


class ImdsAdapter(RecipeAdapter):
    """The recipe's call with IMDS's request ext; the recipe's bids of the kept types."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        return super().call({**request, "ext": {"seatId": group[0].params["seatId"]}}, group, more)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        response, errors = super().typed_bids(request, answer)
        if response is not None:
            response.bids = [bid for bid in response.bids if bid.bid_type in KEPT_TYPES]
        return response, errors


def build(config: AdapterConfig) -> ImdsAdapter:
    return ImdsAdapter.of_code("imds", config)

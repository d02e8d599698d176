"""Epom adapter: the recipe ``recipes/epom.yaml`` (the call, the answer's wording and bid typing)
plus the bidder's own rules: a request without a device IPv4 gets no call (bad input), and an
answer without seatbids, or whose first seatbid has no bids, is PBS-Go's warning "No bids in
response" (hbserver reports it as a plain bidder error)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo, bad_input
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter

NO_IP = "ipv4 address is required field"
NO_BIDS = "No bids in response"


class EpomAdapter(RecipeAdapter):
    """The recipe, with Epom's device and empty-answer rules."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        device = request.get("device")
        if not (isinstance(device, dict) and device.get("ip")):
            return [], [bad_input(NO_IP)]
        return super().make_requests(request, info)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if not answer.seatbids or not answer.seatbids[0][1]:
            return None, [BidderError(NO_BIDS)]
        return super().typed_bids(request, answer)


def build(config: AdapterConfig) -> EpomAdapter:
    return EpomAdapter.of_code("epom", config)

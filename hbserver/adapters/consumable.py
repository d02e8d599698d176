"""Consumable adapter: the recipe ``recipes/consumable.yaml`` (the first imp's params, the answer and
bid typing) plus the bidder's own call: the whole request, as Go's typed ``openrtb2.BidRequest``
writes it, in one call. A site request goes to ``<endpoint>/sb/rtb`` and needs a site, network or
unit id; any other to ``<endpoint>/rtb/bid?s=<placementid>`` and needs the placement id. A video
bid carries its ``dur`` as the video duration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ErrorCode,
    RequestData,
    RequestInfo,
)
from hbserver.adapters.common import imp_ids, json_call, with_video_facts
from hbserver.adapters.golike import GoAnswer, go_typed_request
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
SITE_IDS_REQUIRED = "SiteId, NetworkId and UnitId are all required for site requests"
PLACEMENT_REQUIRED = "PlacementId is required for non-site requests"


def consumable_uri(endpoint: str, request: Mapping[str, Any], params: Mapping[str, Any]) -> str | BidderError:
    """The call's URI for a site or a non-site request, or the error when the params lack its ids."""
    if request.get("site") is not None:
        if not (params.get("siteId") or params.get("networkId") or params.get("unitId")):
            return BidderError(SITE_IDS_REQUIRED, ErrorCode.FAILED_TO_REQUEST_BIDS)
        return endpoint + "/sb/rtb"
    if not params.get("placementid"):
        return BidderError(PLACEMENT_REQUIRED, ErrorCode.FAILED_TO_REQUEST_BIDS)
    return f"{endpoint}/rtb/bid?s={params['placementid']}"


def video_facts(bid: Mapping[str, Any]) -> dict[str, Any]:
    """A video bid's duration (its ``dur``), no primary category."""
    dur = bid.get("dur")
    return {"duration": dur if isinstance(dur, int) else 0, "primary_category": ""}


class ConsumableAdapter(RecipeAdapter):
    """The recipe's params and answer, Consumable's call and video duration."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], []
        try:
            params = self.read_params(imps[0], 0)
        except DroppedImp as dropped:
            return [], [dropped.error]
        uri = consumable_uri(self.endpoint, request, params)
        if isinstance(uri, BidderError):
            return [], [uri]
        return [json_call(uri, go_typed_request(request), imp_ids(imps), _HEADERS)], []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return with_video_facts(super().typed_bids(request, answer), video_facts)


def build(config: AdapterConfig) -> ConsumableAdapter:
    return ConsumableAdapter.of_code("consumable", config)

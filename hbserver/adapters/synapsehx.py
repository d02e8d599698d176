"""SynapseHX adapter: the recipe ``recipes/synapsehx.yaml``, its call sent to the configured endpoint
with the first imp's ``tenantId`` set as the ``pid`` query parameter (the query re-encoded as Go's
``url.Values`` does), and its bids typed by ``mtype`` (banner or video; any other mtype is an error),
else, for a bid without one, by ``ext.prebid.type`` (banner or video), each untyped bid an error of
its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData
from hbserver.adapters.common import JsonShapeError, typed_as
from hbserver.adapters.golike import GoAnswer, typed_bids, with_query_value
from hbserver.adapters.recipe import Prepared, RecipeAdapter
from hbserver.adapters.steps import ext_prebid_type

MARKUP_TYPES = {1: "banner", 2: "video"}


def bid_type(bid: Mapping[str, Any]) -> str | BidderError:
    """The bid's type, or the error PBS-Go's synapseHX reports for it."""
    mtype = bid.get("mtype") or 0
    if mtype:
        return MARKUP_TYPES.get(mtype) or BidderError(f"unsupported media type {mtype}")
    if bid.get("ext") is not None:
        try:
            kind = ext_prebid_type(bid)
        except JsonShapeError:
            kind = None
        else:
            if kind is not None:  # a prebid object: its type, banner or video
                return kind if kind in ("banner", "video") else BidderError(f'unsupported media type "{kind}"')
    return BidderError(f'failed to parse impression "{bid.get("impid", "")}" mediatype')


class SynapseHXAdapter(RecipeAdapter):
    """The recipe, its endpoint's pid and its bid types SynapseHX's own."""

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        call = super().call(request, group, more)
        call.uri = with_query_value(self.endpoint, "pid", str(group[0].params.get("tenantId") or ""))
        return call

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, typed_as(bid_type))


def build(config: AdapterConfig) -> SynapseHXAdapter:
    return SynapseHXAdapter.of_code("synapseHX", config)

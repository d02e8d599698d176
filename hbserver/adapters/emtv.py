"""EMTV adapter: the recipe ``recipes/emtv.yaml`` (params, the imp's ext, the answer and bid typing)
plus the bidder's own imp rule: an imp whose params name neither a placement nor an endpoint is
left out silently, any imp whose ext or params fail stops the request, and a request left without
a call fails with "found no valid impressions"."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter

NO_VALID_IMPS = "found no valid impressions"


class EmtvAdapter(RecipeAdapter):
    """The recipe's calls for the imps that name a placement or an endpoint."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls = []
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                prepared = self.prepare_imp(imp, info, index)
            except DroppedImp as dropped:
                return [], [dropped.error]
            if prepared.params.get("placementId") or prepared.params.get("endpointId"):
                calls.append(self.call(request, [prepared]))
        return (calls, []) if calls else ([], [BidderError(NO_VALID_IMPS)])


def build(config: AdapterConfig) -> EmtvAdapter:
    return EmtvAdapter.of_code("emtv", config)

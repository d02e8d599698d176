"""SmileWanted adapter: the recipe ``recipes/smilewanted.yaml``, the first imp's ``zoneId`` appended
to the endpoint when its params decode and name one (else the endpoint as it is, no error)."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp


class SmilewantedAdapter(RecipeAdapter):
    """The recipe, every imp sent whatever its params."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:  # the exchange never sends none
            return [], []
        try:
            params = self.read_params(imps[0], 0)
        except DroppedImp:
            params = {}
        uri = self.endpoint + (params.get("zoneId") or "")
        return [self.call(request, [Prepared(typed_imp(imp), uri, params) for imp in imps])], []


def build(config: AdapterConfig) -> SmilewantedAdapter:
    return SmilewantedAdapter.of_code("smilewanted", config)

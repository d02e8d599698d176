"""Bidstack adapter: the whole request in one call to the configured endpoint, authorised by the
first imp's ``publisherId`` (``Authorization: Bearer <id>``), every imp's positive floor in another
currency converted to USD first (no rate: that error alone, no call). The params' and the answer's
wording are the recipe ``recipes/bidstack.yaml``'s."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp


class BidstackAdapter(RecipeAdapter):
    """The recipe, the call Bidstack's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], []
        try:
            params = self.read_params(imps[0], 0)
            imps = [self.floored(imp, info) for imp in imps]
        except DroppedImp as exc:
            return [], [exc.error]
        call = self.call({**request, "imp": imps}, [Prepared(typed_imp(imp), self.endpoint, params) for imp in imps])
        call.headers = {**call.headers, "Authorization": "Bearer " + params["publisherId"]}
        return [call], []


def build(config: AdapterConfig) -> BidstackAdapter:
    return BidstackAdapter.of_code("bidstack", config)

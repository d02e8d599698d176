"""Zentotem adapter: one call per imp to the configured endpoint, without headers, each naming its
imp alone but carrying the whole request (PBS-Go writes the request, not its one-imp copy), as Go
writes its typed model. The answer and bid typing are the recipe ``recipes/zentotem.yaml``'s."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import json_call
from hbserver.adapters.golike import go_typed_request
from hbserver.adapters.recipe import RecipeAdapter


class ZentotemAdapter(RecipeAdapter):
    """The recipe, the calls Zentotem's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], []
        body = go_typed_request(request)
        return [json_call(self.endpoint, body, [imp.get("id", "")], {}) for imp in imps], []


def build(config: AdapterConfig) -> ZentotemAdapter:
    return ZentotemAdapter.of_code("zentotem", config)

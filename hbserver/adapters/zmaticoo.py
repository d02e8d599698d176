"""Zmaticoo adapter: the recipe ``recipes/zmaticoo.yaml`` (the params' checks, the call and the
answer) with each native imp's request wrapped in ``{"native": ...}`` (the shared
``steps.native_wrapped``); a native request that does not decode refuses the request, once every
imp's params have passed."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import native_wrapped


class ZmaticooAdapter(RecipeAdapter):
    """The recipe, the native requests wrapped."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, failure = list(request.get("imp") or ()), None
        try:
            imps = [native_wrapped(imp) for imp in imps]
        except JsonShapeError as exc:
            failure = BidderError(str(exc))
        calls, errors = super().make_requests({**request, "imp": imps}, info)
        if errors or failure is None:
            return calls, errors
        return [], [failure]


def build(config: AdapterConfig) -> ZmaticooAdapter:
    return ZmaticooAdapter.of_code("zmaticoo", config)

"""Start.io adapter: the recipe ``recipes/startio.yaml``, a request whose ``cur`` names currencies but
not USD refused (``unsupported currency: only USD is accepted``, no call)."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.recipe import RecipeAdapter


def accepts_usd(request: dict[str, Any]) -> bool:
    """No ``cur``, or one that names USD."""
    currencies = request.get("cur") or []
    return not currencies or "USD" in currencies


class StartioAdapter(RecipeAdapter):
    """The recipe, USD required."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not accepts_usd(request):
            return [], [bad_input("unsupported currency: only USD is accepted")]
        return super().make_requests(request, info)


def build(config: AdapterConfig) -> StartioAdapter:
    return StartioAdapter.of_code("startio", config)

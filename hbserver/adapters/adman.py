"""Adman adapter: the recipe ``recipes/adman.yaml``, its answers read as PBS-Go's adapter reads them:
204 is no bids, 404 an error, any other status read as a 200 is (its body decoded)."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, ResponseData
from hbserver.adapters.recipe import RecipeAdapter

_KEPT = (204, 404)  # the statuses the adapter looks at


class AdmanAdapter(RecipeAdapter):
    """The recipe, every status but 204 and 404 read as 200."""

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status not in _KEPT:
            response = ResponseData(200, response.body, response.headers)
        return super().make_bids(request, call, response)


def build(config: AdapterConfig) -> AdmanAdapter:
    return AdmanAdapter.of_code("adman", config)

"""BigoAd adapter: the recipe ``recipes/bigoad.yaml``, an untyped bid's error naming the request's
first imp (PBS-Go's words: ``unrecognized bid type in response from bigoad <imp id>``), not the bid's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter


class BigoadAdapter(RecipeAdapter):
    """The recipe, its untyped bids' errors naming the first imp."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        imps = request.get("imp") or [{}]
        first_id = str(imps[0].get("id", "")) if isinstance(imps[0], Mapping) else ""
        return result, [BidderError(error.message + first_id, error.code) for error in errors]


def build(config: AdapterConfig) -> BigoadAdapter:
    return BigoadAdapter.of_code("bigoad", config)

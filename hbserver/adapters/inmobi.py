"""InMobi adapter: the recipe ``recipes/inmobi.yaml`` (one call read from the first imp, the answer),
with InMobi's own rule that only that first imp is rewritten (its banner sized from its first
format); the others are sent as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.recipe import Prepared, RecipeAdapter, typed_imp


class InmobiAdapter(RecipeAdapter):
    """The recipe's one call, the imps after the first not rewritten."""

    def calls(self, request: Mapping[str, Any], prepared: list[Prepared]) -> list[RequestData]:
        return [self.call(request, prepared[:1], [typed_imp(imp) for imp in request["imp"][1:]])]


def build(config: AdapterConfig) -> InmobiAdapter:
    return InmobiAdapter.of_code("inmobi", config)

"""LunaMedia adapter: advangelists' code under another name (banners sized from their first format,
no publisher or site domain sent, exactly one seatbid in the answer: the class of
:mod:`hbserver.adapters.advangelists` over the recipe ``recipes/lunamedia.yaml``), but its errors
come in imp order: PBS-Go's LunaMedia sizes each imp's banner as it reads its params."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.advangelists import AdvangelistsAdapter
from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.recipe import RecipeAdapter


class LunamediaAdapter(AdvangelistsAdapter):
    """Advangelists' adapter, the errors left in imp order."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        return RecipeAdapter.make_requests(self, request, info)


def build(config: AdapterConfig) -> LunamediaAdapter:
    return LunamediaAdapter.of_code("lunamedia", config)

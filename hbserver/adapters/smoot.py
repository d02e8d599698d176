"""Smoot adapter: the recipe ``recipes/smoot.yaml``, an imp whose params name neither a placementId
nor an endpointId sent as a ``network`` one (``{"bidder": {"type": "network"}}``), where the rest of
TeqBlaze's family leaves the type empty."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.recipe import Prepared, RecipeAdapter


class SmootAdapter(RecipeAdapter):
    """The recipe, ``network`` the type of an imp with neither id."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        one = super().prepare_imp(imp, info, index)
        ext = one.imp.get("ext")
        bidder = ext.get("bidder") if isinstance(ext, Mapping) else None
        if isinstance(bidder, Mapping) and not bidder.get("type"):
            return one._replace(imp={**one.imp, "ext": {"bidder": {"type": "network"}}})
        return one


def build(config: AdapterConfig) -> SmootAdapter:
    return SmootAdapter.of_code("smoot", config)

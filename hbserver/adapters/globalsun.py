"""Globalsun adapter: the recipe ``recipes/globalsun.yaml`` (one call per imp, the answer), the
params Globalsun's own: ``imp.ext.bidder.placementId`` read with jsonparser's ``GetString`` (its
words when the path is missing or ends at no string), the ext rewritten as a publisher placement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError
from hbserver.adapters.golike import json_path_string
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter


class GlobalsunAdapter(RecipeAdapter):
    """The recipe, with the params read as jsonparser reads them."""

    def read_params(self, imp: Mapping[str, Any], index: int) -> dict[str, Any]:
        """``{"type": "publisher", "placementId": ...}``; DroppedImp in jsonparser's words."""
        try:
            placement = json_path_string(imp.get("ext"), "bidder", "placementId")
        except ValueError as exc:
            raise DroppedImp(BidderError(str(exc))) from None
        return {"type": "publisher", "placementId": placement}


def build(config: AdapterConfig) -> GlobalsunAdapter:
    return GlobalsunAdapter.of_code("globalsun", config)

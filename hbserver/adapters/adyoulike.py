"""Adyoulike adapter: the recipe ``recipes/adyoulike.yaml`` plus the bidder's own rules: every floor
in another currency is converted to USD (a floor without a rate stops the request, that error
alone) and each imp's tagid is its ``ext.bidder.placement`` as ``jsonparser.GetString`` reads it;
an imp without one fails the whole request, with every such imp's error."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, ConversionError, RequestData, RequestInfo
from hbserver.adapters.common import floor_in_usd
from hbserver.adapters.golike import json_path_string, set_omitempty
from hbserver.adapters.recipe import RecipeAdapter


class AdyoulikeAdapter(RecipeAdapter):
    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, errors = [], []
        for imp in request.get("imp") or ():
            try:
                imp = floor_in_usd(imp, info)
            except ConversionError as exc:
                return [], [BidderError(str(exc))]
            try:
                tagid = json_path_string(imp.get("ext"), "bidder", "placement")
            except ValueError as exc:
                errors.append(BidderError(str(exc)))
            else:
                imp = dict(imp)
                set_omitempty(imp, "tagid", tagid)
            imps.append(imp)
        if errors:
            return [], errors
        return super().make_requests({**request, "imp": imps}, info)


def build(config: AdapterConfig) -> AdyoulikeAdapter:
    return AdyoulikeAdapter.of_code("adyoulike", config)

"""Colossus adapter: the recipe ``recipes/colossus.yaml``, each imp's tagid first taken from its
``ext.bidder.TagID`` as PBS-Go's jsonparser reads it (the exact key, a string only; an imp without
the key keeps its tagid, one whose value is no string is dropped with jsonparser's error). A TagID
of "" empties the tagid, as Go assigns it."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestInfo
from hbserver.adapters.golike import json_path_string, set_omitempty
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter

KEY_PATH_NOT_FOUND = "Key path not found"


def with_tag_id(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its tagid from ``ext.bidder.TagID``; DroppedImp when that is no string."""
    try:
        tag_id = json_path_string(imp, "ext", "bidder", "TagID")
    except ValueError as exc:
        if str(exc) == KEY_PATH_NOT_FOUND:
            return imp
        raise DroppedImp(BidderError(str(exc))) from None
    out = dict(imp)
    set_omitempty(out, "tagid", tag_id)
    return out


class ColossusAdapter(RecipeAdapter):
    """The recipe, with the imp's tagid set before it is prepared."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        return super().prepare_imp(with_tag_id(imp), info, index)


def build(config: AdapterConfig) -> ColossusAdapter:
    return ColossusAdapter.of_code("colossus", config)

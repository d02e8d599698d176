"""Nativo adapter: the recipe ``recipes/nativo.yaml`` (the whole request in one call, bids typed by
their imp, else by ``bid.ext.prebid.type``) plus the bidder's own rule: when the request names the
``NativoRenderer`` among its SDK renderers (``ext.prebid.sdk.renderers``, name in any case), every
bid carries that renderer's name and version as its meta."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse
from hbserver.adapters.golike import GoAnswer, go_field
from hbserver.adapters.recipe import RecipeAdapter

RENDERER = "nativorenderer"


def renderer_meta(request: Mapping[str, Any]) -> dict[str, Any] | None:
    """``{"rendererName", "rendererVersion"}`` of the request's Nativo renderer, None without one
    (or when the request ext is not of the shape Go reads)."""
    ext = request.get("ext")
    prebid = go_field(ext, "prebid") if isinstance(ext, dict) else None
    sdk = go_field(prebid, "sdk") if isinstance(prebid, dict) else None
    renderers = go_field(sdk, "renderers") if isinstance(sdk, dict) else None
    for renderer in renderers if isinstance(renderers, list) else ():
        if not isinstance(renderer, dict):
            return None
        name, version = go_field(renderer, "name"), go_field(renderer, "version")
        if isinstance(name, str) and name.lower() == RENDERER:
            return {"rendererName": name, "rendererVersion": version if isinstance(version, str) else ""}
    return None


class NativoAdapter(RecipeAdapter):
    """The recipe's bids, each with the renderer meta."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = super().typed_bids(request, answer)
        meta = renderer_meta(request)
        if result is not None and meta is not None:
            for typed in result.bids:
                typed.bid_meta = dict(meta)
        return result, errors


def build(config: AdapterConfig) -> NativoAdapter:
    return NativoAdapter.of_code("nativo", config)

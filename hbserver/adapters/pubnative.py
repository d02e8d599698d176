"""Pubnative adapter: the recipe ``recipes/pubnative.yaml`` with PBS-Go pubnative's checks: a
request whose device names no OS gets no call; after its params, an imp must have a banner, a video
or a native, and a banner without a size (``w`` or ``h`` absent or 0) a format to take it from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter


def imp_problem(imp: Mapping[str, Any]) -> str | None:
    """Why Pubnative cannot take the imp, None when it can."""
    if all(imp.get(kind) is None for kind in ("banner", "video", "native")):
        return "Pubnative only supports banner, video or native ads."
    banner = imp.get("banner")
    if isinstance(banner, Mapping) and not (banner.get("w") and banner.get("h")) and not banner.get("format"):
        return "Size information missing for banner"
    return None


class PubnativeAdapter(RecipeAdapter):
    """The recipe, with the device's OS required and the imp's media checked."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        device = request.get("device")
        if not (isinstance(device, Mapping) and device.get("os")):
            return [], [bad_input("Impression is missing device OS information")]
        return super().make_requests(request, info)

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        self.read_params(imp, index)  # the params' errors come first
        problem = imp_problem(imp)
        if problem is not None:
            raise DroppedImp(bad_input(problem))
        return super().prepare_imp(imp, info, index)


def build(config: AdapterConfig) -> PubnativeAdapter:
    return PubnativeAdapter.of_code("pubnative", config)

"""Marsmedia adapter: the recipe ``recipes/marsmedia.yaml``, and once the params pass, its own check
of the imps' media: a banner needs a format or both ``w`` and ``h`` (else the request fails), and at
least one imp must have a banner or a video."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo, bad_input
from hbserver.adapters.recipe import RecipeAdapter


def media_failure(imps: list[Any]) -> BidderError | None:
    """Why Marsmedia refuses the request's imps, or None."""
    valid = False
    for imp in imps:
        banner, video = imp.get("banner"), imp.get("video")
        if isinstance(banner, Mapping):
            if not banner.get("format") and (banner.get("w") is None or banner.get("h") is None):
                return bad_input("No valid banner format in the bid request")
            valid = True
        elif video is not None:
            valid = True
    return None if valid else bad_input("No valid impression in the bid request")


class MarsmediaAdapter(RecipeAdapter):
    """The recipe, the request refused when its imps' media fail :func:`media_failure`."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = super().make_requests(request, info)
        failure = media_failure(request["imp"]) if calls else None
        return ([], [failure]) if failure is not None else (calls, errors)


def build(config: AdapterConfig) -> MarsmediaAdapter:
    return MarsmediaAdapter.of_code("marsmedia", config)

"""Vidoomy adapter: the recipe ``recipes/vidoomy.yaml`` with Vidoomy's own rules.

- A banner with both ``w`` and ``h`` must have neither 0; one without both must have a format (the
  recipe then sizes it from the first); else the imp is dropped with Vidoomy's error.
- A bid whose imp is not in the request fails the whole answer; a bid is a video when its imp has
  one, else a banner when it has one; any other bid is let go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestInfo,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter


def banner_problem(imp: Mapping[str, Any]) -> str | None:
    """Why the imp's banner cannot be sized (None when it can, or there is no banner)."""
    banner = imp.get("banner")
    if not isinstance(banner, Mapping):
        return None
    width, height = banner.get("w"), banner.get("h")
    if width is not None and height is not None:
        return f"invalid sizes provided for Banner {width} x {height}" if not (width and height) else None
    return None if banner.get("format") else "no sizes provided for Banner []"


def imp_kinds(request: Mapping[str, Any]) -> dict[Any, str]:
    """Each imp id's bid type: video when it has one, else banner when it has one, else ""."""
    kinds: dict[Any, str] = {}
    for imp in request.get("imp") or ():
        kind = "video" if imp.get("video") is not None else "banner" if imp.get("banner") is not None else ""
        kinds.setdefault(imp.get("id"), kind)
    return kinds


class VidoomyAdapter(RecipeAdapter):
    """The recipe with Vidoomy's banner check and bid types."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        problem = banner_problem(imp)
        if problem is not None:
            raise DroppedImp(BidderError(problem))
        return super().prepare_imp(imp, info, index)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        kinds, result = imp_kinds(request), BidderResponse()
        for bid in answer.bids:
            kind = kinds.get(bid.get("impid"))
            if kind is None:
                return None, [bad_server_response(f"Unknown ad unit code '{bid.get('impid', '')}'")]
            if kind:
                result.bids.append(TypedBid(bid, kind))
        return result, []


def build(config: AdapterConfig) -> VidoomyAdapter:
    return VidoomyAdapter.of_code("vidoomy", config)

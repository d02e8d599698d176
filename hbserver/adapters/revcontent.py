"""Revcontent adapter: the recipe ``recipes/revcontent.yaml`` with PBS-Go revcontent's own rules: a
request needs an app with a name or a site with a domain, and a bid is a banner when its markup
starts with ``<`` (HTML), a native otherwise (a native response's JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
)
from hbserver.adapters.golike import GoAnswer
from hbserver.adapters.recipe import RecipeAdapter


def _named(request: Mapping[str, Any], holder: str, name: str) -> bool:
    place = request.get(holder)
    return isinstance(place, Mapping) and bool(place.get(name))


def markup_type(bid: Mapping[str, Any]) -> str:
    """banner for HTML markup, native for anything else."""
    adm = bid.get("adm")
    return "banner" if isinstance(adm, str) and adm.startswith("<") else "native"


class RevcontentAdapter(RecipeAdapter):
    """The recipe, with the request's app name or site domain required and bids typed by markup."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not (_named(request, "app", "name") or _named(request, "site", "domain")):
            return [], [bad_input("Impression is missing app name or site domain, and must contain one.")]
        return super().make_requests(request, info)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return BidderResponse([TypedBid(bid, markup_type(bid)) for bid in answer.bids]), []


def build(config: AdapterConfig) -> RevcontentAdapter:
    return RevcontentAdapter.of_code("revcontent", config)

"""Adot adapter: the recipe ``recipes/adot.yaml``, its endpoint's ``{PUBLISHER_PATH}`` (a plain
placeholder, not a Go template macro) replaced by the first imp's ``publisherPath`` param, or by
nothing when that imp's ext or params do not decode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.recipe import RecipeAdapter
from hbserver.adapters.steps import ParamsSpec

PLACEHOLDER = "{PUBLISHER_PATH}"
_PARAMS = ParamsSpec(
    "openrtb_ext.ExtImpAdot",
    {"parallax": ("Parallax", "bool"), "placementId": ("PlacementId", "string"),
     "publisherPath": ("PublisherPath", "string")},
    null_is_absent=True,
)  # fmt: skip


def publisher_path(imps: list[Mapping[str, Any]]) -> str:
    """The first imp's ``publisherPath``; "" when there is none or its params do not decode."""
    if not imps:
        return ""
    try:
        return str(_PARAMS.read(imps[0])["publisherPath"])
    except JsonShapeError:
        return ""


class AdotAdapter(RecipeAdapter):
    """The recipe's call to the endpoint with the first imp's publisher path."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        calls, errors = super().make_requests(request, info)
        path = publisher_path(request.get("imp") or [])
        for call in calls:
            call.uri = call.uri.replace(PLACEHOLDER, path)
        return calls, errors


def build(config: AdapterConfig) -> AdotAdapter:
    return AdotAdapter.of_code("adot", config)

"""sspBC (Wirtualna Polska) adapter: the whole request in one call without headers, wrapped as
``{"bidRequest": ..., "requestInfo": {"PbsEntryPoint": <PBS-Go's request type>}}``, to the configured
endpoint with ``bdver=6.0`` added to its query (an endpoint Go's url.Parse refuses is refused when
the adapter is built). The answer's wording and typing are the recipe ``recipes/sspbc.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestData, RequestInfo
from hbserver.adapters.common import json_call
from hbserver.adapters.golike import go_typed_request, with_query_param
from hbserver.adapters.gourl import go_url_scheme_host
from hbserver.adapters.recipe import Recipe, RecipeAdapter

ADAPTER_VERSION = "6.0"
# hbserver's entry points as PBS-Go's metrics.RequestType names them (an auction's by its channel)
_REQUEST_TYPES = {"openrtb2-amp": "amp", "openrtb2-video": "video"}


def request_type(request: Mapping[str, Any], entry_point: str) -> str:
    """PBS-Go's request type: ``amp``, ``video``, else ``openrtb2-app``/``-dooh``/``-web`` by channel."""
    if entry_point in _REQUEST_TYPES:
        return _REQUEST_TYPES[entry_point]
    if request.get("app") is not None:
        return "openrtb2-app"
    return "openrtb2-dooh" if request.get("dooh") is not None else "openrtb2-web"


class SspbcAdapter(RecipeAdapter):
    """The recipe's answer; the call sspBC's own. ``auction_types``: False in PBS-Go's JSON tests,
    which leave the request type of an auction empty."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        super().__init__(recipe, config)
        if go_url_scheme_host(self.endpoint) is None:
            raise ValueError(f"unable to build sspbc adapter endpoint: unable to parse endpoint URL {self.endpoint!r}")
        self.endpoint = with_query_param(self.endpoint, "bdver", ADAPTER_VERSION)
        self.auction_types = True

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        kind = request_type(request, info.entry_point)
        if not self.auction_types and kind.startswith("openrtb2-"):
            kind = ""
        body = {"bidRequest": go_typed_request(request), "requestInfo": {"PbsEntryPoint": kind}}
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in request.get("imp") or ()], {})], []


def build(config: AdapterConfig) -> SspbcAdapter:
    return SspbcAdapter.of_code("sspBC", config)

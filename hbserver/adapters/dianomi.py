"""Dianomi adapter: the recipe ``recipes/dianomi.yaml`` (the whole request in one call, each imp's
tagid its ``smartadId``) plus the bidder's own rule: the first imp that names a ``priceType`` sets
it as the request's ``ext.pt`` (the ext re-encoded as Go's ``openrtb_ext.ExtRequest``: ``prebid``
always, ``schain`` when given)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, RequestData
from hbserver.adapters.golike import go_fields
from hbserver.adapters.recipe import Prepared, RecipeAdapter


def with_price_type(ext: Any, price_type: str) -> Any:
    """The request ext with ``pt``; an ext that is no object is left as it is (Go keeps it)."""
    if ext is None:
        ext = {}
    if not isinstance(ext, dict):
        return ext
    fields = go_fields(ext, "prebid", "schain")
    if not isinstance(fields.get("prebid"), dict | None) or not isinstance(fields.get("schain"), dict | None):
        return ext  # Go's decoding fails: the ext goes as it was
    out: dict[str, Any] = {"prebid": fields.get("prebid") or {}}
    if fields.get("schain") is not None:
        out["schain"] = fields["schain"]
    out["pt"] = price_type
    return out


class DianomiAdapter(RecipeAdapter):
    """The recipe's call, its ext carrying the first price type the imps name."""

    def calls(self, request: Mapping[str, Any], prepared: list[Prepared]) -> list[RequestData]:
        price_type = next((one.params["priceType"] for one in prepared if one.params.get("priceType")), "")
        if price_type:
            request = {**request, "ext": with_price_type(request.get("ext"), price_type)}
        return super().calls(request, prepared)


def build(config: AdapterConfig) -> DianomiAdapter:
    return DianomiAdapter.of_code("dianomi", config)

"""Opera Ads adapter: the device must name its OS. Each imp (its tagid the placementId) becomes one
call per media object it has, native, video then banner, the copy keeping only that one (audio
stays) and its id ``<id>:opa:<type>``; a banner without a size takes its first format's (none:
the copy fails), a native request without a ``native`` member is wrapped in one. Bids with a price
get their imp id and type back from that id (one whose id names no type is let go). The params, the
endpoint and the answer's wording are the recipe ``recipes/operaads.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import GO_HTML_ESCAPES, GoAnswer, go_json_object
from hbserver.adapters.recipe import Prepared, RecipeAdapter, typed_imp

FLAT_ORDER = ("native", "video", "banner")
_TYPES = frozenset(("banner", "video", "audio", "native"))


def _sized_banner(banner: Mapping[str, Any]) -> dict[str, Any]:
    if banner.get("w") and banner.get("h"):
        return dict(banner)
    formats = banner.get("format")
    if not (isinstance(formats, list) and formats):
        raise ValueError("Size information missing for banner")
    first = formats[0] if isinstance(formats[0], Mapping) else {}
    return {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}


def _wrapped_native(native: Mapping[str, Any]) -> dict[str, Any]:
    """The native object with its request wrapped in ``{"native": ...}`` when it has no such member,
    re-encoded as Go's encoding/json writes a map (keys sorted, HTML escaped)."""
    text = native.get("request")
    if not isinstance(text, str) or not text:
        return dict(native)
    try:
        request = go_json_object(text)  # an object, or None for null
    except JsonShapeError as exc:
        raise ValueError(str(exc)) from None
    if request is not None and "native" in request:
        return dict(native)
    wrapped = orjson.dumps({"native": request}, option=orjson.OPT_SORT_KEYS).decode().translate(GO_HTML_ESCAPES)
    return {**native, "request": wrapped}


def flat_imp(imp: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The imp's copy for its ``kind`` media object; ValueError when that object cannot be sent."""
    out = {key: value for key, value in imp.items() if key == kind or key not in FLAT_ORDER}
    out["id"] = f"{imp.get('id') or ''}:opa:{kind}"
    if kind == "banner":
        out["banner"] = _sized_banner(imp["banner"])
    elif kind == "native":
        out["native"] = _wrapped_native(imp["native"])
    return out


def origin_imp(impid: str) -> tuple[str, str]:
    """A bid's imp id split back into the imp's own id and the media type."""
    items = impid.split(":")
    if len(items) < 2:
        return impid, ""
    return ":".join(items[:-2]), items[-1]


class OperaadsAdapter(RecipeAdapter):
    """The recipe's params and wording, Opera's calls and bids."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        device = request.get("device")
        if not isinstance(device, Mapping) or not device.get("os"):
            return [], [bad_input("Impression is missing device OS information")]
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp, params in self.imps_with_params(request, errors):
            uri = self.recipe.endpoint.resolve(self.endpoint, params)
            tagged = {**imp, "tagid": params["placementId"]}
            for kind in (kind for kind in FLAT_ORDER if imp.get(kind) is not None):
                try:
                    one = Prepared(typed_imp(flat_imp(tagged, kind)), uri, params)
                except ValueError as exc:
                    errors.append(bad_input(str(exc)))
                    continue
                calls.append(self.call(request, [one]))
        return calls, errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse()
        for bid in answer.bids:
            impid, kind = origin_imp(bid.get("impid") or "")
            if bid.get("price") and kind in _TYPES:
                result.bids.append(TypedBid({**bid, "impid": impid}, kind))
        return result, []


def build(config: AdapterConfig) -> OperaadsAdapter:
    return OperaadsAdapter.of_code("operaads", config)

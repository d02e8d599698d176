"""SmartRTB adapter: the banner and video imps whose params decode in one call (imps with neither
are let go silently), each imp's tagid its ``zone_id`` when set, the request's ext replaced by
``{"pub_id": <the first imp's pub_id that is set>}`` and the endpoint's ``{{.PublisherID}}`` that id
(none: ``Cannot infer publisher ID from bid ext``, no call). A bid is typed by its ext's ``format``
(BANNER, VIDEO; any other, or an ext that does not decode, fails the answer) and sent without its
ext. The params' and the answer's wording are the recipe ``recipes/smartrtb.yaml``'s."""

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
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, json_call, resolve_macros
from hbserver.adapters.golike import GoAnswer, GoKind, go_field, go_value
from hbserver.adapters.recipe import RecipeAdapter, typed_imp, typed_top

FORMATS = {"BANNER": "banner", "VIDEO": "video"}


class SmartrtbAdapter(RecipeAdapter):
    """The recipe's params and answer wording; the call and the bids SmartRTB's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps: list[dict[str, Any]] = []
        errors: list[BidderError] = []
        pub_id = ""
        for imp, params in self.imps_with_params(request, errors, ("banner", "video")):
            pub_id = pub_id or params["pub_id"] or ""
            imps.append(typed_imp({**imp, "tagid": params["zone_id"]} if params["zone_id"] else imp))
        if not imps:
            return [], errors
        if not pub_id:
            return [], [*errors, bad_input("Cannot infer publisher ID from bid ext")]
        body = {**typed_top(request), "ext": {"pub_id": pub_id}, "imp": imps}
        uri = resolve_macros(self.endpoint, {"PublisherID": pub_id})
        return [json_call(uri, body, [imp.get("id", "") for imp in imps], self.headers(request))], errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse()
        for bid in answer.bids:
            try:
                ext = expect_object(bid.get("ext"), "") if "ext" in bid else None
                if ext is None:
                    raise JsonShapeError("no ext")
                kind = go_value(go_field(ext, "format"), GoKind.STRING, "bidExt.CreativeType") or ""
            except JsonShapeError:
                return None, [bad_server_response("Invalid bid extension from endpoint.")]
            if kind not in FORMATS:
                return None, [bad_server_response(f"Unsupported creative type {kind}.")]
            result.bids.append(TypedBid({k: v for k, v in bid.items() if k != "ext"}, FORMATS[kind]))
        return result, []


def build(config: AdapterConfig) -> SmartrtbAdapter:
    return SmartrtbAdapter.of_code("smartrtb", config)

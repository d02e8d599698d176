"""Sovrn XSP adapter: the banner, video and native imps whose params decode in one call (others let
go silently; none left: ``no matching impression with ad format``), each imp's tagid its ``zone_id``
when set; the app's publisher id the last such imp's ``pub_id`` and its id that imp's ``med_id`` when
set. A bid is typed by its ext's ``creative_type`` (0 banner, 1 video, 2 native; any other, or an
ext that does not decode, drops it with its error), its mtype set from that type when zero; USD. The
params' and the answer's wording are the recipe ``recipes/sovrnxsp.yaml``'s."""

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
from hbserver.adapters.common import JsonShapeError, expect_object, json_call
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, GoKind, go_field, go_value
from hbserver.adapters.recipe import RecipeAdapter, typed_imp, typed_top

CREATIVE_TYPES = {0: ("banner", 1), 1: ("video", 2), 2: ("native", 4)}  # creative_type -> (type, mtype)


def creative_type(bid: Mapping[str, Any]) -> int:
    """``bid.ext.creative_type`` (0 when absent); JsonShapeError when the ext does not decode."""
    if "ext" not in bid:
        raise JsonShapeError(ABSENT_OBJECT)
    value = go_field(expect_object(bid["ext"], ""), "creative_type")
    return go_value(value, GoKind.INT, "sovrnXsp.bidExt.CreativeType") or 0


class SovrnxspAdapter(RecipeAdapter):
    """The recipe's params and wording; the call and the bids Sovrn XSP's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        app = dict(request.get("app") or {})
        app["publisher"] = dict(app.get("publisher") or {})
        imps: list[dict[str, Any]] = []
        errors: list[BidderError] = []
        for imp, params in self.imps_with_params(request, errors, ("banner", "video", "native")):
            app["publisher"]["id"] = params["pub_id"] or ""
            if params["med_id"]:
                app["id"] = params["med_id"]
            imps.append(typed_imp({**imp, "tagid": params["zone_id"]} if params["zone_id"] else imp))
        if not imps:
            return [], [*errors, bad_input("no matching impression with ad format")]
        if not app["publisher"].get("id"):
            app["publisher"].pop("id", None)
        body = {**typed_top(request), "app": app, "imp": imps}
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps], self.headers(request))], errors

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = BidderResponse(), []  # USD, whatever the answer says
        for bid in answer.bids:
            try:
                kind = creative_type(bid)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            if kind not in CREATIVE_TYPES:
                errors.append(bad_server_response(f"Unsupported creative type: {kind}"))
                continue
            bid_type, mtype = CREATIVE_TYPES[kind]
            result.bids.append(TypedBid(bid if bid.get("mtype") else {**bid, "mtype": mtype}, bid_type))
        return (result if result.bids else None), errors


def build(config: AdapterConfig) -> SovrnxspAdapter:
    return SovrnxspAdapter.of_code("sovrnXsp", config)

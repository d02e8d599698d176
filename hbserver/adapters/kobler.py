"""Kobler adapter: the whole request in one call, sent without the user and the device's IP
addresses, USD added to its currencies, every imp's positive floor in another currency converted
to USD (no rate: no call, that error after any params error). The first imp's ``test`` param sends
the call to Kobler's development endpoint instead; params that do not decode count as no test, their
error let go when the call is made. A bid is typed by ``ext.prebid.type`` when it decodes and names
a known type, else it is a banner. The params' and the answer's wording are the recipe
``recipes/kobler.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo, TypedBid
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import GoAnswer, typed_bids
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp
from hbserver.adapters.steps import ext_prebid_type

DEV_ENDPOINT = "https://bid-service.dev.essrtb.com/bid/prebid_server_rtb_call"
_TYPES = ("banner", "video", "audio", "native")


def sanitized(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request without its user and its device's IP addresses, with USD among its currencies."""
    out = {key: value for key, value in request.items() if key != "user"}
    device = out.get("device")
    if isinstance(device, Mapping):
        out["device"] = {key: value for key, value in device.items() if key not in ("ip", "ipv6")}
    currencies = list(out.get("cur") or [])
    if "USD" not in currencies:
        out["cur"] = [*currencies, "USD"]
    return out


def bid_type(bid: Mapping[str, Any]) -> str:
    """``bid.ext.prebid.type`` when the ext decodes and it is a known type, else banner."""
    try:
        kind = ext_prebid_type(bid)
    except JsonShapeError:
        return "banner"
    return kind if kind in _TYPES else "banner"


class KoblerAdapter(RecipeAdapter):
    """The recipe, the call and the bid types Kobler's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        out, errors, test = sanitized(request), [], False
        imps = []
        for index, imp in enumerate(out.get("imp") or []):
            try:
                imps.append(self.floored(imp, info))
            except DroppedImp as exc:
                return [], [*errors, exc.error]
            if index == 0 and "ext" in imp:
                try:
                    test = bool(self.read_params(imp, 0)["test"])
                except DroppedImp as exc:
                    errors.append(exc.error)
        uri = DEV_ENDPOINT if test else self.endpoint
        return [self.call({**out, "imp": imps}, [Prepared(typed_imp(imp), uri, {}) for imp in imps])], []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        return typed_bids(answer, lambda bid: TypedBid(bid, bid_type(bid)))


def build(config: AdapterConfig) -> KoblerAdapter:
    return KoblerAdapter.of_code("kobler", config)

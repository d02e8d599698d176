"""Seeding Alliance adapter (and its aliases finative, suntContent): the whole request in one call,
each imp's tagid its ``adUnitId`` (any imp whose params do not decode: that error alone, no call),
``EUR`` added to ``cur``, the endpoint's ``{{.AccountID}}`` the last imp's ``accountId``, else its
``seatId``, else ``pbs``. ``${AUCTION_PRICE}`` in a bid's markup is its price; bids are typed by
``ext.prebid.type``, an untyped one dropped with its error. The params' and the answer's wording are
the recipe ``recipes/seedingalliance.yaml``'s."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestData, RequestInfo, TypedBid
from hbserver.adapters.common import JsonShapeError, json_call, resolve_macros
from hbserver.adapters.golike import AUCTION_PRICE, GoAnswer, go_float_text
from hbserver.adapters.recipe import DroppedImp, RecipeAdapter, typed_top
from hbserver.adapters.steps import ext_prebid_type

_TYPES = ("banner", "video", "audio", "native")


def account_id(params: Mapping[str, Any]) -> str:
    """``accountId``, else ``seatId``, else ``pbs``."""
    return params.get("accountId") or params.get("seatId") or "pbs"


class SeedingAllianceAdapter(RecipeAdapter):
    """The recipe's params and answer; the call and the bids Seeding Alliance's own."""

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps, account = [], "pbs"
        try:
            for index, imp in enumerate(request.get("imp") or ()):
                prepared = self.prepare_imp(imp, info, index)
                imps.append(prepared.imp)
                account = account_id(prepared.params)
        except DroppedImp as dropped:
            return [], [dropped.error]
        currencies = list(request.get("cur") or [])
        if "EUR" not in currencies:
            currencies.append("EUR")
        body = {**typed_top(request), "cur": currencies, "imp": imps}
        uri = resolve_macros(self.endpoint, {"AccountID": account})
        return [json_call(uri, body, [imp.get("id", "") for imp in imps], {})], []

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result, errors = BidderResponse(currency=answer.cur or "USD"), []
        for bid in answer.bids:
            if isinstance(bid.get("adm"), str):
                bid = {**bid, "adm": bid["adm"].replace(AUCTION_PRICE, go_float_text(bid["price"]))}
            try:
                kind = bid_type(bid)
            except ValueError as exc:
                errors.append(BidderError(str(exc)))
                continue
            result.bids.append(TypedBid(bid, kind))
        return result, errors


def bid_type(bid: Mapping[str, Any]) -> str:
    """``ParseBidType(bid.ext.prebid.type)``; ValueError in PBS-Go's words."""
    try:
        kind = ext_prebid_type(bid)
    except JsonShapeError as exc:
        raise ValueError(f"could not unmarshal openrtb_ext.ExtBid: {exc}") from None
    if kind is None:
        raise ValueError("bid.Ext.Prebid is empty")
    if kind not in _TYPES:
        raise ValueError(f"invalid BidType: {kind}")
    return kind


def build(config: AdapterConfig) -> SeedingAllianceAdapter:
    return SeedingAllianceAdapter.of_code("seedingAlliance", config)

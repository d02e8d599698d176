"""DecenterAds adapter: the recipe ``recipes/decenterads.yaml`` (one call per imp, the answer and bid
typing) plus the bidder's own reading of the imp: its ext decoded as a map of raw members (so
``prebid`` and ``ae`` go unchecked), the ``bidder`` member, whatever JSON it is, becoming the whole
ext. An ext that is no object, or one without ``bidder``, drops the imp with a plain error."""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, RequestInfo
from hbserver.adapters.common import JsonShapeError, expect_object
from hbserver.adapters.golike import ABSENT_OBJECT
from hbserver.adapters.recipe import DroppedImp, Prepared, RecipeAdapter, typed_imp

BIDDER_REQUIRED = "bidder parameters required"


def bidder_member(imp: dict[str, Any]) -> Any:
    """``imp.ext["bidder"]`` as raw JSON; DroppedImp in DecenterAds' words when it cannot be had."""
    try:
        if imp.get("ext") is None:  # absent, or null: Go's imp.Ext is empty
            raise JsonShapeError(ABSENT_OBJECT)
        ext = expect_object(imp["ext"], "")
    except JsonShapeError as exc:
        raise DroppedImp(BidderError(f"unable to parse bidder parameers: {exc}")) from None
    if "bidder" not in ext:  # map keys match exactly
        raise DroppedImp(BidderError(BIDDER_REQUIRED))
    return ext["bidder"]


class DecenterAdsAdapter(RecipeAdapter):
    """The recipe's calls and answer, each imp's ext its bidder params."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        return Prepared(typed_imp({**imp, "ext": bidder_member(imp)}), self.endpoint, {})


def build(config: AdapterConfig) -> DecenterAdsAdapter:
    return DecenterAdsAdapter.of_code("decenterads", config)

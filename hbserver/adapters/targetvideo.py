"""TargetVideo adapter: the recipe ``recipes/targetvideo.yaml``, each imp's ext sent without its
``bidder`` and with ``prebid`` as Go's ``ExtImpPrebid`` writes it again, its stored request the
imp's ``placementId`` (any other member of the ext kept as it came); an answer without bids is in USD
whatever its currency."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, RequestInfo
from hbserver.adapters.golike import GoAnswer, go_field
from hbserver.adapters.recipe import Prepared, RecipeAdapter

# openrtb_ext.ExtImpPrebid's fields: True = omitempty on a value (left out when empty), False = a
# pointer or raw message (left out only when null)
PREBID_FIELDS = {
    "storedrequest": False, "storedauctionresponse": False, "storedbidresponse": True,
    "is_rewarded_inventory": False, "bidder": True, "options": False, "adunitcode": True,
    "passthrough": False, "floors": False, "imp": True,
}  # fmt: skip


def stored_request_ext(ext: Mapping[str, Any], placement: int) -> dict[str, Any]:
    """``ext`` without ``bidder``, its ``prebid`` typed and naming ``placement`` as its stored request."""
    prebid = go_field(ext, "prebid")
    typed = {
        key: value
        for key, value in (prebid.items() if isinstance(prebid, Mapping) else ())
        if key in PREBID_FIELDS and value is not None and not (PREBID_FIELDS[key] and value in ("", [], {}))
    }
    typed["storedrequest"] = {"id": str(placement)}
    out = {key: value for key, value in ext.items() if key not in ("bidder", "prebid")}
    out["prebid"] = typed
    return out


class TargetVideoAdapter(RecipeAdapter):
    """The recipe, the imp's ext TargetVideo's own."""

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        prepared = super().prepare_imp(imp, info, index)
        ext = stored_request_ext(imp["ext"], prepared.params.get("placementId") or 0)
        return prepared._replace(imp={**prepared.imp, "ext": ext})

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """The recipe's bids; the answer's currency taken only with a bid (Go sets it per bid)."""
        result, errors = super().typed_bids(request, answer)
        if result is not None and not result.bids:
            result.currency = "USD"
        return result, errors


def build(config: AdapterConfig) -> TargetVideoAdapter:
    return TargetVideoAdapter.of_code("targetVideo", config)

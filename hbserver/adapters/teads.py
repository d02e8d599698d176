"""Teads adapter: the recipe ``recipes/teads.yaml`` (one call, each imp's placementId as its tagid
and ``{"kv": {"placementId": id}}`` as its ext), the reading of the bids Teads's own: every bid must
carry ``ext.prebid.meta`` with a non-empty ``rendererName`` and ``rendererVersion`` (they become the
bid's meta) and name an imp of the request, else the whole answer is dropped with that error; bids
are video for a video imp, otherwise banner. The answer's ``cur`` is the currency when given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import AdapterConfig, BidderError, BidderResponse, TypedBid, bad_input
from hbserver.adapters.common import JsonShapeError, expect_object, expect_string
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, go_field
from hbserver.adapters.recipe import RecipeAdapter


def _renderer(bid: dict[str, Any]) -> tuple[dict[str, str] | None, BidderError | None]:
    """The bid's ``ext.prebid.meta`` renderer name and version, or PBS-Go's error for the bid."""
    try:
        if bid.get("ext") is None:  # Go decodes an absent ext as empty input
            raise JsonShapeError(ABSENT_OBJECT)
        ext = expect_object(bid["ext"], "")
        prebid = expect_object(go_field(ext, "prebid", skip_null=True), "teads.teadsBidExt.Prebid")
        meta = expect_object(go_field(prebid, "meta", skip_null=True), "teads.teadsPrebidExt.Meta")
        name = expect_string(go_field(meta, "rendererName", skip_null=True), "teads.teadsPrebidMeta.RendererName")
        version = expect_string(
            go_field(meta, "rendererVersion", skip_null=True), "teads.teadsPrebidMeta.RendererVersion"
        )
    except JsonShapeError as exc:
        return None, BidderError(str(exc))
    if name == "":
        return None, bad_input("RendererName should not be empty if present")
    if version == "":
        return None, bad_input("RendererVersion should not be empty if present")
    return {"rendererName": name, "rendererVersion": version}, None


class TeadsAdapter(RecipeAdapter):
    """The recipe ``recipes/teads.yaml`` (the call, the answer's status texts), the bids Teads's own."""

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        video_imps: dict[Any, bool] = {}
        for imp in request.get("imp") or ():
            video_imps.setdefault(imp.get("id", ""), imp.get("video") is not None)
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            meta, error = _renderer(bid)
            if error is not None:
                return None, [error]
            imp_id = bid.get("impid", "")
            if not isinstance(imp_id, str) or imp_id not in video_imps:
                return None, [bad_input("Imp ids were not equals")]
            result.bids.append(TypedBid(bid, "video" if video_imps[imp_id] else "banner", bid_meta=meta))
        return result, []


def build(config: AdapterConfig) -> TeadsAdapter:
    return TeadsAdapter.of_code("teads", config)

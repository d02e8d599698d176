"""Teads adapter: the whole request in one OpenRTB call to ``psrv.teads.tv/prebid-server/bid-request``.

Per imp: a banner with formats gets ``w``/``h`` from its first format, ``placementId`` (which must
not be 0) becomes ``tagid`` (as text) and ``imp.ext`` is replaced by ``{"kv": {"placementId": id}}``.
The first imp that cannot be read stops the whole request with one error. Every bid must carry
``ext.prebid.meta`` with a non-empty ``rendererName`` and ``rendererVersion`` (they become the bid's
meta) and name an imp of the request, else the whole answer is dropped with that error; bids are
video for a video imp, otherwise banner. The answer's ``cur`` is the currency when given.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    JsonShapeError,
    answer_bids,
    banner_sized_by_first_format,
    decode_answer,
    expect_object,
    expect_string,
    json_call,
    resolve_macros,
)
from hbserver.adapters.golike import ABSENT_OBJECT, GO_WORDING, go_field

_INT64_MAX = 2**63 - 1
HEADERS = {"Content-Type": "application/json;charset=utf-8"}  # PBS-Go sends no Accept here


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _placement_id(ext: Any) -> int:
    """``imp.ext.bidder.placementId`` as Go decodes it into an int (0 when absent)."""
    if not isinstance(ext, dict):
        raise _BadImp("Error parsing Imp.Ext object")
    params = go_field(ext, "bidder", skip_null=True)
    if params is None:
        return 0
    if not isinstance(params, dict):
        raise _BadImp("Error parsing Imp.Ext object")
    placement = go_field(params, "placementId", skip_null=True)
    if placement is None:
        return 0
    if isinstance(placement, bool) or not isinstance(placement, int) or abs(placement) > _INT64_MAX:
        raise _BadImp("Error parsing Imp.Ext object")
    return placement


def _build_imp(imp: dict[str, Any]) -> dict[str, Any]:
    out = dict(imp)
    banner = imp.get("banner")
    sized = banner_sized_by_first_format(banner) if isinstance(banner, dict) else None
    if sized is not None:
        out["banner"] = sized
    placement = _placement_id(imp.get("ext"))
    if placement == 0:
        raise _BadImp("placementId should not be 0.")
    out["tagid"] = str(placement)
    out["ext"] = {"kv": {"placementId": placement}}
    return out


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


class TeadsAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = resolve_macros(config.endpoint, {})

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        try:
            built = [_build_imp(imp) for imp in imps]
        except _BadImp as exc:
            return [], [bad_input(str(exc))]
        body = {**request, "imp": built}
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in built), HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_answer(response, GO_WORDING)
        if answer is None:
            return None, failure
        video_imps: dict[Any, bool] = {}
        for imp in request.get("imp") or ():
            video_imps.setdefault(imp.get("id", ""), imp.get("video") is not None)
        result = BidderResponse()
        for _, bid in answer_bids(answer):
            meta, error = _renderer(bid)
            if error is not None:
                return None, [error]
            imp_id = bid.get("impid", "")
            if not isinstance(imp_id, str) or imp_id not in video_imps:
                return None, [bad_input("Imp ids were not equals")]
            result.bids.append(TypedBid(bid, "video" if video_imps[imp_id] else "banner", bid_meta=meta))
        currency = answer.get("cur")
        if isinstance(currency, str) and currency:
            result.currency = currency
        return result, []


def build(config: AdapterConfig) -> TeadsAdapter:
    return TeadsAdapter(config)

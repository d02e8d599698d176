"""Yeahmobi adapter: the whole request in one call to the endpoint whose ``{{.Host}}`` is
``gw-<zoneId>-bid.yeahtargeter.com`` (the zone query-escaped), the params being the first imp's whose
ext decodes. An imp before it whose ext or params do not decode makes no call: the errors of those
imps alone. Each native imp's request that decodes as an object without a ``native`` member is
wrapped in one (``{"native": {...}}``, written again as Go writes a map: keys sorted).

A 400 answer is bad input, any other failure status a bad server response (``Unexpected status
code: N.``). Bids are typed by their imp (banner, then video, then native; banner when none), each
with video facts whose duration is ``bid.ext.video.duration``; a bid ext that does not decode fails
the whole answer. USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    AnswerWording,
    JsonShapeError,
    expect_object,
    imp_bid_type,
    imp_ids,
    json_call,
    resolve_macros,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    decode_go_answer,
    go_field,
    go_int,
    go_typed_request,
)
from hbserver.adapters.steps import MACRO_ESCAPES, ParamsSpec, native_wrapped

HEADERS = {"Content-Type": "application/json;charset=utf-8"}
PARAMS = ParamsSpec("openrtb_ext.ExtImpYeahmobi", {"pubId": ("PubId", "string"), "zoneId": ("ZoneId", "string")})
WORDING = AnswerWording(status="Unexpected status code: {}.", not_an_object=NOT_AN_OBJECT, body_error=BidderError)
BID_EXT_ERROR = "bid.ext json unmarshal error"


def first_params(imps: list[Any]) -> tuple[dict[str, Any], list[BidderError]]:
    """The first imp's params that decode ({} with none) and the errors of the imps before it."""
    errors = []
    for imp in imps:
        try:
            return PARAMS.read(imp), errors
        except JsonShapeError as exc:
            errors.append(BidderError(str(exc)))
    return {}, errors


def wrapped_native(imp: dict[str, Any]) -> dict[str, Any]:
    """The shared ``native_wrapped`` of the imp; the imp as it is when its native request does not
    decode (Yeahmobi lets it go)."""
    try:
        return native_wrapped(imp)
    except JsonShapeError:
        return imp


def _duration(bid: Mapping[str, Any]) -> int:
    """``bid.ext.video.duration`` (0 without one); JsonShapeError when the ext does not decode."""
    if bid.get("ext") is None:
        return 0
    video = go_field(expect_object(bid["ext"], ""), "video")
    if video is None:
        return 0
    return go_int(go_field(expect_object(video, ""), "duration"), "yeahmobi.yeahmobiBidExtVideo.Duration")


class YeahmobiAdapter:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = list(request.get("imp") or ())
        params, errors = first_params(imps)
        if errors:
            return [], errors
        host = "gw-" + MACRO_ESCAPES["query"](params.get("zoneId", "")) + "-bid.yeahtargeter.com"
        body = go_typed_request({**request, "imp": [wrapped_native(imp) for imp in imps]})
        uri = resolve_macros(self.endpoint, {"Host": host})
        return [json_call(uri, body, imp_ids(imps), HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, WORDING)
        if answer is None:
            return None, failure
        result, imps = BidderResponse(), list(request.get("imp") or ())
        for bid in answer.bids:
            try:
                video = {"duration": _duration(bid), "primary_category": ""}
            except JsonShapeError:
                return None, [BidderError(BID_EXT_ERROR)]
            kind = imp_bid_type(imps, bid.get("impid"), BANNER_VIDEO_NATIVE) or "banner"
            result.bids.append(TypedBid(bid, kind, bid_video=video))
        return result, []


def build(config: AdapterConfig) -> YeahmobiAdapter:
    return YeahmobiAdapter(config.endpoint)

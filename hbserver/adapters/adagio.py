"""Adagio adapter: the request as it is, in one OpenRTB call to the configured endpoint.

An answer without seatbids is an error. Bids are typed by ``mtype`` (banner, video or native; any
other is reported and left out) and carry the ``ext.prebid.meta`` and ``ext.prebid.video`` they
come with; a bid whose ext does not decode is reported and left out. The answer's currency is kept.
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
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, expect_object, imp_ids, json_call, json_headers
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_fields,
    go_media_objects,
    go_request_top,
    go_value,
)

_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_text="bid response, err: {}", body_error=BidderError)
_MTYPES = {1: "banner", 2: "video", 4: "native"}
_VIDEO_FIELDS = {
    "duration": ("Duration", GoKind.INT),
    "primary_category": ("PrimaryCategory", GoKind.STRING),
    "vasttagid": ("VASTTagID", GoKind.STRING),
}


def bid_type(bid: Mapping[str, Any]) -> str | None:
    """banner (1), video (2) or native (4) by ``mtype``; None for any other."""
    return _MTYPES.get(bid.get("mtype", 0))


def prebid_meta_video(bid: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(``ext.prebid.meta``, ``ext.prebid.video``) of the bid; JsonShapeError when its ext does not decode."""
    ext = bid.get("ext")
    if ext is None:
        return None, None
    prebid = go_field(expect_object(ext, ""), "prebid")
    if prebid is None:
        return None, None
    fields = go_fields(expect_object(prebid, "openrtb_ext.ExtBid.Prebid"), "meta", "video")
    meta = fields.get("meta")
    if meta is not None:
        expect_object(meta, "openrtb_ext.ExtBidPrebid.Meta")
    video = fields.get("video")
    if video is not None:
        members = go_fields(expect_object(video, "openrtb_ext.ExtBidPrebid.Video"), *_VIDEO_FIELDS)
        video = {}
        for name, value in members.items():
            go_name, kind = _VIDEO_FIELDS[name]
            video[name] = go_value(value, kind, f"openrtb_ext.ExtBidPrebidVideo.{go_name}")
    return meta, video


class AdagioAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = [go_media_objects(imp) for imp in request.get("imp") or ()]
        body = {**go_request_top(request), "imp": imps}
        return [json_call(self.endpoint, body, imp_ids(imps), self.headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        if not answer.seatbids:
            return None, [bad_server_response("empty seatbid array")]
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = bid_type(bid)
            if kind is None:
                errors.append(bad_input(f"Could not define media type for impression: {bid.get('impid', '')}"))
                continue
            try:
                meta, video = prebid_meta_video(bid)
            except JsonShapeError as exc:
                errors.append(BidderError(f"bid ext, err: {exc}"))
                continue
            result.bids.append(TypedBid(bid, kind, bid_meta=meta, bid_video=video))
        return result, errors


def build(config: AdapterConfig) -> AdagioAdapter:
    return AdagioAdapter(config)

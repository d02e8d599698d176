"""Sovrn adapter: every valid imp in one OpenRTB call to ``pbs.lijit.com/rtb/bid``.

Per imp the ``tagid`` param (or the older ``tagId``) becomes ``imp.tagid`` and is required; the
``bidfloor`` param (a number or a string holding one) becomes the floor when the imp has none. A
video imp must carry ``mimes``, ``maxduration`` and ``protocols``. Imps that fail are reported and
left out; ``imp.ext`` goes unchanged. The call carries the device's user agent, IP, language and
DNT as headers, and the user's ``buyeruid`` as the ``ljt_reader`` cookie. Bids are video when
their imp has a video object, else banner; their ``adm`` arrives URL-encoded and is decoded (a bid
whose ``adm`` does not decode is dropped, as PBS-Go drops it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    AnswerAdapter,
    JsonShapeError,
    answer_bids,
    expect_string,
    imp_ids,
    with_header,
)
from hbserver.adapters.golike import GO_SPACE, GO_WORDING, go_fields, go_parse_float, go_video, imp_bidder_params
from hbserver.adapters.gourl import go_query_unescape

# the params' json names and their Go fields (for error texts)
_PARAM_NAMES = {"tagId": "TagId", "tagid": "Tagid", "bidfloor": "BidFloor", "adunitcode": "AdUnitCode"}


def _params(imp: Mapping[str, Any]) -> tuple[str, float]:
    """(tag id, floor from the params; 0 when none or unreadable)."""
    fields = go_fields(imp_bidder_params(imp), *_PARAM_NAMES)
    for name, value in fields.items():
        if name != "bidfloor":
            expect_string(value, f"openrtb_ext.ExtImpSovrn.{_PARAM_NAMES[name]}")
    floor = fields.get("bidfloor")
    if isinstance(floor, str):
        floor = go_parse_float(floor)
    elif isinstance(floor, bool) or not isinstance(floor, int | float):
        floor = None
    return fields.get("tagid") or fields.get("tagId") or "", floor or 0.0


def _video_complete(video: Any) -> bool:
    return not isinstance(video, dict) or (
        video.get("mimes") is not None and bool(video.get("maxduration")) and video.get("protocols") is not None
    )


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    device = request.get("device")
    if isinstance(device, dict):
        with_header(headers, "User-Agent", device.get("ua"))
        with_header(headers, "X-Forwarded-For", device.get("ip"))
        with_header(headers, "Accept-Language", device.get("language"))
        dnt = device.get("dnt")
        if isinstance(dnt, int) and not isinstance(dnt, bool):
            headers["Dnt"] = str(dnt)
    user = request.get("user")
    buyer_uid = user.get("buyeruid") if isinstance(user, dict) else None
    if isinstance(buyer_uid, str) and buyer_uid.strip(GO_SPACE):
        headers["Cookie"] = f"ljt_reader={buyer_uid.strip(GO_SPACE)}"
    return headers


class SovrnAdapter(AnswerAdapter):
    answer_wording = GO_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                tag_id, floor = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if not tag_id:
                errors.append(bad_input("Missing required parameter 'tagid'"))
                continue
            if not _video_complete(imp.get("video")):
                errors.append(bad_input("Missing required video parameter"))
                continue
            out = dict(imp)
            out["tagid"] = tag_id
            if isinstance(imp.get("video"), dict):
                out["video"] = go_video(imp["video"])
            if not imp.get("bidfloor") and floor > 0:
                out["bidfloor"] = floor
            imps.append(out)
        if not imps:
            return [], errors
        if any(math.isinf(imp.get("bidfloor") or 0) for imp in imps):  # a "bidfloor": "Inf" param
            errors.append(BidderError("json: unsupported value: +Inf"))
            return [], errors
        body = orjson.dumps({**request, "imp": imps})
        return [RequestData("POST", self.endpoint, body, _headers(request), imp_ids(imps))], errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        imp_is_video: dict[str, bool] = {}
        for imp in request.get("imp") or ():
            imp_is_video.setdefault(imp.get("id", ""), imp.get("video") is not None)  # the first imp of an id
        result = BidderResponse()
        errors: list[BidderError] = []
        for _, bid in answer_bids(data):
            adm = bid.get("adm")
            if isinstance(adm, str):
                decoded = go_query_unescape(adm)
                if decoded is None:
                    continue
                if decoded != adm:
                    bid = {**bid, "adm": decoded}
            imp_id = bid.get("impid", "")
            if not isinstance(imp_id, str) or imp_id not in imp_is_video:
                errors.append(bad_input(f"Imp ID {imp_id} in bid didn't match with any imp in the original request"))
                continue
            result.bids.append(TypedBid(bid, "video" if imp_is_video[imp_id] else "banner"))
        return result, errors


def build(config: AdapterConfig) -> SovrnAdapter:
    return SovrnAdapter(config)

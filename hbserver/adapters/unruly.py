"""Unruly adapter: the whole OpenRTB 2.6 request in one call to ``targeting.unrulymedia.com``.

Each imp's ``ext`` is replaced by ``{"bidder": {"siteid": <int>, "siteId": <int>}}`` (both always
written, 0 when not given; PBS-Go reads the keys as Go's JSON decoding does: exact name first, any
other spelling of ``siteid`` counts as the old one, null leaves a value alone). One imp without a
usable ``ext`` or params aborts the whole request with an error and no call; an empty endpoint
makes no call and no error. Bids are banner or video by their imp (banner first); a bid for an
imp with neither, or for an unknown imp, is dropped with an error. Video bids with a positive
``dur`` carry it as the video duration. The currency is always USD (the answer's ``cur`` is not
read), and status errors are worded with a lower-case "unexpected", as PBS-Go's adapter does.
"""

from __future__ import annotations

from typing import Any

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
    AnswerWording,
    JsonShapeError,
    answer_bids,
    imp_ids,
    json_call,
)
from hbserver.adapters.golike import NOT_AN_OBJECT, go_field, go_int, go_members

_ANSWER_WORDING = AnswerWording(
    status="unexpected status code: {}. Run with request.debug = 1 for more info",
    bad_json="{}",
    not_an_object=NOT_AN_OBJECT,
    body_text="bad server response: &{{%!d(string={})}}. ",  # Go's %d of the error struct
)


def _site_ids(params: Any) -> dict[str, int]:
    """``ExtImpUnruly`` decoded from the params: ``siteId`` exactly, any other spelling of ``siteid``
    as the old field, null leaving a value alone. JsonShapeError when they do not decode (a value
    that is not a JSON object, absent and null included)."""
    if not isinstance(params, dict):
        raise JsonShapeError("ExtImpUnruly is not an object")
    ids = {"siteid": 0, "siteId": 0}
    for name, value in go_members(params, "siteid", "siteId"):
        if value is not None:
            ids[name] = go_int(value, f"openrtb_ext.ExtImpUnruly.{name}")
    return ids


def _bidder_of(ext: Any) -> tuple[bool, Any]:
    """(ok, params) from ``imp.ext`` read as ``{"prebid": object, "bidder": raw}`` (keys matched
    case-insensitively, the last non-null one winning); ok is False when Go could not decode it."""
    if not isinstance(ext, dict):
        return False, None
    if any(value is not None and not isinstance(value, dict) for _, value in go_members(ext, "prebid")):
        return False, None
    return True, go_field(ext, "bidder", skip_null=True)


class UnrulyAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = []
        for imp in request.get("imp") or ():
            imp_id = imp.get("id", "")
            ok, params = _bidder_of(imp.get("ext"))
            if not ok:
                return [], [bad_input(f"ext data not provided in imp id={imp_id}. Abort all Request")]
            try:
                ids = _site_ids(params)
            except JsonShapeError:
                return [], [bad_input(f"siteid not provided in imp id={imp_id}. Abort all Request")]
            imps.append({**imp, "ext": {"bidder": ids}})
        if not self.endpoint:
            return [], []
        body = {**request, "imp": imps}
        return [json_call(self.endpoint, body, imp_ids(imps))], []

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        imps = request.get("imp") or []
        result = BidderResponse(currency="USD")
        errors: list[BidderError] = []
        for _, bid in answer_bids(answer):
            imp_id = bid.get("impid")
            bid_type, error = _bid_type(imp_id if isinstance(imp_id, str) else "", imps)
            if error is not None:
                errors.append(BidderError(error))
                continue
            typed = TypedBid(bid, bid_type)
            duration = bid.get("dur")
            if bid_type == "video" and isinstance(duration, int) and not isinstance(duration, bool) and duration > 0:
                typed.bid_video = {"duration": duration, "primary_category": ""}
            result.bids.append(typed)
        return result, errors


def _bid_type(imp_id: str, imps: list[dict[str, Any]]) -> tuple[str, str | None]:
    """(type, error text): banner or video from the bid's imp."""
    others = []
    for imp in imps:
        if imp.get("id", "") == imp_id:
            if imp.get("banner") is not None:
                return "banner", None
            if imp.get("video") is not None:
                return "video", None
            return "banner", "bid responses mediaType didn't match supported mediaTypes"
        others.append(str(imp.get("id", "")))
    return "banner", f"Bid response imp ID {imp_id} not found in bid request containing imps [{' '.join(others)}]\n"


def build(config: AdapterConfig) -> UnrulyAdapter:
    return UnrulyAdapter(config)

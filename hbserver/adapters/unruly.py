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

import orjson

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
from hbserver.adapters.common import answer_bids, found, json_call

_INT64 = (-(2**63), 2**63 - 1)
STATUS_TEXT = "unexpected status code: {}. Run with request.debug = 1 for more info"


class _Undecodable(ValueError):
    """A value Go's typed decoding of the imp ext would reject."""


def _go_int(value: Any) -> int | None:
    """An int field as Go decodes it (None for null: the field keeps its value)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not _INT64[0] <= value <= _INT64[1]:
        raise _Undecodable
    return value


def _site_ids(params: Any) -> dict[str, int]:
    """``ExtImpUnruly`` decoded from the params (a JSON object, null or absent means zeros)."""
    if not isinstance(params, dict):
        raise _Undecodable
    old = new = 0
    for key, value in params.items():
        if key == "siteId":
            number = _go_int(value)
            new = new if number is None else number
        elif key.lower() == "siteid":
            number = _go_int(value)
            old = old if number is None else number
    return {"siteid": old, "siteId": new}


def _bidder_of(ext: Any) -> tuple[bool, Any]:
    """(ok, params) from ``imp.ext`` read as ``{"prebid": object, "bidder": raw}`` (keys matched
    case-insensitively, the last non-null one winning); ok is False when Go could not decode it."""
    if not isinstance(ext, dict):
        return False, None
    params = None
    for key, value in ext.items():
        lowered = key.lower()
        if lowered == "prebid" and value is not None and not isinstance(value, dict):
            return False, None
        if lowered == "bidder" and value is not None:
            params = value
    return True, params


class UnrulyAdapter:
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
            except _Undecodable:
                return [], [bad_input(f"siteid not provided in imp id={imp_id}. Abort all Request")]
            imps.append({**imp, "ext": {"bidder": ids}})
        if not self.endpoint:
            return [], []
        body = {**request, "imp": imps}
        return [json_call(self.endpoint, body, (imp.get("id", "") for imp in imps))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            message = STATUS_TEXT.format(response.status)
            return None, [bad_input(message) if response.status == 400 else bad_server_response(message)]
        try:
            answer = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            return None, [_bad_body(str(exc))]
        if not isinstance(answer, dict):
            return None, [_bad_body(f"expect {{ or n, but found {found(answer)}")]
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


def _bad_body(message: str) -> BidderError:
    """PBS-Go formats its decoding error with ``%d``, which prints the error struct (Go's fmt)."""
    return bad_server_response(f"bad server response: &{{%!d(string={message})}}. ")


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

"""Sharethrough adapter: one OpenRTB call per imp and media type to ``btlr.sharethrough.com``.

Every request goes out with ``source.ext`` carrying ``str`` (the adapter's version, "10.0") and
``version`` (the PBS version) next to what the publisher put there. Each imp is sent on its own,
split by media type: an imp with banner, video and native becomes three calls, each imp keeping
only one of them (audio is dropped; an imp with none of the three is an error). ``pkey`` becomes
``tagid``; the imp's ``bcat``/``badv`` params are appended to the request's block lists, which grow
from one imp to the next as in PBS-Go. A floor in another currency is converted to USD; a failed
conversion drops the whole request. Bids are typed by ``ext.prebid.type``; a bid without a usable
type is still returned (with no type) next to an error, as PBS-Go does.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (sent as ``source.ext.version``).
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import (
    UNEXPECTED_STATUS,
    AnswerAdapter,
    AnswerWording,
    JsonShapeError,
    answer_bids,
    expect_string,
    floor_in_usd,
    found,
    json_headers,
)
from hbserver.adapters.golike import NOT_AN_OBJECT, go_media_objects, go_request_top, imp_bidder_params, set_omitempty

ADAPTER_VERSION = "10.0"
_BID_TYPES = frozenset(("banner", "video", "audio", "native"))
_SPLIT = ("banner", "video", "native")
_ANSWER_WORDING = AnswerWording(
    status="unexpected status code: {}. Run with request.debug = 1 for more info",  # Go's plain error
    bad_request=UNEXPECTED_STATUS.format(400),
    status_error=BidderError,
    not_an_object=NOT_AN_OBJECT,
)


def _string_list(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise JsonShapeError(f"cannot unmarshal {where}: expect [ or n, but found {found(value)}")
    return [expect_string(item, where) for item in value]


def _params(imp: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """(pkey, bcat, badv) from ``imp.ext.bidder``."""
    params = imp_bidder_params(imp)
    return (
        expect_string(params.get("pkey"), "openrtb_ext.ExtImpSharethrough.Pkey"),
        _string_list(params.get("bcat"), "openrtb_ext.ExtImpSharethrough.BCat"),
        _string_list(params.get("badv"), "openrtb_ext.ExtImpSharethrough.BAdv"),
    )


def _source(request: dict[str, Any], pbs_version: str) -> dict[str, Any]:
    """``request.source`` with ``ext.str`` and ``ext.version`` set (an ext that is no object is replaced)."""
    source = request.get("source")
    out = dict(source) if isinstance(source, dict) else {}
    ext = out.get("ext")
    out["ext"] = {**(ext if isinstance(ext, dict) else {}), "str": ADAPTER_VERSION, "version": pbs_version}
    return out


def _split(imp: dict[str, Any]) -> list[dict[str, Any]]:
    """One copy of ``imp`` per media type it has (banner, video, native), each with only that one."""
    if all(imp.get(kind) is None for kind in _SPLIT):
        raise ValueError("Invalid MediaType. Sharethrough only supports Banner, Video and Native.")
    base = {key: value for key, value in imp.items() if key != "audio"}
    out = []
    for kind in _SPLIT:
        if imp.get(kind) is not None:
            out.append({key: value for key, value in base.items() if key == kind or key not in _SPLIT})
    return out


def _bid_type(bid: dict[str, Any]) -> tuple[str, BidderError | None]:
    ext = bid.get("ext")
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if isinstance(prebid, dict):
        kind = prebid.get("type", "")
        if isinstance(kind, str):
            if kind in _BID_TYPES:
                return kind, None
            return "", BidderError(f"invalid BidType: {kind}")
    return "", bad_server_response(f'Failed to parse bid mediatype for impression "{bid.get("impid", "")}"')


class SharethroughAdapter(AnswerAdapter):
    answer_wording = _ANSWER_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.pbs_version: str = config.extra.get("pbs_version", "") or ""
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        base = go_request_top(request)
        base["source"] = _source(request, self.pbs_version)
        bcat = list(request.get("bcat") or ())
        badv = list(request.get("badv") or ())
        calls: list[RequestData] = []
        for imp in request.get("imp") or ():
            try:
                pkey, imp_bcat, imp_badv = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            try:
                imp = floor_in_usd(imp, info)
            except ConversionError as exc:
                return [], [BidderError(str(exc))]
            imp = {key: value for key, value in imp.items() if key != "tagid"}
            if pkey:
                imp["tagid"] = pkey
            bcat += imp_bcat
            badv += imp_badv
            try:
                parts = _split(imp)
            except ValueError as exc:
                errors.append(bad_input(str(exc)))
                continue
            body = dict(base)
            set_omitempty(body, "bcat", list(bcat))
            set_omitempty(body, "badv", list(badv))
            for part in parts:
                body["imp"] = [go_media_objects(part)]
                calls.append(RequestData("POST", self.endpoint, orjson.dumps(body), self.headers, [part.get("id", "")]))
        return calls, errors

    def bids_from(
        self, request: dict[str, Any], call: RequestData, answer: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        result = BidderResponse(currency="USD")
        errors: list[BidderError] = []
        for _, bid in answer_bids(answer):
            bid_type, error = _bid_type(bid)
            if error is not None:
                errors.append(error)
            result.bids.append(TypedBid(bid, bid_type))
        return result, errors


def build(config: AdapterConfig) -> SharethroughAdapter:
    return SharethroughAdapter(config)

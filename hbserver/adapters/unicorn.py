"""UNICORN adapter: the whole request in one OpenRTB call to ``ds.uncn.jp``, for apps only.

A request under COPPA, GDPR (``regs.ext.gdpr`` 1) or CCPA (``regs.ext.us_privacy``) is refused. Each
imp's ext becomes ``{"bidder": <params>, "context": ...}`` (its other keys dropped), with the
placement taken from ``ext.prebid.storedrequest.id`` when the params have none; the imp is sent
``secure`` with the placement as ``tagid``. The first imp's ``mediaId`` and ``publisherId`` become
the app's id and publisher id, its ``accountId`` (required) goes in the request's ext beside
``prebid`` (as PBS-Go's imp-level ``ExtImpPrebid`` keeps it), and ``source.ext`` names the bidder.
Any failure fails the request. Bids are banner when their imp has a banner, untyped otherwise.
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
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, Refusal, expect_object, imp_ids, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    DEVICE_FIELDS,
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_ext_imp_prebid,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    json_path_string,
)
from hbserver.adapters.steps import HEADER_SETS

_PARAMS = "openrtb_ext.ExtImpUnicorn"
_FIELDS = {
    "placementId": ("PlacementID", GoKind.STRING),
    "publisherId": ("PublisherID", GoKind.STRING),
    "mediaId": ("MediaID", GoKind.STRING),
    "accountId": ("AccountID", GoKind.INT),
}
_ANSWER_WORDING = AnswerWording(
    status="Unexpected http status code: {}", not_an_object=NOT_AN_OBJECT, body_error=BidderError
)
_SOURCE_EXT = {"stype": "prebid_server_uncn", "bidder": "unicorn"}


class _Refused(Refusal):
    """See ``common.Refusal``."""


def _privacy_refusal(request: Mapping[str, Any]) -> str | None:
    regs = request.get("regs")
    if not isinstance(regs, dict):
        return None
    if regs.get("coppa") == 1:
        return "COPPA is not supported"
    ext = regs.get("ext")
    if not isinstance(ext, dict):
        return None
    if ext.get("gdpr") == 1:
        return "GDPR is not supported"
    if isinstance(ext.get("us_privacy"), str) and ext["us_privacy"]:
        return "CCPA is not supported"
    return None


def _imp_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``unicornImpExt`` decoded from the imp's ext and written again (params omitempty, ``context``
    with its ``data``); JsonShapeError in json-iterator's words."""
    if "ext" not in imp:
        raise JsonShapeError(ABSENT_OBJECT)
    out: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for name, value in go_members(expect_object(imp["ext"], ""), "context", "bidder"):
        if name == "context":
            if value is not None:
                data = [item for _, item in go_members(expect_object(value, "unicorn.unicornImpExt.Context"), "data")]
                out["context"] = {"data": data[-1]} if data and data[-1] is not None else {}
            else:
                out.pop("context", None)
            continue
        for field, item in go_members(expect_object(value, "unicorn.unicornImpExt.Bidder"), *_FIELDS):
            go_name, kind = _FIELDS[field]
            decoded = go_value(item, kind, f"{_PARAMS}.{go_name}")
            if decoded is not None:
                params[field] = decoded
    out["bidder"] = {key: value for key, value in params.items() if value}
    return out


def _outgoing_imp(index: int, imp: dict[str, Any]) -> dict[str, Any]:
    try:
        ext = _imp_ext(imp)
    except JsonShapeError as exc:
        raise _Refused(bad_input(f"Error while decoding imp[{index}].ext: {exc}")) from None
    if not ext["bidder"].get("placementId"):
        try:
            placement = json_path_string(imp.get("ext"), "prebid", "storedrequest", "id")
        except ValueError as exc:
            message = f"Error get StoredRequestImpID from imp[{index}]: stored request id not found: {exc}"
            raise _Refused(bad_input(message)) from None
        if placement:
            ext["bidder"]["placementId"] = placement
    out = {**go_media_objects(imp), "ext": ext, "secure": 1}
    placement = ext["bidder"].get("placementId", "")
    if placement:
        out["tagid"] = placement
    else:
        out.pop("tagid", None)
    return out


def _request_ext(ext: Any, account_id: int) -> dict[str, Any]:
    """The request's ext as ``unicornExt``: ``prebid`` (as ``ExtImpPrebid`` keeps it, none when the
    ext does not decode) and ``accountId``."""
    prebid = None
    if isinstance(ext, dict):
        value = [item for _, item in go_members(ext, "prebid")]
        if value and isinstance(value[-1], dict):  # anything else fails to decode: no prebid
            prebid = go_ext_imp_prebid(value[-1])
    out: dict[str, Any] = {"prebid": prebid} if prebid is not None else {}
    out["accountId"] = account_id
    return out


class UnicornAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        refusal = _privacy_refusal(request)
        if refusal is not None:
            return [], [bad_input(refusal)]
        try:
            imps = [_outgoing_imp(index, imp) for index, imp in enumerate(request.get("imp") or ())]
        except _Refused as refused:
            return [], [refused.error]
        app = request.get("app")
        if not isinstance(app, dict):
            return [], [BidderError("request app is required")]
        if not imps:
            return [], []
        params = imps[0]["ext"]["bidder"]
        body = go_request_top(request)
        body["imp"] = imps
        body["app"] = _app(app, params)
        if isinstance(body.get("device"), dict):
            body["device"] = {key: value for key, value in body["device"].items() if key in DEVICE_FIELDS}
        source = request.get("source")
        body["source"] = {**(source if isinstance(source, dict) else {}), "ext": dict(_SOURCE_EXT)}
        if not params.get("accountId"):
            return [], [BidderError("accountId field is required")]
        body["ext"] = _request_ext(request.get("ext"), params["accountId"])
        headers: dict[str, str] = {}
        for name in ("json", "openrtb_25", "device"):
            HEADER_SETS[name](headers, request)
        return [json_call(self.endpoint, body, imp_ids(imps), headers)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        for bid in answer.bids:
            banner = any(
                imp.get("id") == bid["impid"] and imp.get("banner") is not None for imp in request.get("imp") or ()
            )
            result.bids.append(TypedBid(bid, "banner" if banner else ""))
        return result, []


def _app(app: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The app with the first imp's ``mediaId`` as its id and ``publisherId`` as its publisher's id."""
    out = dict(app)
    if params.get("mediaId"):
        out["id"] = params["mediaId"]
    if params.get("publisherId"):
        publisher = app.get("publisher")
        out["publisher"] = {**(publisher if isinstance(publisher, dict) else {}), "id": params["publisherId"]}
    return out


def build(config: AdapterConfig) -> UnicornAdapter:
    return UnicornAdapter(config)

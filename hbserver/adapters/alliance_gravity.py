"""Alliance Gravity adapter: every imp in one OpenRTB call to the configured endpoint.

Each imp's ext becomes ``{"bidder": {}, "prebid": {"storedrequest": {"id": <srid>}}}`` (``ae`` kept
when set; other ext members dropped); one imp whose ext or params do not decode fails the request.
The call carries the device's ``User-Agent`` and IP (``X-Forwarded-For``, IPv4 before IPv6), the
site page as ``Referer`` and ``Cookie: uids=<user.buyeruid>``. Bids are typed by
``ext.prebid.type``; an answer with no typed bid is no answer (its errors dropped, as PBS-Go does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hbserver.adapters.base import (
    JSON_HEADERS,
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
from hbserver.adapters.common import UNEXPECTED_STATUS, AnswerWording, JsonShapeError, json_call
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_fields,
    go_imp,
    go_request_top,
    go_value,
    imp_bidder_params,
)

BID_TYPES = frozenset({"banner", "video", "audio", "native"})
_ANSWER_WORDING = AnswerWording(
    status=UNEXPECTED_STATUS + ".",
    bad_request="Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
    not_an_object=NOT_AN_OBJECT,
    body_error=BidderError,
)


def _imp_as_sent(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its ext rewritten to name the stored request ``srid``; JsonShapeError when its
    ext or params do not decode."""
    params = imp_bidder_params(imp)
    srid = go_value(go_field(params, "srid"), GoKind.STRING, "openrtb_ext.ExtImpAllianceGravity.SrId") or ""
    ext: dict[str, Any] = {"bidder": {}, "prebid": {"storedrequest": {"id": srid}}}
    ae = go_fields(imp["ext"], "ae").get("ae")
    if ae:
        ext["ae"] = ae
    return go_imp({**imp, "ext": ext})


def _text(obj: Any, name: str) -> str:
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, str) else ""


def request_headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = dict(JSON_HEADERS)
    device, site, user = request.get("device"), request.get("site"), request.get("user")
    if _text(device, "ua"):
        headers["User-Agent"] = _text(device, "ua")
    address = _text(device, "ip") or _text(device, "ipv6")
    if address:
        headers["X-Forwarded-For"] = address
    if _text(site, "page"):
        headers["Referer"] = _text(site, "page")
    if _text(user, "buyeruid"):
        headers["Cookie"] = "uids=" + _text(user, "buyeruid")
    return headers


def bid_type(bid: Mapping[str, Any]) -> str:
    """``ext.prebid.type`` (json-iterator decoding ``openrtb_ext.ExtBid``); BidderError otherwise."""
    ext = bid.get("ext")
    prebid = go_field(ext, "prebid") if isinstance(ext, dict) else None
    if isinstance(prebid, dict):
        kind = go_field(prebid, "type")
        if kind is None or isinstance(kind, str):
            if kind in BID_TYPES:
                return kind
            raise _Untyped(BidderError(f"invalid BidType: {kind or ''}"))
    raise _Untyped(bad_server_response(f'Failed to parse impression "{bid.get("impid", "")}" mediatype'))


class _Untyped(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


class AllianceGravityAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        try:
            imps = [_imp_as_sent(imp) for imp in request.get("imp") or ()]
        except JsonShapeError as exc:
            return [], [bad_input(str(exc))]
        body = {**go_request_top(request), "imp": imps}
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in imps], request_headers(request))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                result.bids.append(TypedBid(bid, bid_type(bid)))
            except _Untyped as untyped:
                errors.append(untyped.error)
        if not result.bids:
            return None, []
        return result, errors


def build(config: AdapterConfig) -> AllianceGravityAdapter:
    return AllianceGravityAdapter(config)

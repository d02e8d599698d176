"""MediaGo adapter: the whole request in one OpenRTB call to the endpoint with ``{{.AccountID}}``
(the first imp's ``token``) and ``{{.Host}}`` (its ``region``: ``APAC`` jp, ``EU`` eu, else us)
filled, path-escaped.

A banner without both ``w`` and ``h`` (or with either 0) takes its first format's size. Calls carry
``X-Openrtb-Version: 2.5``. Bids are typed by ``mtype`` (banner or native), else by their imp.
PBS-Go's reading of a token from ``ext.prebid.bidderparams`` can only succeed for a request ext
that fails to decode, which PBS core never passes on, so the first imp's params alone count here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, json_call, json_headers, resolve_macros
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_fields,
    go_imp,
    go_request_top,
    go_value,
    imp_bidder_params,
)

REGION_HOSTS = {"APAC": "jp", "EU": "eu", "US": "us"}
_SEGMENT_SAFE = "$&+:=@"  # what Go's url.PathEscape leaves besides letters, digits and -_.~
_STRUCT = "openrtb_ext.ExtImpMediaGo"
_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_HEADERS = json_headers(x_openrtb_version="2.5")


def token_and_region(imp: Mapping[str, Any]) -> tuple[str, str]:
    """The first imp's ``token`` and ``region``; JsonShapeError when its ext or params do not
    decode, or the token is empty."""
    fields = go_fields(imp_bidder_params(imp), "token", "region", "placementId")
    token = go_value(fields.get("token"), GoKind.STRING, f"{_STRUCT}.Token") or ""
    region = go_value(fields.get("region"), GoKind.STRING, f"{_STRUCT}.Region") or ""
    go_value(fields.get("placementId"), GoKind.STRING, f"{_STRUCT}.PlacementId")
    if not token:
        raise JsonShapeError("mediago token not found")
    return token, region


def _sized_banner(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` with a banner lacking a size given its first format's ``w`` and ``h``."""
    banner = imp.get("banner")
    if not isinstance(banner, dict):
        return imp
    formats = banner.get("format")
    if not (isinstance(formats, list) and formats and isinstance(formats[0], dict)):
        return imp
    if banner.get("w") and banner.get("h"):
        return imp
    first = formats[0]
    return {**imp, "banner": {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}}


def bid_type(bid: Mapping[str, Any], imps: Any) -> str | None:
    """Banner or native by ``mtype``, else by the first imp with the bid's id that has either."""
    mtype = bid.get("mtype")
    if mtype == 1:
        return "banner"
    if mtype == 4:
        return "native"
    for imp in imps or ():
        if imp.get("id") == bid.get("impid"):
            if imp.get("banner") is not None:
                return "banner"
            if imp.get("native") is not None:
                return "native"
    return None


class MediaGoAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        try:
            token, region = token_and_region(imps[0] if imps else {"ext": {"bidder": {}}})
        except JsonShapeError as exc:
            return [], [BidderError(str(exc))]
        uri = resolve_macros(
            self.endpoint,
            {"AccountID": quote(token, safe=_SEGMENT_SAFE), "Host": REGION_HOSTS.get(region, "us")},
        )
        sent = [go_imp(_sized_banner(imp)) for imp in imps]
        body = {**go_request_top(request), "imp": sent}
        return [json_call(uri, body, [imp.get("id", "") for imp in sent], _HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            kind = bid_type(bid, request.get("imp"))
            if kind is None:
                errors.append(bad_server_response(f"Unsupported MType {bid.get('mtype', 0)}"))
                continue
            result.bids.append(TypedBid(bid, kind))
        return result, errors


def build(config: AdapterConfig) -> MediaGoAdapter:
    return MediaGoAdapter(config)

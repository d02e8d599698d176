"""Adquery adapter: one call per imp to the configured endpoint, in Adquery's own request format
(placement, type, tag id, the imp's banner sizes, the user id and the device and page facts).

The answer is one banner bid or none: ``data`` null is an empty answer; ``cpm``, ``mediaType.width``
and ``mediaType.height`` are numbers written as text (each that does not parse is reported, in
Go's strconv words), and a media type other than banner fails the answer. The bid's imp id is its
``requestId`` without the request id in front, its markup the ``adqLib`` script followed by the
``tag``, its currency the answer's (PLN when none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
from hbserver.adapters.common import PLAIN_BODY_WORDING, JsonShapeError, OwnAnswerAdapter, expect_object, json_call
from hbserver.adapters.golike import (
    GoKind,
    go_json_object,
    go_members,
    go_quote,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.steps import HEADER_SETS
from hbserver.numbers import NumberError, parse_float, parse_int

_PARAMS = "openrtb_ext.ImpExtAdQuery"
_DATA_FIELDS = {
    "requestId": ("ReqID", GoKind.STRING),
    "creationId": ("CrID", GoKind.INT),
    "currency": ("Currency", GoKind.STRING),
    "cpm": ("CPM", GoKind.STRING),
    "code": ("Code", GoKind.STRING),
    "adqLib": ("AdQLib", GoKind.STRING),
    "tag": ("Tag", GoKind.STRING),
    "adDomains": ("ADomains", GoKind.STRINGS),
    "dealid": ("DealID", GoKind.STRING),
}
_MEDIA_FIELDS = ("name", "width", "height")
_DEFAULT_CURRENCY = "PLN"


def _params(imp: Mapping[str, Any]) -> tuple[str, str]:
    """(placementId, type); JsonShapeError in json-iterator's words when the imp's ext does not decode."""
    params = {"placementId": "", "type": ""}
    for name, value in go_members(imp_bidder_params(imp), "placementId", "type"):
        go_name = "PlacementID" if name == "placementId" else "Type"
        params[name] = go_value(value, GoKind.STRING, f"{_PARAMS}.{go_name}") or ""
    return params["placementId"], params["type"]


def _text(owner: Any, key: str) -> str:
    value = owner.get(key) if isinstance(owner, dict) else None
    return value if isinstance(value, str) else ""


def _sizes(imp: Mapping[str, Any]) -> str:
    """The banner's formats as ``WxH`` joined by commas, else its own ``WxH``, else ""."""
    banner = imp.get("banner")
    if not isinstance(banner, dict):
        return ""
    formats = banner.get("format")
    if isinstance(formats, list) and formats:
        return ",".join(f"{_int(f, 'w')}x{_int(f, 'h')}" for f in formats)
    if banner.get("w") is not None and banner.get("h") is not None:
        return f"{_int(banner, 'w')}x{_int(banner, 'h')}"
    return ""


def _int(owner: Any, key: str) -> int:
    value = owner.get(key) if isinstance(owner, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _body(request: Mapping[str, Any], imp: Mapping[str, Any], placement: str, kind: str) -> dict[str, Any]:
    request_id, device = _text(request, "id"), request.get("device")
    return {
        "v": "server",
        "placementCode": placement,
        "type": kind,
        "adUnitCode": _text(imp, "tagid"),
        "bidQid": _text(request.get("user"), "id"),
        "bidId": request_id + _text(imp, "id"),
        "bidIp": _text(device, "ip"),
        "bidIpv6": _text(device, "ipv6"),
        "bidUa": _text(device, "ua"),
        "bidder": "adquery",
        "bidPageUrl": _text(request.get("site"), "page"),
        "bidderRequestId": request_id,
        "bidRequestsCount": 1,
        "bidderRequestsCount": 1,
        "sizes": _sizes(imp),
    }


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    HEADER_SETS["json"](headers, request)
    HEADER_SETS["openrtb_25"](headers, request)
    ip = _text(request.get("device"), "ip")
    if ip:
        headers["X-Forwarded-For"] = ip
    return headers


def _data(body: bytes) -> dict[str, Any] | None:
    """The answer's ``data`` (None when null or absent) with its ``mediaType`` decoded; JsonShapeError
    in json-iterator's words when it does not decode."""
    answer = go_json_object(body)
    data = None
    for _, value in go_members(expect_object(answer, ""), "data"):
        data = value
    if data is None:
        return None
    out: dict[str, Any] = {"mediaType": dict.fromkeys(_MEDIA_FIELDS, "")}
    for name, value in go_members(expect_object(data, "adquery.ResponseAdQuery.Data"), *_DATA_FIELDS, "mediaType"):
        if name == "mediaType":
            for field, item in go_members(expect_object(value, "adquery.ResponseData.MediaType"), *_MEDIA_FIELDS):
                go_name = field.capitalize()
                out["mediaType"][field] = go_value(item, GoKind.STRING, f"adquery.AdQueryMediaType.{go_name}") or ""
            continue
        go_name, kind = _DATA_FIELDS[name]
        out[name] = go_value(value, kind, f"adquery.ResponseData.{go_name}")
    return out


def _numbers(data: Mapping[str, Any]) -> tuple[float, int, int, list[BidderError]]:
    """(price, width, height) as Go's strconv parses them, with an error for each that does not."""
    errors: list[BidderError] = []
    media = data["mediaType"]
    price = width = height = 0
    try:
        price = parse_float(data.get("cpm") or "")
    except NumberError as exc:
        errors.append(BidderError(f"strconv.ParseFloat: parsing {go_quote(exc.text)}: {exc.reason}"))
    try:
        width = parse_int(media["width"])
    except NumberError as exc:
        errors.append(BidderError(f"strconv.ParseInt: parsing {go_quote(exc.text)}: {exc.reason}"))
    try:
        height = parse_int(media["height"])
    except NumberError as exc:
        errors.append(BidderError(f"strconv.ParseInt: parsing {go_quote(exc.text)}: {exc.reason}"))
    return price, width, height, errors


def _imp_id(request_id: str, bid_request_id: str) -> str:
    """``bid_request_id`` without a match of the request id (a Go regular expression) at its start."""
    try:
        match = re.match(request_id, bid_request_id)
    except re.error:
        match = None
        if bid_request_id.startswith(request_id):
            return bid_request_id[len(request_id) :]
    return bid_request_id[match.end() :] if match else bid_request_id


class AdqueryAdapter(OwnAnswerAdapter):
    answer_wording = PLAIN_BODY_WORDING

    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        headers = _headers(request)
        calls, errors = [], []
        for imp in request.get("imp") or ():
            try:
                placement, kind = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            calls.append(json_call(self.endpoint, _body(request, imp, placement, kind), [imp.get("id", "")], headers))
        return calls, errors

    def read_body(self, body: bytes) -> dict[str, Any] | None:
        """The answer's ``data`` as ``_data`` reads it (None: no bid)."""
        return _data(body)

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any] | None
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if data is None:
            return BidderResponse(), []
        price, width, height, errors = _numbers(data)
        media_type = data["mediaType"]["name"]
        if media_type != "banner":
            return None, [BidderError(f"unsupported MediaType: {media_type}")]
        if errors:
            return None, errors
        bid_request_id = data.get("requestId") or ""
        bid: dict[str, Any] = {
            "id": bid_request_id,
            "impid": _imp_id(_text(request, "id"), bid_request_id),
            "price": price,
            "adm": f'<script src="{data.get("adqLib") or ""}"></script>{data.get("tag") or ""}',
            "adomain": data.get("adDomains"),
            "crid": str(data.get("creationId") or 0),
            "w": width,
            "h": height,
        }
        bid = {key: value for key, value in bid.items() if value or key in ("id", "impid", "price")}
        return BidderResponse([TypedBid(bid, "banner")], data.get("currency") or _DEFAULT_CURRENCY), []


def build(config: AdapterConfig) -> AdqueryAdapter:
    return AdqueryAdapter(config)

"""Missena adapter: one call for the first imp whose params decode, to the endpoint with the imp's
``apiKey`` (path-escaped) as ``{{.PublisherID}}``, in Missena's own ad-request format with the whole
OpenRTB request as ``ortb2``.

The currency asked for is USD when the request accepts it, else EUR when it accepts that, else USD.
A non-zero floor goes in that currency as it is; when the request accepts neither, it is converted
from ``bidfloorcur`` to USD (an imp without a rate is skipped with the conversion error and the next
imp is tried). The user's ``ext.eids`` go as ``userEids``. The answer is one banner bid (``ad``,
``cpm``, ``currency``, ``requestId``) for the request's first imp, with the request's id.

Host settings in ``AdapterConfig.extra``: ``pbs_version`` (sent as ``prebid-server@<version>``,
``unknown`` when not set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, Refusal, expect_object, json_call, resolve_macros
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_bid,
    go_json_object,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.gourl import go_path_escape

_PARAMS = "openrtb_ext.ExtImpMissena"
_FIELDS = {
    "apiKey": ("APIKey", GoKind.STRING),
    "formats": ("Formats", GoKind.STRINGS),
    "placement": ("Placement", GoKind.STRING),
    "sample": ("Sample", GoKind.STRING),
    "settings": ("Settings", GoKind.RAW),
}
_ANSWER = "missena.BidServerResponse"
_ANSWER_FIELDS = {
    "ad": ("Ad", GoKind.STRING),
    "cpm": ("Cpm", GoKind.FLOAT),
    "currency": ("Currency", GoKind.STRING),
    "requestId": ("RequestID", GoKind.STRING),
}
_ANSWER_WORDING = AnswerWording(
    status="Unexpected status code: {}. Run with request.debug = 1 for more info.",
    bad_request="Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info.",
)
_REGS_OMITEMPTY = frozenset({"coppa", "us_privacy", "gpp", "gpp_sid"})


def _params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp's params (the omitempty ones left out when empty); BidderError in Missena's words."""
    try:
        bidder = imp_bidder_params(imp)
    except ImpExtError as exc:
        raw = orjson.dumps(imp["ext"]).decode() if "ext" in imp else ""
        raise _Skipped(bad_input(f"Error parsing bidderExt object: {exc}, input: {raw}")) from None
    except JsonShapeError:
        raise _Skipped(bad_input("Error parsing missenaExt parameters")) from None
    params: dict[str, Any] = {}
    try:
        for name, value in go_members(bidder, *_FIELDS):
            go_name, kind = _FIELDS[name]
            if kind is GoKind.RAW:
                value = expect_object(value, f"{_PARAMS}.{go_name}")
            params[name] = go_value(value, kind, f"{_PARAMS}.{go_name}")
    except JsonShapeError:
        raise _Skipped(bad_input("Error parsing missenaExt parameters")) from None
    return {name: value for name, value in params.items() if value}


class _Skipped(Refusal):
    """See ``common.Refusal``."""


def _currency(currencies: Any) -> str | None:
    """USD when accepted, else EUR when accepted, else None."""
    accepted = currencies if isinstance(currencies, list) else []
    if "USD" in accepted:
        return "USD"
    return "EUR" if "EUR" in accepted else None


def _floor(imp: Mapping[str, Any], request: Mapping[str, Any], info: RequestInfo) -> tuple[float, str]:
    """(floor, its currency), (0, "") without a floor; ConversionError when it needs a rate it has not."""
    floor = imp.get("bidfloor")
    if not isinstance(floor, int | float) or isinstance(floor, bool) or floor == 0:
        return 0, ""
    currency = _currency(request.get("cur"))
    if currency is not None:
        return floor, currency
    source = imp.get("bidfloorcur")
    return info.convert_currency(floor, source if isinstance(source, str) else "", "USD"), "USD"


def _eids(request: Mapping[str, Any]) -> Any:
    user = request.get("user")
    ext = user.get("ext") if isinstance(user, dict) else None
    eids = ext.get("eids") if isinstance(ext, dict) else None
    return eids if isinstance(eids, list) and eids else None


def _ortb2(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request as Go's typed BidRequest writes it again (zero omitempty fields of regs left out)."""
    out = go_request_top(request)
    out["imp"] = [go_media_objects(imp) for imp in request.get("imp") or ()]
    regs = out.get("regs")
    if isinstance(regs, dict):
        out["regs"] = {key: value for key, value in regs.items() if not _omitted(key, value)}
    return out


def _omitted(key: str, value: Any) -> bool:
    return (value is None and key != "ext") or (key in _REGS_OMITEMPTY and not value)


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    device = request.get("device")
    if isinstance(device, dict):
        if isinstance(device.get("ua"), str) and device["ua"]:
            headers["User-Agent"] = device["ua"]
        address = next((device[key] for key in ("ip", "ipv6") if isinstance(device.get(key), str) and device[key]), "")
        if address:
            headers["X-Forwarded-For"] = address
    site = request.get("site")
    page = site.get("page") if isinstance(site, dict) else None
    if isinstance(page, str) and page:
        headers["Referer"] = page
        if not any(ord(char) < 0x20 or char == "\x7f" for char in page):  # Go's url.Parse refuses these
            try:
                parts = urlsplit(page)
            except ValueError:
                return headers
            headers["Origin"] = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    return headers


class MissenaAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.version = f"prebid-server@{config.extra.get('pbs_version') or 'unknown'}"

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                return [self._call(imp, _params(imp), request, info)], errors
            except _Skipped as skipped:
                errors.append(skipped.error)
            except ConversionError as exc:
                errors.append(BidderError(str(exc)))
        return [], errors

    def _call(
        self, imp: dict[str, Any], params: dict[str, Any], request: dict[str, Any], info: RequestInfo
    ) -> RequestData:
        floor, floor_currency = _floor(imp, request, info)
        body: dict[str, Any] = {
            "adunit": imp.get("id"),
            "currency": _currency(request.get("cur")) or "USD",
            "debug": request.get("test") == 1,
            "userEids": _eids(request),
            "floor": floor,
            "floor_currency": floor_currency,
            "ik": request.get("id"),
            "request_id": request.get("id"),
            "timeout": request.get("tmax"),
            "version": self.version,
        }
        body = {key: value for key, value in body.items() if value}
        body["params"] = params
        body["ortb2"] = _ortb2(request)
        uri = resolve_macros(self.endpoint, {"PublisherID": go_path_escape(str(params.get("apiKey", "")))})
        return json_call(uri, body, [imp.get("id", "")], _headers(request))

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = _ANSWER_WORDING.status_failure(response.status)
        if failure is not None:
            return None, failure
        try:
            answer = _answer(response.body)
            imps = request.get("imp") or [{}]
            bid = go_bid({"id": request.get("id"), "impid": imps[0].get("id"), "price": answer.get("cpm"),
                          "adm": answer.get("ad"), "crid": answer.get("requestId")})  # fmt: skip
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        return BidderResponse([TypedBid(bid, "banner")], answer.get("currency") or "USD"), []


def _answer(body: bytes) -> dict[str, Any]:
    """Missena's answer decoded as Go decodes it; JsonShapeError in json-iterator's words."""
    data = go_json_object(body)
    out: dict[str, Any] = {}
    for name, value in go_members(expect_object(data, ""), *_ANSWER_FIELDS):
        go_name, kind = _ANSWER_FIELDS[name]
        decoded = go_value(value, kind, f"{_ANSWER}.{go_name}")
        if decoded is not None:
            out[name] = decoded
    return out


def build(config: AdapterConfig) -> MissenaAdapter:
    return MissenaAdapter(config)

"""Insticator adapter: the imps grouped by their ``adUnitId`` param, one OpenRTB call per group.

Each imp's ``ext`` becomes ``{"insticator": {"adUnitId", "publisherId"}}``; a video imp needs a
non-zero ``w`` and ``h`` and ``mimes``; a positive floor in another currency is converted to USD
(rounded to 4 decimals) and every positive floor is labelled ``USD``. An imp that fails any of this
is left out with an error. The first imp that passes the params check gives the publisher id:
``site.publisher.id`` and ``app.publisher.id`` are set to it and it is added to the endpoint's query
as ``publisherId``. The request's ``ext`` is replaced by ``{"insticator": {"caller": [...]}}``, the
callers it already named followed by Prebid Server's own (dropped with an error when it does not
decode). App requests go to ``extra_info``'s ``app_endpoint`` when one is configured. Bids are video
for ``mtype`` 2, banner otherwise, with their seat, media type, domains and categories as meta.
"""

from __future__ import annotations

import math
from typing import Any

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
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    expect_object,
    expect_string,
    imp_ids,
    json_call,
    json_headers,
    with_header,
)
from hbserver.adapters.golike import (
    decode_go_answer,
    go_device,
    go_list,
    go_media_objects,
    go_members,
    go_request_top,
    imp_bidder_params,
    set_omitempty,
    with_query_value,
)

_CALLER = {"name": "Prebid-Server", "version": "n/a"}
_BAD_VIDEO = "One or more invalid or missing video field(s) w, h, mimes"
_BAD_FLOOR = "Error in converting the provided bid floor currency from {} to USD"
# a body that does not decode is a plain Go error (no bidder error class)
_ANSWER_WORDING = AnswerWording(body_error=BidderError)


def _app_endpoint(extra_info: str) -> str:
    """``app_endpoint`` of the host's extra info ("" when none); ValueError in PBS-Go's words when
    the extra info does not decode (the adapter is then not built)."""
    if not extra_info:
        return ""
    try:
        info = expect_object(orjson.loads(extra_info), "")
        endpoint = ""
        for _, value in go_members(info, "app_endpoint"):
            endpoint = expect_string(value, "insticator.ExtraInfo.AppEndpoint")
    except (orjson.JSONDecodeError, JsonShapeError) as exc:
        raise ValueError(f"invalid extra info: {exc}") from None
    return endpoint


def _callers(ext: Any) -> list[dict[str, Any]]:
    """The callers ``ext.insticator.caller`` names, each as Go writes it again (empty name and
    version left out), then Prebid Server's. JsonShapeError in json-iterator's words when ``ext``
    does not decode. A repeated ``insticator`` object is decoded into the one read before it (Go's
    pointer field), so only a later ``caller`` replaces an earlier one; null resets it."""
    insticator: dict[str, Any] | None = None
    for _, value in go_members(expect_object(ext, ""), "insticator"):
        if value is None:
            insticator = None
            continue
        obj = expect_object(value, "insticator.reqExt.Insticator")
        insticator = insticator if insticator is not None else {}
        for _, callers in go_members(obj, "caller"):
            insticator["caller"] = [_caller(item) for item in go_list(callers, "insticator.reqInsticatorExt.Caller")]
    named = insticator.get("caller", []) if insticator is not None else []
    return [*named, _CALLER]


def _caller(item: Any) -> dict[str, Any]:
    fields = {"name": "", "version": ""}
    for name, value in go_members(expect_object(item, "[]insticator.insticatorCaller"), "name", "version"):
        fields[name] = expect_string(value, f"insticator.insticatorCaller.{name.capitalize()}")
    return {name: value for name, value in fields.items() if value}


def _params(imp: dict[str, Any]) -> tuple[str, str]:
    """(``adUnitId``, ``publisherId``) of the imp's params; JsonShapeError in json-iterator's words."""
    values = {"adUnitId": "", "publisherId": ""}
    params = imp_bidder_params(imp, null_is_absent=True)
    for name, value in go_members(params, "adUnitId", "publisherId"):
        values[name] = expect_string(value, f"openrtb_ext.ExtImpInsticator.{name[0].upper()}{name[1:]}")
    return values["adUnitId"], values["publisherId"]


def _valid_video(video: Any) -> bool:
    """No video, or one with a non-zero ``w`` and ``h`` and ``mimes`` (an empty list counts)."""
    if not isinstance(video, dict):
        return True
    return bool(video.get("w")) and bool(video.get("h")) and video.get("mimes") is not None


def _round4(amount: float) -> float:
    """Go's ``math.Round(amount*10000) / 10000`` (halves away from zero)."""
    scaled = amount * 10000
    if not math.isfinite(scaled):
        return scaled / 10000
    whole = math.trunc(scaled)
    if abs(scaled - whole) >= 0.5:
        whole += math.copysign(1, scaled)
    return whole / 10000


def _with_floor(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    """``imp`` with a positive floor in USD; ConversionError when there is no rate."""
    floor, currency = imp.get("bidfloor"), imp.get("bidfloorcur")
    if not isinstance(floor, int | float) or isinstance(floor, bool) or floor <= 0:
        return imp
    if isinstance(currency, str) and currency and currency.upper() != "USD":
        floor = _round4(info.convert_currency(floor, currency, "USD"))
        if floor <= 0:
            return imp
    return {**imp, "bidfloor": floor, "bidfloorcur": "USD"}


def _with_publisher(request: dict[str, Any], publisher_id: str) -> None:
    """``site.publisher.id`` and ``app.publisher.id`` set to ``publisher_id`` (an empty one leaves
    no ``id``, as Go's omitempty does), on copies of those objects."""
    for kind in ("site", "app"):
        container = request.get(kind)
        if not isinstance(container, dict):
            continue
        publisher = container.get("publisher")
        publisher = dict(publisher) if isinstance(publisher, dict) else {}
        set_omitempty(publisher, "id", publisher_id)
        request[kind] = {**container, "publisher": publisher}


def _with_query_value(endpoint: str, name: str, value: str) -> str:
    """``with_query_value``; the endpoint unchanged where it does not parse."""
    try:
        return with_query_value(endpoint, name, value)
    except ValueError:
        return endpoint


def _headers(device: Any) -> dict[str, str]:
    headers = json_headers()
    if isinstance(device, dict):
        with_header(headers, "User-Agent", device.get("ua"))
        with_header(headers, "X-Forwarded-For", device.get("ipv6"))
        with_header(headers, "X-Forwarded-For", device.get("ip"))
        with_header(headers, "IP", device.get("ip"))
    return headers


class InsticatorAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.app_endpoint = _app_endpoint(str(config.extra.get("extra_info") or ""))

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        base = go_request_top(request)
        base.pop("ext", None)
        if isinstance(base.get("device"), dict):
            base["device"] = go_device(base["device"])
        if request.get("ext") is not None:
            try:
                base["ext"] = {"insticator": {"caller": _callers(request["ext"])}}
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
        else:
            base["ext"] = {"insticator": {"caller": [_CALLER]}}
        groups: dict[str, list[dict[str, Any]]] = {}
        publisher_id: str | None = None
        for imp in request.get("imp") or ():
            try:
                ad_unit, imp_publisher = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if not _valid_video(imp.get("video")):
                errors.append(bad_input(_BAD_VIDEO))
                continue
            if publisher_id is None:
                publisher_id = imp_publisher
                _with_publisher(base, publisher_id)
            try:
                built = _with_floor(imp, info)
            except ConversionError:
                errors.append(bad_input(_BAD_FLOOR.format(imp.get("bidfloorcur"))))
                continue
            built = {**built, "ext": {"insticator": {"adUnitId": ad_unit, "publisherId": imp_publisher}}}
            groups.setdefault(ad_unit, []).append(go_media_objects(built))
        if not groups:
            return [], errors
        uri = self.app_endpoint if base.get("app") is not None and self.app_endpoint else self.endpoint
        if publisher_id:
            uri = _with_query_value(uri, "publisherId", publisher_id)
        headers = _headers(request.get("device"))
        calls = [json_call(uri, {**base, "imp": imps}, imp_ids(imps), headers) for imps in groups.values()]
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "USD")
        for seat, bids in answer.seatbids:
            for bid in bids:
                bid_type = "video" if bid.get("mtype") == 2 else "banner"
                categories = bid.get("cat") or []
                video = None
                if bid_type == "video":
                    video = {"duration": bid.get("dur", 0), "primary_category": categories[0] if categories else ""}
                result.bids.append(TypedBid(bid, bid_type, bid_meta=_meta(bid, bid_type, seat), bid_video=video))
        return result, []


def _meta(bid: dict[str, Any], bid_type: str, seat: str) -> dict[str, Any]:
    """The bid's meta as PBS-Go writes it (empty fields left out)."""
    meta: dict[str, Any] = {"mediaType": bid_type}
    set_omitempty(meta, "seat", seat)
    set_omitempty(meta, "advertiserDomains", bid.get("adomain"))
    categories = bid.get("cat") or []
    if categories:
        set_omitempty(meta, "primaryCatId", categories[0])
        set_omitempty(meta, "secondaryCatIds", categories[1:])
    return meta


def build(config: AdapterConfig) -> InsticatorAdapter:
    return InsticatorAdapter(config)

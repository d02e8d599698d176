"""Nativery adapter: one OpenRTB call per imp whose params decode, to the configured endpoint.

Every call's ``ext.nativery`` says whether the request came through AMP (``isAmp``) and carries the
first imp's ``widgetId`` param (empty when the first imp's params do not decode); the request's
other ext keys are kept. A 204 is an error: Nativery's ``X-Nativery-Error`` header when given (bad
input), else "No Content". Bids are typed by ``ext.nativery.bid_ad_media_type`` (``display``,
``banner`` and ``rich_media`` are banners) and carry its advertiser domains as meta; a bid without
a known type is reported and left out. The answer's currency is kept, EUR when it names none.
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
    bad_server_response,
)
from hbserver.adapters.common import AnswerWording, JsonShapeError, Refusal, expect_object, json_call, json_headers
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    NOT_AN_OBJECT,
    GoKind,
    decode_go_answer,
    go_field,
    go_fields,
    go_media_objects,
    go_request_top,
    go_value,
    imp_bidder_params,
)

_ANSWER_WORDING = AnswerWording(not_an_object=NOT_AN_OBJECT, body_error=BidderError)
_BID_TYPES = {"native": "native", "display": "banner", "banner": "banner", "rich_media": "banner", "video": "video"}
_BID_EXT_FIELDS = {
    "bid_ad_media_type": ("BidType", GoKind.STRING),
    "bid_adv_domains": ("BidAdvDomains", GoKind.STRINGS),
    "adv_id": ("AdvertiserId", GoKind.STRING),
    "brand_category_id": ("BrandCategory", GoKind.INT),
}


def widget_id(imp: Mapping[str, Any]) -> str:
    """The imp's ``widgetId`` param; JsonShapeError (json-iterator's words) when its params do not decode."""
    params = imp_bidder_params(imp)
    return go_value(go_field(params, "widgetId"), GoKind.STRING, "openrtb_ext.ImpExtNativery.WidgetId") or ""


def request_ext(request: Mapping[str, Any], is_amp: bool, widget: str) -> dict[str, Any]:
    """The request's ext with ``nativery`` set; JsonShapeError when the ext or its ``nativery`` do not decode."""
    ext = dict(expect_object(request.get("ext"), ""))
    nativery = ext.get("nativery")
    if nativery is not None:
        for name, value in go_fields(expect_object(nativery, ""), "isAmp", "widgetId").items():
            kind, go_name = (GoKind.BOOL, "IsAMP") if name == "isAmp" else (GoKind.STRING, "WidgetId")
            go_value(value, kind, f"nativery.bidReqExtNativery.{go_name}")
    ext["nativery"] = {"isAmp": is_amp, "widgetId": widget}
    return ext


def bid_type_and_domains(bid: Mapping[str, Any]) -> tuple[str, list[str] | None]:
    """The bid's media type and advertiser domains from its ext; BidderError when it has no known type."""
    if "ext" not in bid:
        raise _Refused(BidderError(ABSENT_OBJECT))
    try:
        ext = expect_object(bid["ext"], "")
        nativery = expect_object(go_field(ext, "nativery"), "nativery.bidExt.Nativery")
        fields: dict[str, Any] = {}
        for name, value in go_fields(nativery, *_BID_EXT_FIELDS).items():
            go_name, kind = _BID_EXT_FIELDS[name]
            fields[name] = go_value(value, kind, f"nativery.bidExtNativery.{go_name}")
    except JsonShapeError as exc:
        raise _Refused(BidderError(str(exc))) from None
    media_type = fields.get("bid_ad_media_type") or ""
    if media_type not in _BID_TYPES:
        raise _Refused(BidderError(f"unrecognized bid_ad_media_type in response from nativery: {media_type}"))
    return _BID_TYPES[media_type], fields.get("bid_adv_domains")


class _Refused(Refusal):
    """See ``common.Refusal``."""


class NativeryAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps: list[dict[str, Any]] = []
        widget = ""
        for index, imp in enumerate(request.get("imp") or ()):
            try:
                params_widget = widget_id(imp)
            except JsonShapeError as exc:
                errors.append(BidderError(str(exc)))
                continue
            if index == 0:
                widget = params_widget
            imps.append(go_media_objects(imp))
        if not imps:
            return [], errors
        try:
            ext = request_ext(request, info.entry_point == "openrtb2-amp", widget)
        except JsonShapeError as exc:
            return [], [*errors, BidderError(str(exc))]
        top = {**go_request_top(request), "ext": ext}
        calls = [json_call(self.endpoint, {**top, "imp": [imp]}, [imp.get("id", "")], self.headers) for imp in imps]
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            problem = next((v for k, v in response.headers.items() if k.lower() == "x-nativery-error"), "")
            if problem:
                return None, [bad_input(f"Nativery Error: {problem}.")]
            return None, [bad_server_response("No Content")]
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse(currency=answer.cur or "EUR")
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                bid_type, domains = bid_type_and_domains(bid)
            except _Refused as exc:
                errors.append(exc.error)
                continue
            meta: dict[str, Any] = {"mediaType": bid_type}
            if domains:
                meta["advertiserDomains"] = domains
            result.bids.append(TypedBid(bid, bid_type, bid_meta=meta))
        return result, errors


def build(config: AdapterConfig) -> NativeryAdapter:
    return NativeryAdapter(config)

"""Yandex adapter: one call per imp to ``bs-metadsp.yandex.ru/prebid/{{.PageID}}``.

The page and imp ids come from ``placement_id`` (its last two numeric ``-``-separated parts, e.g.
``R-I-123456-2``) or from the deprecated ``page_id``/``imp_id`` numbers. The call's query gains
``imp-id``, ``ssp-cur`` (the request's first currency) and ``target-ref`` (the site's page, else its
domain), re-encoded sorted as Go does. Each imp is stamped ``displaymanager: prebid.go`` 1.1; a
banner without a size takes its first format's, a video must have a size and gets default
durations (1-120) and protocols ([3]). Headers are sent only when the request has both a device and
a site. Bids are typed by their imp (video, then native, then banner); the currency is always USD.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
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
from hbserver.adapters.common import (
    AnswerWording,
    JsonShapeError,
    Refusal,
    banner_sized_by_first_format,
    first_media_type,
    json_call,
    resolve_macros,
    with_header,
)
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    ImpExtError,
    decode_go_answer,
    go_imp,
    go_request_top,
    typed_bids,
    with_query_param,
)
from hbserver.adapters.steps import ParamsSpec
from hbserver.numbers import int_or

_PARAMS = ParamsSpec.of(
    {
        "struct": "openrtb_ext.ExtImpYandex",
        "fields": {"placement_id": ["PlacementID", "string"], "page_id": ["PageID", "int"], "imp_id": ["ImpID", "int"]},
    }
)
_DISPLAY_MANAGER = {"displaymanager": "prebid.go", "displaymanagerver": "1.1"}
_VIDEO_DEFAULTS = (("minduration", 1), ("maxduration", 120), ("protocols", [3]))
_ANSWER_WORDING = AnswerWording(
    not_an_object=NOT_AN_OBJECT,
    body_text="Bad server response: &{{%!d(string={})}}",  # Go's %d of the error struct
    body_error=bad_server_response,
)
_TYPE_ORDER = ("video", "native", "banner")


@dataclass(frozen=True, slots=True)
class Placement:
    page_id: str
    imp_id: str


class _Dropped(Refusal):
    """See ``common.Refusal``."""


def placement_of(params: Mapping[str, Any]) -> Placement:
    """The page and imp ids of the params: the last two numeric parts of ``placement_id``, else
    ``page_id``/``imp_id`` as numbers. Raises _Dropped when the placement id has fewer than two."""
    placement_id = params.get("placement_id", "")
    if not placement_id:
        return Placement(str(params.get("page_id", 0)), str(params.get("imp_id", 0)))
    # strconv.Atoi of each part (no "-" is left in one)
    numeric = [part for part in placement_id.split("-") if int_or(part, None) is not None]
    if len(numeric) < 2:
        raise _Dropped(bad_input(f"invalid placement id, it must contain two parts: {placement_id}"))
    return Placement(numeric[-2], numeric[-1])


def _sized_banner(banner: Mapping[str, Any]) -> dict[str, Any]:
    if banner.get("w") and banner.get("h"):
        return dict(banner)
    sized = banner_sized_by_first_format(banner)
    if sized is None:
        raise _Dropped(bad_input("Invalid size provided for Banner"))
    return sized


def _defaulted_video(video: Mapping[str, Any]) -> dict[str, Any]:
    if not (video.get("w") and video.get("h")):
        raise _Dropped(bad_input("Invalid size provided for Video"))
    out = dict(video)
    for key, default in _VIDEO_DEFAULTS:
        if not out.get(key):
            out[key] = default
    return out


def prepared_imp(imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp as Yandex gets it (see the module docstring); _Dropped when no media type is
    supported or a banner or video has no usable size."""
    # Go decodes the imp into its struct, so a key spelt in another case is the same field
    out = {key: value for key, value in imp.items() if key.lower() not in _DISPLAY_MANAGER}
    out.update(_DISPLAY_MANAGER)
    supported = False
    if isinstance(imp.get("banner"), Mapping):
        out["banner"] = _sized_banner(imp["banner"])
        supported = True
    if isinstance(imp.get("video"), Mapping):
        out["video"] = _defaulted_video(imp["video"])
        supported = True
    if imp.get("native") is not None:
        supported = True
    if not supported:
        raise _Dropped(
            bad_input(
                "Unsupported format. Yandex only supports banner, video, and native types. "
                f"Ignoring imp id #{imp.get('id', '')}"
            )
        )
    return go_imp(out)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _referer(request: Mapping[str, Any]) -> str:
    site = request.get("site")
    if not isinstance(site, Mapping):
        return ""
    return _text(site.get("page")) or _text(site.get("domain"))


def _currency(request: Mapping[str, Any]) -> str:
    cur = request.get("cur")
    return _text(cur[0]) if isinstance(cur, list) and cur else ""


def headers_for(request: Mapping[str, Any]) -> dict[str, str]:
    """The call's headers: none unless the request has both a device and a site; then the JSON pair,
    ``X-Openrtb-Version: 2.5`` and, where not empty, the page, language, user agent and IP."""
    device, site = request.get("device"), request.get("site")
    if not isinstance(device, Mapping) or not isinstance(site, Mapping):
        return {}
    headers = {**JSON_HEADERS, "X-Openrtb-Version": "2.5"}
    with_header(headers, "Referer", _text(site.get("page")))
    with_header(headers, "Accept-Language", _text(device.get("language")))
    with_header(headers, "User-Agent", _text(device.get("ua")))
    with_header(headers, "X-Forwarded-For", _text(device.get("ip")))
    with_header(headers, "X-Real-Ip", _text(device.get("ip")))
    return headers


class YandexAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def uri(self, placement: Placement, referer: str, currency: str) -> str:
        """The endpoint with the page id filled in and the non-empty query values added (sorted)."""
        uri = resolve_macros(self.endpoint, {"PageID": placement.page_id})
        for name, value in (("target-ref", referer), ("ssp-cur", currency), ("imp-id", placement.imp_id)):
            if value:
                uri = with_query_param(uri, name, value)
        return uri

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        referer, currency = _referer(request), _currency(request)
        headers = headers_for(request)
        top = go_request_top(request)
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            imp_id = imp.get("id", "")
            try:
                params = _PARAMS.read(imp)
            except ImpExtError:
                errors.append(bad_input(f"imp {imp_id}: unable to unmarshal ext"))
                continue
            except JsonShapeError as exc:
                errors.append(bad_input(f"imp {imp_id}: unable to unmarshal ext.bidder: {exc}"))
                continue
            try:
                placement = placement_of(params)
                sent = prepared_imp(imp)
                uri = self.uri(placement, referer, currency)
            except _Dropped as dropped:
                errors.append(dropped.error)
                continue
            except ValueError as exc:  # an endpoint urlsplit cannot read
                errors.append(BidderError(str(exc)))
                continue
            calls.append(json_call(uri, {**top, "imp": [sent]}, [imp_id], headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        imps = {imp.get("id"): imp for imp in request.get("imp") or ()}
        return typed_bids(answer, partial(_typed, imps), answer_currency=False)


def _typed(imps: Mapping[Any, dict[str, Any]], bid: dict[str, Any]) -> TypedBid | BidderError:
    """The bid typed by its imp (video, native, banner in that order)."""
    imp = imps.get(bid["impid"])
    if imp is None:
        return bad_input(f"Invalid bid imp ID #{bid['impid']} does not match any imp IDs from the original bid request")
    bid_type = first_media_type(imp, _TYPE_ORDER)
    if bid_type is None:
        return bad_input(
            f"Processing an invalid impression; cannot resolve impression type for imp #{imp.get('id', '')}"
        )
    return TypedBid(bid, bid_type)


def build(config: AdapterConfig) -> YandexAdapter:
    return YandexAdapter(config)

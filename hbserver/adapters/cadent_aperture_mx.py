"""Cadent Aperture MX adapter (also serves ``emx_digital``): the whole request in one OpenRTB call to
``<endpoint>?t=<tmax or 1000>&ts=<unix time>&src=pbserver``.

Every imp needs a ``tagid`` param of digits (not zero), which becomes its ``tagid``; a positive
``bidfloor`` param (a number as text) becomes its floor in USD. Each imp is ``secure`` when the
site's page (else the app's domain or store URL) is an https URL. A video imp needs ``mimes`` and a
size (its VAST 4.0 protocol is dropped); any other imp needs a banner with a size or a format, the
first format becoming its size. One imp that fails any of this sinks the whole request. The call
carries the device's user agent, IP, language and DNT and the page as the referer. Bid ``impid``
is replaced by the bid ``id``; a bid whose markup has ``<?xml`` or ``<vast`` is video, any other a
banner.

``testing``: the Go test's switch for a fixed query (``?t=1000&ts=2060541160``).
"""

from __future__ import annotations

import math
import time
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
from hbserver.adapters.common import AnswerWording, JsonShapeError, imp_ids, json_call, json_headers
from hbserver.adapters.golike import (
    NOT_AN_OBJECT,
    GoKind,
    ImpExtError,
    decode_go_answer,
    go_media_objects,
    go_members,
    go_parse_float,
    go_request_top,
    go_value,
    imp_bidder_params,
)
from hbserver.adapters.gourl import go_url_scheme_host
from hbserver.numbers import int_or

_ANSWER_WORDING = AnswerWording(
    status="Invalid Status Returned: {}. Run with request.debug = 1 for more info",
    bad_request_is_input=False,
    not_an_object=NOT_AN_OBJECT,
    body_text="Unable to unpackage bid response. Error: {}",
)
_VAST_40 = 7
_VIDEO_MARKS = ("<?xml", "<vast")


class _Refused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.error = bad_input(message)


def read_params(imp: Mapping[str, Any]) -> tuple[str, str]:
    """(tagid, bidfloor) of the imp's params; _Refused when they do not decode or the tagid is not
    a non-zero int64 in digits."""
    imp_id = imp.get("id", "")
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Refused(str(exc)) from None
    except JsonShapeError:
        raise _Refused(f"ignoring imp id={imp_id}, invalid ImpExt") from None
    fields = {"tagid": "", "bidfloor": ""}
    try:
        for name, value in go_members(params, *fields):
            fields[name] = go_value(value, GoKind.STRING, f"openrtb_ext.ExtImpCadentApertureMX.{name}") or ""
    except JsonShapeError:
        raise _Refused(f"ignoring imp id={imp_id}, invalid ImpExt") from None
    tag_id = fields["tagid"]
    if not int_or(tag_id, 0):  # strconv.ParseInt(tag_id, 10, 64) fails or reads 0
        raise _Refused(f"ignoring imp id={imp_id}, invalid tagid must be a String of numbers")
    return tag_id, fields["bidfloor"]


def with_banner_size(imp: dict[str, Any]) -> None:
    banner = imp.get("banner")
    if not isinstance(banner, dict):
        raise _Refused("Request needs to include a Banner object")
    if banner.get("w") is not None or banner.get("h") is not None:
        return
    formats = banner.get("format") if isinstance(banner.get("format"), list) else []
    if not formats:
        raise _Refused("Need at least one size to build request")
    first = formats[0] if isinstance(formats[0], dict) else {}
    banner = {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0, "format": formats[1:]}
    if not formats[1:]:
        del banner["format"]
    imp["banner"] = banner


def with_video_checked(imp: dict[str, Any]) -> None:
    video = imp["video"] if isinstance(imp["video"], dict) else {}
    if not video.get("mimes"):
        raise _Refused("Video: missing required field mimes")
    if not video.get("h") and not video.get("w"):
        raise _Refused("Video: Need at least one size to build request")
    protocols = video.get("protocols")
    if isinstance(protocols, list) and protocols:
        kept = [protocol for protocol in protocols if protocol != _VAST_40]
        imp["video"] = {**video, "protocols": kept} if kept else {k: v for k, v in video.items() if k != "protocols"}


def prepared_imp(imp: Mapping[str, Any], secure: int) -> dict[str, Any]:
    """The imp as Cadent gets it; _Refused when it cannot be sent."""
    tag_id, floor_text = read_params(imp)
    out = dict(imp)
    out["tagid"], out["secure"] = tag_id, secure
    floor = go_parse_float(floor_text) if floor_text else None
    if floor is not None and floor > 0:
        out["bidfloor"], out["bidfloorcur"] = floor, "USD"
    if out.get("video") is not None:
        with_video_checked(out)
    else:
        with_banner_size(out)
    return go_media_objects(out)


def page_is_secure(request: Mapping[str, Any]) -> int:
    """1 when the site's page (else the app's domain, else its store URL) is an https URL."""
    site, app = request.get("site"), request.get("app")
    domain: Any = ""
    if isinstance(site, dict) and site.get("page"):
        domain = site["page"]
    elif isinstance(app, dict):
        domain = app.get("domain") or app.get("storeurl") or ""
    parsed = go_url_scheme_host(domain) if isinstance(domain, str) else None
    return int(parsed is not None and parsed[0] == "https")


def call_headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = json_headers()
    device, site = request.get("device"), request.get("site")
    if isinstance(device, dict):
        for name, key in (("User-Agent", "ua"), ("X-Forwarded-For", "ip"), ("Accept-Language", "language")):
            if isinstance(device.get(key), str) and device[key]:
                headers[name] = device[key]
        if isinstance(device.get("dnt"), int):
            headers["Dnt"] = str(device["dnt"])
    if isinstance(site, dict) and isinstance(site.get("page"), str) and site["page"]:
        headers["Referer"] = site["page"]
    return headers


def bid_type(adm: str) -> str:
    lowered = adm.lower()
    return "video" if any(mark in lowered for mark in _VIDEO_MARKS) else "banner"


class CadentApertureMxAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.testing = False

    def uri(self, request: Mapping[str, Any]) -> str:
        if self.testing:
            return f"{self.endpoint}?t=1000&ts=2060541160"
        tmax = request.get("tmax")
        timeout = tmax if isinstance(tmax, int) and not isinstance(tmax, bool) and tmax else 1000
        return f"{self.endpoint}?t={timeout}&ts={int(time.time())}&src=pbserver"

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        if not request.get("imp"):
            return [], [bad_input("No Imps in Bid Request")]
        secure = page_is_secure(request)
        imps, errors = [], []
        for imp in request["imp"]:
            try:
                imps.append(prepared_imp(imp, secure))
            except _Refused as exc:
                errors.append(exc.error)
        if errors:
            listed = " ".join(error.message for error in errors)
            return [], [*errors, bad_input(f"Error in preprocess of Imp, err: [{listed}]")]
        if any(math.isinf(imp.get("bidfloor", 0)) for imp in imps):
            return [], [bad_input("Error in packaging request to JSON")]  # Go cannot encode an infinite floor
        body = {**go_request_top(request), "imp": imps}
        return [json_call(self.uri(request), body, imp_ids(imps), call_headers(request))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        result = BidderResponse()
        for bid in answer.bids:
            result.bids.append(TypedBid({**bid, "impid": bid["id"]}, bid_type(bid.get("adm", ""))))
        return result, []


def build(config: AdapterConfig) -> CadentApertureMxAdapter:
    return CadentApertureMxAdapter(config)

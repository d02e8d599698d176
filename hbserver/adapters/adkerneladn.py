"""AdKernel ADN adapter (PBS-Go ``adapters/adkernelAdn``): adkernel's sibling for publishers.

Each imp's ``pubId`` param must be a positive integer and the imp a banner or video; an imp that
fails, or whose ext or params do not decode, is reported and left out. The others go without their
``ext``, as one media type (a banner wins; a banner without ``w`` and ``h`` takes its first format's,
that format taken off the list, or fails), grouped by ``pubId``, one OpenRTB 2.5 call per publisher
with the request without ``site.publisher``, ``site.domain`` and ``app.publisher``. The answer must
hold exactly one seatbid (adkernel's wording); a bid is a banner when its imp asked for one, else
video. USD.
"""

from __future__ import annotations

from typing import Any

from hbserver.adapters.adkernel import ANSWER_WORDING, without_publisher
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
from hbserver.adapters.common import JsonShapeError, imp_ids, json_call, json_headers, resolve_macros
from hbserver.adapters.golike import decode_go_answer, go_media_objects
from hbserver.adapters.steps import ParamsSpec

_PARAMS = ParamsSpec("openrtb_ext.ExtImpAdkernelAdn", {"pubId": ("PublisherID", "int")}, null_is_absent=True)
_OTHERS = ("video", "native", "audio")


class _Refused(Exception):
    """An imp left out; the message is PBS-Go's."""


def publisher_id(imp: dict[str, Any]) -> int:
    """The imp's ``pubId``; _Refused when its params do not decode, it is not positive or the imp is
    neither banner nor video."""
    try:
        publisher = int(_PARAMS.read(imp)["pubId"])
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    imp_id = imp.get("id", "")
    if publisher < 1:
        raise _Refused(f"Invalid pubId value. Ignoring imp id={imp_id}")
    if imp.get("video") is None and imp.get("banner") is None:
        raise _Refused(f"Invalid imp with id={imp_id}. Expected imp.banner or imp.video")
    return publisher


def compat_imp(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp as sent: no ext, one media type, a banner sized; _Refused for a banner without size
    or format."""
    out = {key: value for key, value in imp.items() if key != "ext"}
    banner = out.get("banner")
    if not isinstance(banner, dict):
        return go_media_objects({key: value for key, value in out.items() if key not in ("native", "audio")})
    if banner.get("w") is None and banner.get("h") is None:
        formats = banner.get("format") or []
        if not formats:
            raise _Refused("Expected at least one banner.format entry or explicit w/h")
        first = formats[0] if isinstance(formats[0], dict) else {}
        banner = {**banner, "format": formats[1:], "w": first.get("w") or 0, "h": first.get("h") or 0}
        if not banner["format"]:
            del banner["format"]  # Go's omitempty
    out["banner"] = banner
    return go_media_objects({key: value for key, value in out.items() if key not in _OTHERS})


def _top(request: dict[str, Any]) -> dict[str, Any]:
    """The request's top level as sent: adkernel's, ``site.domain`` left out too."""
    top = without_publisher(request)
    site = top.get("site")
    if isinstance(site, dict) and "domain" in site:
        top["site"] = {key: value for key, value in site.items() if key != "domain"}
    return top


class AdkernelAdnAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers(x_openrtb_version="2.5")

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        errors: list[BidderError] = []
        valid: list[tuple[int, dict[str, Any]]] = []
        for imp in imps:
            try:
                valid.append((publisher_id(imp), imp))
            except _Refused as refused:
                errors.append(bad_input(str(refused)))
        if not valid:
            return [], errors
        by_publisher: dict[int, list[dict[str, Any]]] = {}
        for publisher, imp in valid:
            try:
                by_publisher.setdefault(publisher, []).append(compat_imp(imp))
            except _Refused as refused:
                errors.append(bad_input(str(refused)))
        top = _top(request)
        calls = [
            json_call(
                resolve_macros(self.endpoint, {"PublisherID": str(publisher)}),
                {**top, "imp": group},
                imp_ids(group),
                self.headers,
            )
            for publisher, group in by_publisher.items()
            if group
        ]
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, ANSWER_WORDING)
        if answer is None:
            return None, failure
        if len(answer.seatbids) != 1:
            return None, [bad_server_response(f"Invalid SeatBids count: {len(answer.seatbids)}")]
        banners = {imp.get("id") for imp in request.get("imp") or () if imp.get("banner") is not None}
        bids = [TypedBid(bid, "banner" if bid["impid"] in banners else "video") for bid in answer.seatbids[0][1]]
        return BidderResponse(bids), []


def build(config: AdapterConfig) -> AdkernelAdnAdapter:
    return AdkernelAdnAdapter(config)

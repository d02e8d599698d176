"""Gamoshi adapter: banner and video imps in one OpenRTB call to ``<endpoint>/r/<supplyPartnerId>/bidr``.

Imps with neither banner nor video are dropped; their errors are reported only when no imp is left.
A banner without ``w`` and ``h`` takes the first format's size. The supply partner id comes from the
first imp sent (its params decide the endpoint for the whole call; the host's endpoint defaults to
``https://rtb.gamoshi.io``). The call says ``X-Openrtb-Version: 2.4`` and passes the device's user
agent, IP, language and DNT on as headers. Only the answer's first seatbid is read; a bid is video
when its imp asks for video, else banner; the currency is always USD.
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
from hbserver.adapters.common import JsonShapeError, expect_string, imp_ids, json_call, json_headers, with_header
from hbserver.adapters.golike import ImpExtError, go_answer, go_fields, go_imp, go_request_top, imp_bidder_params

DEFAULT_ENDPOINT = "https://rtb.gamoshi.io"
_PARAMS = "openrtb_ext.ExtImpGamoshi"


def _sized_banner(imp: dict[str, Any]) -> dict[str, Any]:
    """``imp`` with a banner lacking both ``w`` and ``h`` sized as its first format."""
    banner = imp["banner"]
    if not isinstance(banner, dict) or banner.get("w") is not None or banner.get("h") is not None:
        return imp
    formats = banner.get("format")
    if not isinstance(formats, list) or not formats:
        return imp
    first = formats[0] if isinstance(formats[0], dict) else {}
    return {**imp, "banner": {**banner, "w": first.get("w") or 0, "h": first.get("h") or 0}}


def supply_partner_id(imp: Mapping[str, Any]) -> str:
    """The imp's ``supplyPartnerId``; raises _Refused in Gamoshi's words when it cannot be read."""
    try:
        fields = go_fields(imp_bidder_params(imp), "supplyPartnerId", "favoredMediaType")
        partner = expect_string(fields.get("supplyPartnerId"), f"{_PARAMS}.SupplyPartnerId")
        expect_string(fields.get("favoredMediaType"), f"{_PARAMS}.FavoredMediaType")
    except ImpExtError:
        raise _Refused(bad_input("ext.bidder not provided")) from None
    except JsonShapeError:
        raise _Refused(bad_input("ext.bidder.supplyPartnerId not provided")) from None
    if not partner:
        raise _Refused(bad_input("supplyPartnerId is empty"))
    return partner


class _Refused(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _device_headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = json_headers(x_openrtb_version="2.4")
    device = request.get("device")
    if not isinstance(device, dict):
        return headers
    for name, key in (("User-Agent", "ua"), ("X-Forwarded-For", "ip"), ("Accept-Language", "language")):
        if isinstance(device.get(key), str):
            with_header(headers, name, device[key])
    dnt = device.get("dnt")
    if isinstance(dnt, int) and not isinstance(dnt, bool):
        with_header(headers, "DNT", str(dnt))
    return headers


class GamoshiAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint or DEFAULT_ENDPOINT

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp")
        if not isinstance(imps, list) or not imps:
            return [], [bad_input("No impressions in the bid request")]
        kept: list[dict[str, Any]] = []
        dropped: list[BidderError] = []
        for imp in imps:
            imp = imp if isinstance(imp, dict) else {}
            if imp.get("banner") is not None:
                kept.append(_sized_banner(imp))
            elif imp.get("video") is not None:
                kept.append(imp)
            else:
                message = f"Gamoshi only supports banner and video media types. Ignoring imp id={imp.get('id', '')}"
                dropped.append(bad_input(message))
        if not kept:
            return [], [*dropped, bad_input("No valid impression in the bid request")]
        try:
            partner = supply_partner_id(kept[0])
        except _Refused as refusal:
            return [], [refusal.error]
        uri = f"{self.endpoint}/r/{partner}/bidr?bidder=prebid-server"
        body = {**go_request_top(request), "imp": [go_imp(imp) for imp in kept]}
        return [json_call(uri, body, imp_ids(kept), _device_headers(request))], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status == 400:
            return None, [bad_input("Unexpected status code: 400. ")]
        if response.status != 200:
            message = f"unexpected status code: {response.status}. Run with request.debug = 1 for more info"
            return None, [bad_server_response(message)]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(f"bad server response: {exc}. ")]
        if not answer.seatbids:
            return None, []  # PBS-Go reads the first seatbid without a check (a recovered panic: no bids)
        result = BidderResponse()
        for bid in answer.seatbids[0][1]:
            result.bids.append(TypedBid(bid, _bid_type(bid.get("impid"), request)))
        return result, []


def _bid_type(imp_id: Any, request: Mapping[str, Any]) -> str:
    """Video when the bid's imp asks for video, else banner."""
    for imp in request.get("imp") or ():
        if isinstance(imp, dict) and imp.get("id") == imp_id:
            return "video" if imp.get("video") is not None else "banner"
    return "banner"


def build(config: AdapterConfig) -> GamoshiAdapter:
    return GamoshiAdapter(config)

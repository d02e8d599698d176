"""Admixer adapter: every imp in one OpenRTB call to the configured endpoint.

Per imp: ``zone`` (32 to 36 bytes, a UUID) becomes ``tagid``, ``customFloor`` the floor when the imp
has none, and the ext is replaced by ``{"customParams": ...}`` (none without custom params). One
imp that fails fails the request (PBS-Go sends nothing when any imp has an error). Failure statuses
are worded by range (5xx, 4xx, other). An answer whose first seatbid has no bids is no answer. Bids
are typed by their imp: banner, video, native, audio, else banner.
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
from hbserver.adapters.common import JsonShapeError, expect_object, imp_bid_type, json_call
from hbserver.adapters.golike import (
    GoKind,
    ImpExtError,
    go_answer,
    go_fields,
    go_typed_request,
    go_value,
    imp_bidder_params,
)

_STRUCT = "openrtb_ext.ExtImpAdmixer"


def _params(imp: Mapping[str, Any]) -> tuple[str, float, dict[str, Any] | None]:
    """(zone, customFloor, customParams) of the imp; BidderError (bad input) when they do not decode."""
    try:
        params = imp_bidder_params(imp)
    except ImpExtError as exc:
        raise _Dropped(bad_input(str(exc))) from None
    except JsonShapeError:
        raise _Dropped(bad_input("Wrong Admixer bidder ext")) from None
    fields = go_fields(params, "zone", "customFloor", "customParams")
    try:
        zone = go_value(fields.get("zone"), GoKind.STRING, f"{_STRUCT}.ZoneId") or ""
        floor = go_value(fields.get("customFloor"), GoKind.FLOAT, f"{_STRUCT}.CustomBidFloor") or 0
        custom = fields.get("customParams")
        custom = None if custom is None else expect_object(custom, f"{_STRUCT}.CustomParams")
    except JsonShapeError:
        raise _Dropped(bad_input("Wrong Admixer bidder ext")) from None
    return zone, floor, custom


class _Dropped(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def imp_as_sent(imp: dict[str, Any]) -> dict[str, Any]:
    """The imp with its ``tagid``, floor and ext from its params; _Dropped when it cannot be sent."""
    zone, floor, custom = _params(imp)
    if not 32 <= len(zone.encode()) <= 36:
        raise _Dropped(bad_input("ZoneId must be UUID/GUID"))
    out = {key: value for key, value in imp.items() if key != "ext"}
    out["tagid"] = zone
    if not imp.get("bidfloor") and floor > 0:
        out["bidfloor"] = floor
    if custom is not None:
        out["ext"] = {"customParams": custom}
    return out


def status_error(status: int) -> BidderError | None:
    """None for 200 (and 204, no bids); Admixer's wording of any other status."""
    if status in (200, 204):
        return None
    if status >= 500:
        return bad_server_response(f"Unexpected status code: {status}. Dsp server internal error")
    if status >= 400:
        return bad_input(f"Unexpected status code: {status}. Bad request to dsp")
    return bad_server_response(f"Unexpected status code: {status}")


class AdmixerAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impressions in request")]
        sent: list[dict[str, Any]] = []
        errors: list[BidderError] = []
        for imp in imps:
            try:
                sent.append(imp_as_sent(imp))
            except _Dropped as dropped:
                errors.append(dropped.error)
        if errors:
            return [], errors
        body = go_typed_request({**request, "imp": sent})
        return [json_call(self.endpoint, body, [imp.get("id", "") for imp in sent], JSON_HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = status_error(response.status)
        if failure is not None:
            return None, [failure]
        if response.status == 204:
            return None, []
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [BidderError(str(exc))]
        if not answer.seatbids or not answer.seatbids[0][1]:
            return None, []
        imps = request.get("imp") or ()
        return BidderResponse([TypedBid(bid, imp_bid_type(imps, bid["impid"]) or "banner") for bid in answer.bids]), []


def build(config: AdapterConfig) -> AdmixerAdapter:
    return AdmixerAdapter(config)

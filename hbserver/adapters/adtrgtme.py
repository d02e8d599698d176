"""Adtrgtme adapter: one OpenRTB call per imp to ``<endpoint>?s=<site_id>&prebid``, the imp's ext
left out.

Calls carry ``X-Openrtb-Version: 2.5`` and the device's ``User-Agent`` and IPs. Every failure status
is bad input, each with Adtrgtme's own text; an answer that does not decode or has no seatbid is an
error. Only banner imps are bid on: a bid for another imp type, or for an unknown imp, fails the
whole answer.
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
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import decode_go_answer, go_field, go_imp, go_request_top, imp_bidder_params
from hbserver.adapters.steps import HEADER_SETS

_UINT64_MAX = 2**64 - 1


def site_id(imp: Mapping[str, Any]) -> int:
    """``site_id`` as Go's uint64 takes it (0 when absent or null); _NoParams otherwise."""
    try:
        value = go_field(imp_bidder_params(imp), "site_id")
    except JsonShapeError:
        raise _NoParams from None
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _UINT64_MAX:
        raise _NoParams
    return value


class _NoParams(Exception):
    """The imp's ext or params do not decode."""


def status_error(status: int) -> BidderError | None:
    """None for 200; Adtrgtme's text (all bad input) for any other status."""
    if status == 200:
        return None
    if status == 400:
        return bad_input("Unexpected status code: [ 400 ]")
    if status == 503:
        return bad_input("Something went wrong, please contact your Account Manager. Status Code: [ 503 ] ")
    return bad_input(f"Unexpected status code: [ {status} ]. Run with request.debug = 1 for more info")


def _bid_type(imps: Any, imp_id: str) -> str:
    for imp in imps or ():
        if imp.get("id") == imp_id:
            if imp.get("banner") is not None:
                return "banner"
            raise _Untyped(bad_input(f'Unsupported bidtype for bid: "{imp_id}"'))
    raise _Untyped(bad_input(f'Failed to find impression: "{imp_id}"'))


class _Untyped(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


class AdtrgtmeAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        headers: dict[str, str] = {}
        for name in ("json", "openrtb_25", "device"):
            HEADER_SETS[name](headers, request)
        top = go_request_top(request)
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in request.get("imp") or ():
            try:
                site = site_id(imp)
            except _NoParams:
                errors.append(bad_input("ext.bidder not provided"))
                continue
            sent = go_imp({key: value for key, value in imp.items() if key != "ext"})
            uri = f"{self.endpoint}?s={site}&prebid"
            calls.append(json_call(uri, {**top, "imp": [sent]}, [sent.get("id", "")], headers))
        return calls, errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        failure = status_error(response.status)
        if failure is not None:
            return None, [failure]
        answer, problems = decode_go_answer(response)
        if answer is None:
            return None, [bad_server_response("Bad Server Response")] if problems else []
        if not answer.seatbids:
            return None, [bad_server_response("Empty SeatBid array")]
        result = BidderResponse(currency=answer.cur or "USD")
        try:
            for bid in answer.bids:
                result.bids.append(TypedBid(bid, _bid_type(request.get("imp"), bid["impid"])))
        except _Untyped as untyped:
            return None, [untyped.error]
        return result, []


def build(config: AdapterConfig) -> AdtrgtmeAdapter:
    return AdtrgtmeAdapter(config)

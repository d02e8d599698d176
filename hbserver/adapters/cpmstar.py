"""CPMStar adapter: the whole request in one call to the configured endpoint, each imp's params moved
from ``imp.ext.bidder`` up into ``imp.ext`` itself (its other keys kept). Only banner and video imps
are taken: any other imp, or one without ``ext.bidder``, refuses the whole request.

Answers: 204 and an answer without seatbids mean no bids; bids are typed by their imp (banner, else
video, else banner) and a bid for no imp is dropped with an error. Prices are in USD.
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
from hbserver.adapters.common import JsonShapeError, expect_object, imp_ids, json_call
from hbserver.adapters.golike import ABSENT_OBJECT, go_answer, go_media_objects, go_request_top

_HEADERS = {"Content-Type": "application/json;charset=utf-8"}
_FLOAT_EXACT = 2**53


class _Refused(Exception):
    """An imp that refuses the whole request; the message is PBS-Go's."""


def _as_go_interface(value: Any) -> Any:
    """A JSON value decoded into Go's ``interface{}`` and written again: numbers become float64."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT_EXACT:
        return float(value)
    if isinstance(value, list):
        return [_as_go_interface(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_go_interface(item) for key, item in value.items()}
    return value


def flattened_ext(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext`` with ``bidder`` replaced by its own keys; _Refused (PBS-Go's words) when the ext or
    its ``bidder`` is no object, it has no ``bidder`` or the imp is neither banner nor video."""
    try:
        ext = expect_object(imp["ext"], "") if "ext" in imp else None
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    if ext is None:
        raise _Refused(ABSENT_OBJECT)
    if "bidder" not in ext:
        raise _Refused("bidder field not found in impression extension")
    if imp.get("banner") is None and imp.get("video") is None:
        raise _Refused("Only Banner and Video bid-types are supported at this time")
    try:
        params = expect_object(ext["bidder"], "")
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None
    flat = {key: value for key, value in ext.items() if key != "bidder"}
    flat.update(_as_go_interface(params))
    return flat


class CpmstarAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No Imps in Bid Request")]
        try:
            sent = [go_media_objects({**imp, "ext": flattened_ext(imp)}) for imp in imps]
        except _Refused as refused:
            return [], [bad_input(str(refused))]
        return [json_call(self.endpoint, {**go_request_top(request), "imp": sent}, imp_ids(imps), _HEADERS)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        if response.status == 204:
            return None, []
        if response.status != 200:
            return None, [
                bad_server_response(
                    f"Unexpected HTTP status code: {response.status}. Run with request.debug = 1 for more info"
                )
            ]
        try:
            answer = go_answer(response.body)
        except JsonShapeError as exc:
            return None, [bad_server_response(str(exc))]
        if not answer.seatbids:
            return None, []
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            imp = next((imp for imp in request.get("imp") or () if imp.get("id") == bid["impid"]), None)
            if imp is None:
                errors.append(bad_server_response(f"bid id='{bid['id']}' could not find valid impid='{bid['impid']}'"))
                continue
            kind = "video" if imp.get("banner") is None and imp.get("video") is not None else "banner"
            result.bids.append(TypedBid(bid, kind))
        return result, errors


def build(config: AdapterConfig) -> CpmstarAdapter:
    return CpmstarAdapter(config)
